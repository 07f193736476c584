"""Rules of the live signals and of orders on them, through HTTP on SQLite and PostgreSQL:
``signal_history`` filters per page, so a page may be empty while ``has_more`` is true; an order
preview reserves nothing and the order is checked again when it is placed."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from svc_api.signals.tables import signals
from tests.api.exchange_helpers import linked_trader, live_signal, order_of

if TYPE_CHECKING:
    from tests.api.conftest import Api

T = 1_790_000_000


def _data(reply: Any) -> Any:
    assert reply.status_code == 200, reply.text
    return reply.json()["data"]


def _closed(svc_id: str, n: int, coin: str, at: int) -> dict[str, Any]:
    return {
        "position_key": f"sig_{coin.lower()}_{n}",
        "svc_id": svc_id,
        "strategy_name": "smacross",
        "version": 1,
        "coin": coin,
        "symbol": f"{coin}USDT",
        "market": "crypto",
        "timeframe": "1h",
        "side": "long",
        "signal_mode": "signal_orders",
        "signal_ms": at * 1000,
        "limit_price": 100.0,
        "tp_price": 103.0,
        "sl_price": 98.0,
        "status": "closed",
        "fill_ms": at * 1000,
        "entry_price": 100.0,
        "exit_ms": (at + 3600) * 1000,
        "exit_price": 103.0,
        "reason": "tp",
        "result": "GAIN",
        "closed_key": f"cls_{coin.lower()}_{n}",
        "created_at": at,
        "closed_at": at + 3600,
    }


def test_signal_history_pages_may_be_empty_while_more_follow(sig_api: Api) -> None:
    user = sig_api.register()
    svc_id, token = user["svc_id"], user["session_token"]
    # newest first: three BTC signals, then two ETH ones
    rows = [_closed(svc_id, i, "BTC", T + 100 * (10 - i)) for i in range(3)]
    rows += [_closed(svc_id, i, "ETH", T - 100 * (i + 1)) for i in range(2)]
    with sig_api.app.state.services.store.write() as conn:
        conn.execute(signals.insert(), rows)

    body: dict[str, Any] = {"filters": {"coin": "ETH"}, "page_size": 2}
    first = _data(sig_api.user("signal_history", body, token=token))
    assert (first["signals"], first["count"], first["has_more"]) == ([], 0, True)
    assert first["last_evaluated_key"]
    second = _data(
        sig_api.user("signal_history", {**body, "cursor": first["last_evaluated_key"]}, token=token)
    )
    assert ([s["closed_key"] for s in second["signals"]], second["has_more"]) == (["cls_eth_0"], True)
    third = _data(
        sig_api.user("signal_history", {**body, "cursor": second["last_evaluated_key"]}, token=token)
    )
    assert ([s["closed_key"] for s in third["signals"]], third["has_more"]) == (["cls_eth_1"], False)
    assert third["last_evaluated_key"] is None


@pytest.fixture
def xapi(sig_api: Api, cli_env: None) -> Api:
    return sig_api


def test_a_preview_reserves_nothing_and_the_order_is_checked_again(xapi: Api) -> None:
    _, token, _ = linked_trader(xapi)  # 1 BTC on the paper account
    signal = live_signal(xapi, token)
    body = order_of(signal, "order-key-0000000001", quantity="0.60000")
    preview = {k: v for k, v in body.items() if k != "idempotency_key"}
    for _ in range(2):  # two previews of 0.6 BTC each pass: the first held nothing back
        shown = _data(xapi.user("exchange_order_preview", preview, token=token))
        assert (shown["available_balance"], shown["balance_verified"]) == ("1", True)
    assert _data(xapi.user("exchange_balance", token=token))["spot"]["BTC"] == 1.0

    placed = _data(xapi.user("exchange_order", body, token=token))
    assert placed["status"] == "submitted"
    # the second previewed order is checked again at placement: 0.4 BTC is left, 0.6 is refused
    second = xapi.user("exchange_order", {**body, "idempotency_key": "order-key-0000000002"}, token=token)
    assert second.status_code == 400, second.text
    assert second.json()["message"] == "insufficient BTC: 0.4 available, 0.6 needed"
    history = _data(xapi.user("order_history", token=token))
    assert [o["order_id"] for o in history["orders"]] == [placed["order_list_id"]]
