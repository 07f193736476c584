"""Exit conditions in words through the API (issue 20): ``strategy_generate`` and ``strategy_edit``
take ``exit_condition``; detail and versions show it; a backtest of such a strategy equals the
engine's, and so does a portfolio of it."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

import svc_engine.sim.drivers as drivers
from svc_api.accounts import service as accounts
from svc_api.credits import service as credits
from svc_api.settings import Settings
from svc_engine.data import DataStore
from svc_engine.data.synthetic import generate_market
from svc_engine.strategy import compile_strategy
from tests.api.journey_helpers import as_requested

if TYPE_CHECKING:
    from tests.api.conftest import Api

CROSS = {
    "strategy_name": "smaexit",
    "market_type": "spot",
    "signal_mode": "signal_only",
    "timeframe": "1h",
    "entry_condition": "SMA(10) crosses above SMA(30)",
    "tp_condition": "no take profit",
    "sl_condition": "no stop loss",
    "exit_condition": "exit when SMA(10) crosses below SMA(30)",
}
START, END = 1_789_862_400, 1_792_886_400


@pytest.fixture(scope="session")
def market_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("exits-market")
    generate_market(DataStore(root), small=True)
    return root


@pytest.fixture
def exit_api(make_api: Any, settings: Settings, market_dir: Path) -> Api:
    return make_api(settings.replace(data_dir=market_dir))


def _user(api: Api) -> str:
    data = api.register()
    with api.app.state.services.store.write() as conn:
        accounts.grant_plan(conn, data["svc_id"], "pro", 30, now=api.clock.now())
        credits.deposit_credits(conn, data["svc_id"], 50, now=int(time.time()))
    return str(data["session_token"])


def _ok(reply: Any) -> Any:
    assert reply.status_code == 200, reply.text
    return reply.json()


def _settled(api: Api, token: str, name: str) -> dict[str, Any]:
    deadline = time.monotonic() + 10
    while True:
        data = _ok(api.user("strategy_detail", {"strategy_name": name}, token=token))["data"]
        if data["status"] != "generating" or time.monotonic() > deadline:
            return data
        time.sleep(0.02)


def _bt(api: Api, action: str, body: dict[str, Any], token: str) -> Any:
    return api.post(
        "/backtest", params={"action": action}, json=body, headers={"Authorization": f"Bearer {token}"}
    )


def _result(api: Api, token: str, job_id: str) -> dict[str, Any]:
    deadline = time.monotonic() + 60
    while _ok(_bt(api, "status", {"job_id": job_id}, token))["status"] == "running":
        assert time.monotonic() < deadline, "backtest did not finish"
        time.sleep(0.05)
    return _ok(_bt(api, "result", {"job_id": job_id}, token))


def test_an_exit_condition_is_kept_shown_and_simulated_as_the_engine_does(
    exit_api: Api, market_dir: Path
) -> None:
    token = _user(exit_api)
    _ok(exit_api.user("strategy_generate", CROSS, token=token))
    detail = _settled(exit_api, token, "smaexit")
    assert (detail["status"], detail["exit_condition"]) == ("active", CROSS["exit_condition"])

    body = {"strategy_name": "smaexit", "coin": "BTC", "timeframe": "1h", "start_ts": START, "end_ts": END}
    result = _result(exit_api, token, _ok(_bt(exit_api, "run", body, token))["job_id"])
    engine = compile_strategy(
        CROSS["entry_condition"],
        CROSS["tp_condition"],
        CROSS["sl_condition"],
        signal_mode="signal_only",
        exit_condition=CROSS["exit_condition"],
    )
    expected = as_requested(
        drivers.backtest(engine, "BTCUSDT", "1h", START, END, store=DataStore(market_dir)).to_dict(),
        {"BTCUSDT": "BTC"},
    )
    assert {k: result[k] for k in expected} == expected
    # no TP/SL levels: every trade but the last (closed at the end of the data) leaves by the words
    reasons = [t["exit_reason"] for t in result["trades"]]
    assert (len(reasons), reasons[-1], set(reasons[:-1])) == (18, "end", {"signal"})


def test_a_portfolio_simulates_exit_rules_as_the_engine_does(exit_api: Api, market_dir: Path) -> None:
    token = _user(exit_api)
    _ok(exit_api.user("strategy_generate", CROSS, token=token))
    assert _settled(exit_api, token, "smaexit")["status"] == "active"
    body = {"strategy_name": "smaexit", "coins": ["BTC", "ETH"], "timeframe": "1h", "start_ts": START}
    launch = _ok(_bt(exit_api, "portfolio", body, token))
    result = _result(exit_api, token, launch["job_id"])
    engine = compile_strategy(
        CROSS["entry_condition"],
        CROSS["tp_condition"],
        CROSS["sl_condition"],
        signal_mode="signal_only",
        exit_condition=CROSS["exit_condition"],
    )
    book = drivers.portfolio(
        engine, ["BTCUSDT", "ETHUSDT"], "1h", start_ts=START, store=DataStore(market_dir)
    )
    expected = as_requested(book.to_dict(), {"BTCUSDT": "BTC", "ETHUSDT": "ETH"})
    assert {k: result[k] for k in expected} == expected
    # both coins trade, and every trade but those still open at the end leaves by the exit condition
    trades = result["trades"]
    assert {t["coin"] for t in trades} == {"BTC", "ETH"}
    assert {t["exit_reason"] for t in trades} == {"signal", "end"}
    assert sum(t["exit_reason"] == "signal" for t in trades) >= 20
    credits_left = _ok(exit_api.user("account_info", token=token))["data"]["svc_credits"]
    assert credits_left == 50 - 1 - launch["cost_credits"]


def test_an_edit_changes_or_removes_the_exit_condition(exit_api: Api) -> None:
    token = _user(exit_api)
    _ok(exit_api.user("strategy_generate", CROSS, token=token))
    _settled(exit_api, token, "smaexit")
    _ok(
        exit_api.user(
            "strategy_edit", {"strategy_name": "smaexit", "exit_condition": "after 24 candles"}, token=token
        )
    )
    assert _settled(exit_api, token, "smaexit")["exit_condition"] == "after 24 candles"
    _ok(exit_api.user("strategy_edit", {"strategy_name": "smaexit", "exit_condition": ""}, token=token))
    detail = _settled(exit_api, token, "smaexit")
    assert (detail["version"], detail["exit_condition"], detail["status"]) == (3, None, "active")
    versions = _ok(exit_api.user("strategy_versions", {"strategy_name": "smaexit"}, token=token))["data"]
    assert [v["exit_condition"] for v in versions["versions"]] == [
        None,
        "after 24 candles",
        CROSS["exit_condition"],
    ]


def test_an_exit_condition_that_is_not_understood_fails_the_generation_with_its_field(exit_api: Api) -> None:
    token = _user(exit_api)
    _ok(
        exit_api.user(
            "strategy_generate", CROSS | {"exit_condition": "exit when the moon is full"}, token=token
        )
    )
    detail = _settled(exit_api, token, "smaexit")
    assert detail["status"] == "failed"
    assert detail["error"]["field"] == "exit_condition", detail["error"]
