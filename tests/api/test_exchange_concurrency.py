"""Orders under concurrency and lost answers, on SQLite and PostgreSQL: 20 concurrent
``exchange_order`` calls with one key put exactly one OCO on the exchange; an OCO the exchange
accepted while the answer was lost ends ``submitted`` through the reconciler, never placed twice; one
it never received ends ``failed``, and nothing is placed."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
import sqlalchemy as sa

from svc_api.exchange import service as exchange
from svc_api.exchange.interface import ExchangeUnavailable
from svc_api.exchange.paper import PaperExchange
from svc_api.exchange.placement import UNSEEN_AFTER
from svc_api.exchange.tables import paper_orders
from tests.api.exchange_helpers import linked_trader, live_signal, order_of


@pytest.fixture
def xapi(sig_api: Any, cli_env: None) -> Any:
    return sig_api


def _lists(api: Any) -> int:
    with api.app.state.services.store.read() as conn:
        return int(conn.execute(sa.select(sa.func.count()).select_from(paper_orders)).scalar_one())


def test_twenty_concurrent_orders_with_one_key_place_one_oco(xapi: Any) -> None:
    _, token, _ = linked_trader(xapi)
    body = order_of(live_signal(xapi, token), "concurrent-key-000001")
    with ThreadPoolExecutor(10) as pool:
        replies = list(pool.map(lambda _: xapi.user("exchange_order", body, token=token), range(20)))
    assert {r.status_code for r in replies} == {200}
    statuses = sorted(r.json()["data"]["status"] for r in replies)
    assert set(statuses) <= {"submitted", "processing"} and "submitted" in statuses
    assert _lists(xapi) == 1
    assert (
        sum(
            1
            for r in replies
            if not r.json()["data"].get("idempotent_replay") and r.json()["data"]["status"] == "submitted"
        )
        == 1
    )


def test_an_answer_lost_after_acceptance_is_settled_by_the_reconciler_once(
    xapi: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, token, _ = linked_trader(xapi)
    body = order_of(live_signal(xapi, token), "lost-answer-key-00001")
    real = PaperExchange.place_oco

    def accepted_then_timed_out(self: Any, creds: Any, order: Any) -> Any:
        real(self, creds, order)
        raise ExchangeUnavailable("read timed out")

    monkeypatch.setattr(PaperExchange, "place_oco", accepted_then_timed_out)
    first = xapi.user("exchange_order", body, token=token).json()["data"]
    assert (first["status"], first["idempotency_key"]) == ("processing", body["idempotency_key"])
    again = xapi.user("exchange_order", body, token=token).json()["data"]
    assert again["status"] == "processing"
    [record] = xapi.user("order_history", token=token).json()["data"]["orders"]
    assert record["exchange_order_status"] == "PROCESSING"
    services = xapi.app.state.services
    xapi.clock.advance(30)
    assert exchange.run_reconciler(services) >= 1
    settled = xapi.user("exchange_order", body, token=token).json()["data"]
    assert (settled["status"], settled["idempotent_replay"], len(settled["orders"])) == ("submitted", True, 2)
    assert _lists(xapi) == 1
    [record] = xapi.user("order_history", token=token).json()["data"]["orders"]
    assert (record["exchange_order_status"], record["order_id"]) == ("NEW", settled["order_list_id"])


def test_an_order_the_exchange_never_received_fails_and_places_nothing(
    xapi: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, token, _ = linked_trader(xapi)
    body = order_of(live_signal(xapi, token), "never-received-00001")

    def timed_out(self: Any, creds: Any, order: Any) -> Any:
        raise ExchangeUnavailable("connect timed out")

    monkeypatch.setattr(PaperExchange, "place_oco", timed_out)
    assert xapi.user("exchange_order", body, token=token).json()["data"]["status"] == "processing"
    monkeypatch.undo()
    services = xapi.app.state.services
    xapi.clock.advance(30)
    exchange.run_reconciler(services)
    assert xapi.user("exchange_order", body, token=token).json()["data"]["status"] == "processing"
    xapi.clock.advance(UNSEEN_AFTER)
    exchange.run_reconciler(services)
    final = xapi.user("exchange_order", body, token=token).json()["data"]
    assert final == {
        "status": "failed",
        "idempotency_key": body["idempotency_key"],
        "message": "the exchange never received this order; nothing was placed",
    }
    assert _lists(xapi) == 0
    assert xapi.user("order_history", {"status": "FAILED"}, token=token).json()["data"]["count"] == 1


def test_paper_legs_fill_as_candles_arrive_and_the_balance_follows(xapi: Any) -> None:
    _, token, _ = linked_trader(xapi)
    signal = live_signal(xapi, token)
    body = order_of(signal, "fill-key-000000000001", entry_price=None)
    body.pop("entry_price")
    placed = xapi.user("exchange_order", body, token=token).json()["data"]
    services = xapi.app.state.services
    for _ in range(24 * 60):
        xapi.clock.advance(3600)
        exchange.run_reconciler(services)
        [record] = xapi.user("order_history", token=token).json()["data"]["orders"]
        if record["exchange_order_status"] != "NEW":
            break
    assert record["exchange_order_status"] == "FILLED"
    qty = float(placed["quantity"])
    spot = xapi.user("exchange_balance", token=token).json()["data"]["spot"]
    assert spot["BTC"] == pytest.approx(1 - qty)
    proceeds = spot["USDT"] - 10000
    low, high = qty * float(placed["stop_loss_price"]) * 0.998, qty * float(placed["take_profit_price"])
    assert low <= proceeds <= high + 1e-9
