"""API-key permission scopes: a key holds ``read``, ``trade`` or both; every identified operation of
every family needs one (``svc_api.routing.TRADE`` lists the ``trade`` ones); a key without it gets
403 ``insufficient_scope`` before anything runs or is charged. Sessions hold both. Each scope is
tried against each family on SQLite and PostgreSQL."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from svc_api.routing import BACKTEST, TRADE, TRADINGDATA, USER

if TYPE_CHECKING:
    from tests.api.conftest import Api

# One operation of each family and kind, with a body it accepts.
CASES = [
    ("user", "account_info", "read", {}),
    ("user", "credits_history", "read", {}),
    ("user", "strategy_detail", "read", {"strategy_name": "nosuch1"}),
    ("user", "strategy_generate", "trade", {"strategy_name": "scoped1", "long_entry_condition": "x"}),
    ("user", "favorite_coin", "trade", {"symbol": "BTCUSDT", "action": "add"}),
    ("user", "notifications_mark_read", "trade", {"all": True}),
    ("backtest", "status", "read", {"job_id": "nosuch"}),
    ("backtest", "run", "trade", {"strategy_name": "nosuch1", "coin": "BTC", "timeframe": "1h"}),
    ("backtest", "delete_backtest", "trade", {"job_id": "nosuch"}),
    (
        "tradingdata",
        "track_trend_break_signal",
        "trade",
        {"coin_name": "BTCUSDT", "timeframe": "60", "timestamp": "1700000000", "way": "BUY"},
    ),
]


def _key(api: Api, token: str, permissions: list[str]) -> tuple[str, str]:
    reply = api.user("api_key_generate", {"label": "scoped", "permissions": permissions}, token=token)
    assert reply.status_code == 200, reply.text
    data = reply.json()["data"]
    return data["api_key"], data["api_secret"]


def _call(api: Api, family: str, name: str, body: dict[str, Any], key: tuple[str, str]) -> Any:
    headers = {"X-API-Key": key[0], "X-API-Secret": key[1]}
    if family == "user":
        return api.user(name, body, key=key)
    if family == "backtest":
        return api.post("/backtest", params={"action": name}, json=body, headers=headers)
    return api.get("/tradingdata", params={"request_type": name, **body}, headers=headers)


def test_every_identified_operation_has_a_scope_and_trade_ones_are_listed() -> None:
    ops = {**USER.operations, **BACKTEST.operations, **TRADINGDATA.operations}
    assert {name for name, op in ops.items() if op.scope == "trade"} == TRADE
    assert {name: op.scope for name, op in ops.items() if name in ("account_info", "run", "status")} == {
        "account_info": "read",
        "run": "trade",
        "status": "read",
    }


@pytest.mark.parametrize("permissions", [["read"], ["trade"], ["read", "trade"]])
def test_scope_matrix(api: Api, permissions: list[str]) -> None:
    user = api.register()
    key = _key(api, user["session_token"], permissions)
    for family, name, scope, body in CASES:
        reply = _call(api, family, name, body, key)
        if scope in permissions:
            assert reply.status_code != 403, (family, name, reply.text)
        else:
            assert reply.status_code == 403, (family, name, reply.text)
            assert reply.json()["code"] == "insufficient_scope", (family, name)
            assert repr(scope) in reply.json()["message"]


def test_a_read_key_spends_nothing_and_creates_nothing(api: Api) -> None:
    user = api.register()
    token = user["session_token"]
    key = _key(api, token, ["read"])
    before = api.user("account_info", token=token).json()["data"]
    reply = api.user(
        "strategy_generate", {"strategy_name": "nospend1", "long_entry_condition": "RSI(14) < 30"}, key=key
    )
    assert reply.status_code == 403
    after = api.user("account_info", token=token).json()["data"]
    assert after["svc_credits"] == before["svc_credits"] and after["strategies"] == {}
    history = api.user("credits_history", token=token).json()["data"]["transactions"]
    assert [t for t in history if t["action"] == "strategy_generate"] == []


def test_sessions_hold_both_scopes(api: Api) -> None:
    token = api.register()["session_token"]
    reply = api.user("favorite_coin", {"symbol": "BTCUSDT", "action": "add"}, token=token)
    assert reply.status_code != 403
