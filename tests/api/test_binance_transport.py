"""The Binance transport against the loopback fake: no signature, key or secret in any log at any
level; after a 429 or 418 with Retry-After nothing goes to that host until the time has passed (each
call answered at once with the seconds left); failures mapped by Binance's error code."""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator
from decimal import Decimal

import pytest

from svc_api.exchange.binance import BinanceExchange
from svc_api.exchange.interface import (
    Credentials,
    ExchangeRejected,
    ExchangeUnavailable,
    InvalidCredentials,
    OcoRequest,
    Refused,
)
from tests.api.fakes.binance import KEY, SECRET, BinanceFake, running_binance

CREDS = Credentials(KEY, SECRET)
OCO = "/api/v3/orderList/oco"


@pytest.fixture
def fake() -> Iterator[BinanceFake]:
    with running_binance() as running:
        yield running


class Clock:
    """A monotonic clock that moves only when told."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _oco(cid: str = "svc-transport-0001", quantity: str = "0.01000") -> OcoRequest:
    prices = (Decimal("63000.00"), Decimal("57000.00"), Decimal("56943.00"))
    return OcoRequest("BTCUSDT", "SELL", Decimal(quantity), *prices, cid)


def test_no_signature_key_or_secret_reaches_a_log(
    fake: BinanceFake, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    exchange = BinanceExchange(fake.url, fake.url, timeout=2.0)
    exchange.key_info(CREDS)
    exchange.balances(CREDS)
    placed = exchange.place_oco(CREDS, _oco())
    fake.fill(placed.client_order_id, "STOP_LOSS_LIMIT")
    exchange.find_order_list(CREDS, placed.client_order_id)
    exchange.incoming_transfers(CREDS, 1_790_000_000)
    fake.fail_next("server_error")
    with pytest.raises(ExchangeUnavailable):
        exchange.balances(CREDS)
    with pytest.raises(InvalidCredentials):
        exchange.balances(Credentials(KEY, "x" * 64))
    logged = [r.getMessage() + (r.exc_text or "") for r in caplog.records] + [caplog.text]
    requests = [m for m in logged if "HTTP Request: GET" in m and "/api/v3/account?" in m]
    assert requests and all("signature=[redacted]" in m for m in requests)  # logged, and redacted
    for text in logged:
        assert SECRET not in text and "x" * 64 not in text and KEY not in text
        assert not re.search(r"signature=(?!\[redacted\])", text), text


@pytest.mark.parametrize(("kind", "wait"), [("rate_limit", 7.0), ("banned", 120.0)])
def test_after_retry_after_nothing_goes_to_that_host_until_it_passed(
    fake: BinanceFake, kind: str, wait: float
) -> None:
    clock = Clock()
    exchange = BinanceExchange(fake.url, fake.url, timeout=2.0, monotonic=clock)
    exchange.key_info(CREDS)  # the clock offset is known
    fake.fail_next(kind)
    with pytest.raises(ExchangeUnavailable) as first:
        exchange.balances(CREDS)
    assert first.value.retry_after == wait
    fake.requests.clear()
    clock.now += wait - 2
    with pytest.raises(ExchangeUnavailable) as signed:
        exchange.balances(CREDS)
    with pytest.raises(ExchangeUnavailable) as public:
        exchange.last_price("BTCUSDT")
    with pytest.raises(ExchangeUnavailable) as order:
        exchange.place_oco(CREDS, _oco())
    assert [e.value.retry_after for e in (signed, public, order)] == [2.0, 2.0, 2.0]
    assert fake.requests == [] and fake.order_lists == {}
    clock.now += 2.5
    assert exchange.balances(CREDS)["spot"]["BTC"] == Decimal("0.5")
    assert fake.requests[0] == "/api/v3/account"


def test_a_pause_holds_only_the_host_that_asked_for_it(fake: BinanceFake) -> None:
    clock = Clock()
    futures = fake.url.replace("127.0.0.1", "localhost")  # another host name for the futures API
    exchange = BinanceExchange(fake.url, futures, timeout=2.0, monotonic=clock)
    fake.fail_next("rate_limit", path="/fapi/v2/balance")
    assert exchange.balances(CREDS)["futures"] == {}  # documented: unreadable futures, an empty map
    fake.requests.clear()
    clock.now += 5
    wallets = exchange.balances(CREDS)
    assert (wallets["spot"]["USDT"], wallets["futures"]) == (Decimal("1000"), {})
    assert "/fapi/v2/balance" not in fake.requests and "/api/v3/account" in fake.requests
    clock.now += 3
    assert exchange.balances(CREDS)["futures"] == {"USDT": Decimal("100.0")}


@pytest.mark.parametrize(
    ("status", "code", "msg", "kind", "duplicate"),
    [
        (400, -2010, "Account has insufficient balance for requested action.", Refused, False),
        (400, -2010, "Order would immediately match and take.", Refused, False),
        (400, -2010, "Duplicate order sent.", Refused, True),
        (400, -1013, "Filter failure: NOTIONAL", Refused, False),
        (400, -1013, "Duplicate order sent.", Refused, False),  # a duplicate is -2010 only
        (400, -1102, "Mandatory parameter 'quantity' was not sent.", ExchangeRejected, False),
        (400, -1121, "Invalid symbol.", ExchangeRejected, False),
        (400, -1007, "Timeout waiting for response from backend server.", ExchangeUnavailable, None),
        (503, -1008, "Server is currently overloaded with other requests.", ExchangeUnavailable, None),
        (400, -1000, "An unknown error occurred while processing the request.", ExchangeUnavailable, None),
        (403, -1, "WAF limit", ExchangeUnavailable, None),
        (401, -2015, "Invalid API-key, IP, or permissions for action.", InvalidCredentials, None),
    ],
)
def test_failures_map_by_binance_error_code(
    fake: BinanceFake, status: int, code: int, msg: str, kind: type[Exception], duplicate: bool | None
) -> None:
    exchange = BinanceExchange(fake.url, fake.url, timeout=2.0)
    fake.answer_next(status, code, msg, path=OCO)
    with pytest.raises(kind) as failed:
        exchange.place_oco(CREDS, _oco())
    assert type(failed.value) is kind
    if isinstance(failed.value, ExchangeRejected):
        assert (failed.value.code, failed.value.duplicate) == (code, duplicate)
        assert str(failed.value) == f"{msg} (code {code})"
    assert fake.order_lists == {}


def test_an_order_the_balance_does_not_cover_is_refused(fake: BinanceFake) -> None:
    with pytest.raises(Refused) as refused:
        BinanceExchange(fake.url, fake.url, timeout=2.0).place_oco(CREDS, _oco(quantity="0.60000"))
    assert (refused.value.code, refused.value.duplicate) == (-2010, False)
    assert str(refused.value) == "Account has insufficient balance for requested action. (code -2010)"


def test_an_unknown_symbol_is_a_lookup_error_and_other_refusals_are_not(fake: BinanceFake) -> None:
    exchange = BinanceExchange(fake.url, fake.url, timeout=2.0)
    with pytest.raises(LookupError):
        exchange.symbol_rules("NOPEUSDT")
    with pytest.raises(LookupError):
        exchange.last_price("NOPEUSDT")
    fake.answer_next(400, -1100, "Illegal characters found in parameter 'symbol'.")
    with pytest.raises(ExchangeRejected):
        exchange.symbol_rules("ETHUSDT")
    fake.fail_next("malformed")
    with pytest.raises(ExchangeUnavailable):
        exchange.symbol_rules("ETHUSDT")
    assert exchange.symbol_rules("ETHUSDT").step_size == Decimal("0.0001")
