"""The exchange domain on Binance (``EXCHANGE=binance`` against the loopback fake), through HTTP, on
SQLite and PostgreSQL: a filled OCO reads FILLED in the order history, a spot-only key reads its
balances, an order the exchange turns down is a 400 and one it rejects otherwise a 502 (the key freed
both times), trading rules that cannot be read are a 503 with a message, and neither a refused
payment key nor a refused look-up stops the reconciler's pass."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

import pytest

from svc_api.core.clock import ManualClock
from svc_api.exchange import service as exchange
from svc_api.exchange.placement import UNSEEN_AFTER
from svc_api.settings import Settings
from tests.api.conftest import SIGNALS_T0
from tests.api.fakes.binance import KEY, SECRET, BinanceFake, running_binance

OCO = "/api/v3/orderList/oco"
ORDER = {
    "symbol": "BTCUSDT",
    "side": "BUY",
    "quantity": "0.01000",
    "take_profit_price": "63000.00",
    "stop_loss_price": "57000.00",
    "order_source": "manual",
    "idempotency_key": "binance-order-00001",
}


@pytest.fixture
def fake() -> Iterator[BinanceFake]:
    with running_binance() as running:
        yield running


@pytest.fixture
def bapi(settings: Settings, make_api: Any, fake: BinanceFake) -> Any:
    on_binance = settings.replace(
        exchange="binance",
        binance_api_url=fake.url,
        binance_futures_url=fake.url,
        exchange_poll_seconds=0,
    )
    return make_api(on_binance, clock=ManualClock(SIGNALS_T0))


def _trader(api: Any) -> str:
    token = str(api.register()["session_token"])
    linked = api.user("exchange_link", {"api_key": KEY, "api_secret": SECRET}, token=token)
    assert linked.status_code == 200, linked.text
    return token


def _data(reply: Any) -> Any:
    assert reply.status_code == 200, reply.text
    return reply.json()["data"]


def _history(api: Any, token: str) -> list[tuple[str, str]]:
    orders = _data(api.user("order_history", token=token))["orders"]
    return [(o["idempotency_key"], o["exchange_order_status"]) for o in orders]


def test_a_filled_oco_reads_filled_in_the_order_history(bapi: Any, fake: BinanceFake) -> None:
    token = _trader(bapi)
    placed = _data(bapi.user("exchange_order", ORDER, token=token))
    assert placed["status"] == "submitted"
    assert [o["type"] for o in placed["orders"]] == ["STOP_LOSS_LIMIT", "LIMIT_MAKER"]
    services = bapi.app.state.services
    bapi.clock.advance(30)
    exchange.run_reconciler(services)
    assert _history(bapi, token) == [(ORDER["idempotency_key"], "NEW")]
    fake.fill(placed["client_order_id"], "LIMIT_MAKER")
    bapi.clock.advance(30)
    assert exchange.run_reconciler(services) == 1
    assert _history(bapi, token) == [(ORDER["idempotency_key"], "FILLED")]
    assert _data(bapi.user("order_history", {"status": "CANCELED"}, token=token))["orders"] == []


def test_a_spot_only_key_reads_its_balances(bapi: Any, fake: BinanceFake) -> None:
    token = _trader(bapi)
    fake.futures_enabled = False  # the futures API answers -2015 to this key
    wallets = _data(bapi.user("exchange_balance", token=token))
    assert wallets == {"spot": {"BTC": 0.5, "USDT": 1000.0}, "futures": {}, "funding": {"USDT": 25.5}}


def test_refused_and_rejected_orders_place_nothing_and_free_the_key(bapi: Any, fake: BinanceFake) -> None:
    token = _trader(bapi)
    fake.answer_next(400, -2010, "Account has insufficient balance for requested action.", path=OCO)
    refused = bapi.user("exchange_order", ORDER, token=token)
    assert (refused.status_code, refused.json()["message"]) == (
        400,
        "the exchange refused the order: Account has insufficient balance for requested action. (code -2010)",
    )
    fake.answer_next(400, -1013, "Filter failure: PERCENT_PRICE_BY_SIDE", path=OCO)
    filtered = bapi.user("exchange_order", ORDER, token=token)
    assert (filtered.status_code, filtered.json()["message"]) == (
        400,
        "the exchange refused the order: Filter failure: PERCENT_PRICE_BY_SIDE (code -1013)",
    )
    fake.answer_next(400, -1102, "Mandatory parameter 'quantity' was not sent.", path=OCO)
    rejected = bapi.user("exchange_order", ORDER, token=token)
    assert (rejected.status_code, rejected.json()["error"]) == (502, "exchange_rejected")
    assert _history(bapi, token) == [] and fake.order_lists == {}
    assert _data(bapi.user("exchange_order", ORDER, token=token))["status"] == "submitted"


def test_unreadable_trading_rules_are_a_503_with_a_message(bapi: Any, fake: BinanceFake) -> None:
    token = _trader(bapi)
    preview = {k: v for k, v in ORDER.items() if k != "idempotency_key"}
    for _ in range(2):  # an outage, not one lost answer
        fake.fail_next("server_error", path="/api/v3/exchangeInfo")
    down = bapi.user("exchange_order_preview", preview, token=token)
    assert (down.status_code, down.json()["reason"]) == (503, "exchange_unavailable")
    assert down.json()["message"].startswith(
        "the trading rules of BTCUSDT could not be read from the exchange"
    )
    fake.failures.clear()
    fake.fail_next("rate_limit", path="/api/v3/exchangeInfo")  # 429, Retry-After: 7
    limited = bapi.user("exchange_order", ORDER, token=token)
    assert (limited.status_code, limited.headers["Retry-After"]) == (503, "7")
    paused = bapi.user("exchange_order", ORDER, token=token)  # nothing sent meanwhile
    assert paused.status_code == 503 and 1 <= int(paused.headers["Retry-After"]) <= 7
    assert _history(bapi, token) == []


def test_a_refused_payment_key_does_not_stop_the_reconciler(
    bapi: Any, fake: BinanceFake, caplog: pytest.LogCaptureFixture
) -> None:
    token = _trader(bapi)
    services = bapi.app.state.services
    services.settings = services.settings.replace(
        payment_exchange_key="x" * 64, payment_exchange_secret="y" * 64
    )
    fake.fail_next("error_after_accept", path=OCO)  # placed, but the answer is a 502
    assert _data(bapi.user("exchange_order", ORDER, token=token))["status"] == "processing"
    bapi.clock.advance(30)
    with caplog.at_level(logging.ERROR, logger="svc_api.exchange.usdt"):
        assert exchange.run_reconciler(services) == 1
    assert "the exchange refused to list the payment account's deposits" in caplog.text
    assert "y" * 64 not in caplog.text and "x" * 64 not in caplog.text
    settled = _data(bapi.user("exchange_order", ORDER, token=token))
    assert (settled["status"], settled["idempotent_replay"]) == ("submitted", True)
    assert _history(bapi, token) == [(ORDER["idempotency_key"], "NEW")]


def test_a_refused_look_up_leaves_that_order_and_the_pass_goes_on(bapi: Any, fake: BinanceFake) -> None:
    token = _trader(bapi)
    fake.fail_next("error_after_accept", path=OCO)
    assert _data(bapi.user("exchange_order", ORDER, token=token))["status"] == "processing"
    services = bapi.app.state.services
    bapi.clock.advance(30)
    fake.answer_next(401, -2015, "Invalid API-key, IP, or permissions for action.", path="/api/v3/orderList")
    assert exchange.run_reconciler(services) == 0
    assert _history(bapi, token) == [(ORDER["idempotency_key"], "PROCESSING")]
    bapi.clock.advance(30)
    assert exchange.run_reconciler(services) == 1
    assert _history(bapi, token) == [(ORDER["idempotency_key"], "NEW")]


def test_an_exchange_that_does_not_answer_never_fails_an_order(bapi: Any, fake: BinanceFake) -> None:
    token = _trader(bapi)
    fake.fail_next("error_after_accept", path=OCO)  # placed, but the answer is a 502
    assert _data(bapi.user("exchange_order", ORDER, token=token))["status"] == "processing"
    services = bapi.app.state.services
    bapi.clock.advance(UNSEEN_AFTER + 30)  # long enough to call an order the exchange lacks failed
    fake.fail_next("server_error", path="/api/v3/orderList")
    assert exchange.run_reconciler(services) == 0
    assert _history(bapi, token) == [(ORDER["idempotency_key"], "PROCESSING")]
    bapi.clock.advance(30)
    assert exchange.run_reconciler(services) == 1
    assert _history(bapi, token) == [(ORDER["idempotency_key"], "NEW")]


def test_the_reconciler_reads_an_accounts_working_orders_at_once(bapi: Any, fake: BinanceFake) -> None:
    token = _trader(bapi)
    keys = [f"binance-order-{n:05d}" for n in range(2, 6)]
    placed = [_data(bapi.user("exchange_order", {**ORDER, "idempotency_key": k}, token=token)) for k in keys]
    services = bapi.app.state.services
    bapi.clock.advance(30)
    fake.requests.clear()
    assert exchange.run_reconciler(services) == 0  # four working OCOs: one request (weight 6, not 4 x 4)
    assert fake.requests == ["/api/v3/openOrderList"]
    fake.fill(placed[1]["client_order_id"], "STOP_LOSS_LIMIT")
    bapi.clock.advance(30)
    fake.requests.clear()
    assert exchange.run_reconciler(services) == 1  # the filled one, no longer working, looked up alone
    assert sorted(fake.requests) == sorted(
        ["/api/v3/openOrderList", "/api/v3/orderList", "/api/v3/order", "/api/v3/order"]
    )
    statuses = dict(_history(bapi, token))
    assert [statuses[k] for k in keys] == ["NEW", "FILLED", "NEW", "NEW"]
