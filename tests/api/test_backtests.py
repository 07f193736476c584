"""Backtests through HTTP on SQLite and PostgreSQL: estimate, info, list_timeframes, run, full_range,
portfolio, coin_result, status, result, delete_backtest and backtest_history; results equal the
engine's; credits, refunds, the 402/404/429 rules and restart recovery."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

import pytest

import svc_engine.sim.drivers as drivers
from svc_api.accounts import service as accounts
from svc_api.backtests import jobs, pricing
from svc_api.backtests import service as backtests
from svc_api.backtests.tables import backtest_jobs
from svc_api.credits import service as credits
from svc_api.settings import Settings
from svc_engine.data import Catalog, DataStore
from svc_engine.data.synthetic import generate_market
from svc_engine.instruments.universe import CRYPTO_BASES
from svc_engine.strategy import compile_strategy
from tests.api.journey_helpers import as_requested

if TYPE_CHECKING:
    from tests.api.conftest import Api

STRATEGY = {
    "strategy_name": "smacross",
    "market_type": "spot",
    "signal_mode": "signal_orders",
    "timeframe": "1h",
    "entry_condition": "close crosses above SMA(20)",
    "tp_condition": "3%",
    "sl_condition": "2%",
}
NAMES = {"BTCUSDT": "BTC", "ETHUSDT": "ETH", "SOLUSDT": "SOL"}
START, END = 1_789_862_400, 1_792_886_400


@pytest.fixture(scope="session")
def market_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The small synthetic market (5 crypto pairs of 60 days of 1h, 4 daily tickers), made once."""
    root = tmp_path_factory.mktemp("market")
    generate_market(DataStore(root), small=True)
    return root


@pytest.fixture
def bt_settings(settings: Settings, market_dir: Path) -> Settings:
    return settings.replace(data_dir=market_dir)


@pytest.fixture
def bt_api(bt_settings: Settings, make_api: Any) -> Api:
    # The database fixture first: apps (and their job threads) stop before its schema is dropped.
    return make_api(bt_settings)


def _engine_strategy() -> Any:
    return compile_strategy(STRATEGY["entry_condition"], STRATEGY["tp_condition"], STRATEGY["sl_condition"])


def _user(api: Api, balance: int = 50, *, strategy: bool = True) -> tuple[str, str]:
    """A pro user with ``balance`` credits left and (by default) the active strategy ``smacross``."""
    data = api.register()
    store = api.app.state.services.store
    with store.write() as conn:
        accounts.grant_plan(conn, data["svc_id"], "pro", 30, now=api.clock.now())
        credits.deposit_credits(conn, data["svc_id"], balance + (1 if strategy else 0), now=int(time.time()))
    if strategy:
        reply = api.user("strategy_generate", STRATEGY, token=data["session_token"])
        assert reply.status_code == 200, reply.text
        deadline = time.monotonic() + 10
        while True:
            detail = api.user("strategy_detail", {"strategy_name": "smacross"}, token=data["session_token"])
            if detail.json()["data"]["status"] != "generating" or time.monotonic() > deadline:
                break
            time.sleep(0.02)
        assert detail.json()["data"]["status"] == "active", detail.text
    return data["svc_id"], data["session_token"]


def _bt(api: Api, action: str, body: dict[str, Any], token: str) -> Any:
    return api.post(
        "/backtest", params={"action": action}, json=body, headers={"Authorization": f"Bearer {token}"}
    )


def _ok(reply: Any) -> dict[str, Any]:
    assert reply.status_code == 200, reply.text
    return reply.json()


def _finished(api: Api, token: str, job_id: str, timeout: float = 90) -> tuple[dict[str, Any], list[float]]:
    """Poll ``status`` until the job ends; returns the last status and every progress seen."""
    seen: list[float] = []
    deadline = time.monotonic() + timeout
    while True:
        status = _ok(_bt(api, "status", {"job_id": job_id}, token))
        seen.append(status["progress_pct"])
        if status["status"] != "running" or time.monotonic() > deadline:
            return status, seen
        time.sleep(0.02)


def _balance(api: Api, svc_id: str) -> float:
    with api.app.state.services.store.read() as conn:
        return credits.balance(conn, svc_id)


def test_run_end_to_end_equals_the_engine(bt_api: Api, market_dir: Path) -> None:
    svc_id, token = _user(bt_api)
    body = {"strategy_name": "smacross", "coin": "BTC", "timeframe": "1h", "start_ts": START, "end_ts": END}
    estimate = _ok(_bt(bt_api, "estimate", {**body, "coins": ["BTC"]}, token))
    engine = drivers.estimate(
        _engine_strategy(), ["BTCUSDT"], "1h", START, END, catalog=Catalog(DataStore(market_dir))
    )
    cost = pricing.price("run", total_candles=engine["total_candles"], chunks=engine["chunks"])
    assert estimate == {
        "action": "estimate",
        "mode": "range",
        "total_candles": engine["total_candles"],
        "estimated_cost_credits": cost,
        "estimated_duration_seconds": estimate["estimated_duration_seconds"],
        "chunks": 1,
        "current_credits": 50,
        "can_afford": True,
        "coins": ["BTC"],
        "symbols": ["BTCUSDT"],
        "timeframe": "1h",
        "start_ts": engine["start_ts"],
        "end_ts": engine["end_ts"],
    }
    assert cost == engine["estimated_cost_credits"] == 2

    settings = {"commission_pct": 0.1, "min_candles_between_signals": 2, "signal_filter_mode": "reject"}
    launch = _ok(_bt(bt_api, "run", {**body, **settings}, token))
    job_id = launch["job_id"]
    assert launch == {
        "action": "run",
        "mode": "async_chunked",
        "job_id": job_id,
        "cost_credits": 2,
        "remaining_credits": 48,
        "chunks": 1,
        "status": "dispatched",
        "poll_actions": {
            "status": f"?action=status&job_id={job_id}",
            "result": f"?action=result&job_id={job_id}",
        },
        "coin": "BTC",
        "symbol": "BTCUSDT",
        "asset_class": "crypto",
        "provider": "binance",
        "market": "crypto",
        "exchange": "binance",
        "timeframe": "1h",
        "start_ts": START,
        "end_ts": END,
    }
    status, seen = _finished(bt_api, token, job_id)
    assert status["status"] == "completed" and status["progress_pct"] == 100
    assert status["estimated_remaining_seconds"] == 0 and status["elapsed_seconds"] > 0
    assert "coin_progress" not in status and "error" not in status
    assert seen == sorted(seen)

    result = _ok(_bt(bt_api, "result", {"job_id": job_id}, token))
    expected = as_requested(  # coins as the request named them (issue 13)
        drivers.backtest(
            _engine_strategy(), "BTCUSDT", "1h", START, END, store=DataStore(market_dir), **settings
        ).to_dict(),
        NAMES,
    )
    assert expected["total_trades"] > 0
    assert {k: result[k] for k in expected} == expected
    assert (result["action"], result["job_id"], result["cost_credits"]) == ("result", job_id, 2)
    assert _balance(bt_api, svc_id) == 48

    notes = _ok(bt_api.user("notifications_list", token=token))["data"]["notifications"]
    assert [n["event_type"] for n in notes].count("backtest_complete") == 1

    history = _ok(bt_api.user("backtest_history", token=token))["data"]
    assert history["count"] == 1 and history["has_more"] is False and history["last_evaluated_key"] is None
    entry = history["backtests"][0]
    assert entry["job_id"] == job_id and entry["coin"] == "BTC" and entry["cost_credits"] == 2
    assert entry["summary"] == {
        k: expected["summary"][k] for k in ("total_trades", "win_rate", "total_return_pct")
    }

    _, other = _user(bt_api, strategy=False)
    for action in ("status", "result", "delete_backtest"):
        reply = _bt(bt_api, action, {"job_id": job_id}, other)
        assert reply.status_code == 404, (action, reply.text)
    assert _ok(bt_api.user("backtest_history", token=other))["data"]["count"] == 0

    deleted = _ok(_bt(bt_api, "delete_backtest", {"job_id": job_id}, token))
    assert deleted == {"action": "delete_backtest", "success": True, "job_id": job_id, "deleted_objects": 1}
    assert _bt(bt_api, "status", {"job_id": job_id}, token).status_code == 404


def test_full_range_and_portfolio_equal_the_engine(bt_api: Api, market_dir: Path) -> None:
    svc_id, token = _user(bt_api)
    store = DataStore(market_dir)
    coins = ["BTC", "ETHUSDT", "SOL"]
    launch = _ok(
        _bt(bt_api, "full_range", {"strategy_name": "smacross", "coins": coins, "timeframe": "1h"}, token)
    )
    assert (launch["status"], launch["chunks"], launch["coins"]) == ("dispatched", 3, ["BTC", "ETH", "SOL"])
    assert launch["cost_credits"] == pricing.price("full_range", total_candles=3 * 1440, chunks=3) == 4
    status, _ = _finished(bt_api, token, launch["job_id"])
    assert status["coin_progress"] == {  # coins as the request named them (issue 13)
        s: {"status": "completed", "progress_pct": 100.0} for s in ("BTC", "ETH", "SOL")
    }
    result = _ok(_bt(bt_api, "result", {"job_id": launch["job_id"]}, token))
    raw = drivers.full_range(
        _engine_strategy(), ["BTCUSDT", "ETHUSDT", "SOLUSDT"], "1h", store=store
    ).to_dict()
    expected = as_requested(raw, NAMES)  # coins as the request named them (issue 13)
    assert {k: result[k] for k in expected} == expected
    assert result["coin"] == "BTC,ETH,SOL" and result["total_trades"] == len(result["trades"])
    one = _ok(_bt(bt_api, "coin_result", {"job_id": launch["job_id"], "coin": "ETH"}, token))
    assert {k: one[k] for k in expected["results"]["ETH"]} == expected["results"]["ETH"]
    with bt_api.app.state.services.store.read() as conn:
        returns = backtests.full_range_returns(conn, svc_id, "smacross")
    assert returns == {c: r["summary"]["total_return_pct"] for c, r in raw["results"].items()}
    # A full_range history entry has numbers only (issue 13): the win rate over every coin's trades.
    entry = _ok(bt_api.user("backtest_history", token=token))["data"]["backtests"][0]
    trades = sum(r["summary"]["total_trades"] for r in expected["results"].values())
    gains = sum(r["summary"]["gain_count"] for r in expected["results"].values())
    assert trades > 0
    assert entry["summary"]["win_rate"] == round(100.0 * gains / trades, 2)
    assert all(isinstance(v, int | float) for v in entry["summary"].values())

    body = {"strategy_name": "smacross", "coins": ["BTC", "ETH"], "timeframe": "1h", "divide": 2}
    body |= {"initial_balance": 1000, "commission_pct": 0.1, "start_ts": START}
    launch = _ok(_bt(bt_api, "portfolio", body, token))
    assert (launch["divide"], launch["initial_balance"], launch["coins"]) == (2, 1000.0, ["BTC", "ETH"])
    assert launch["cost_credits"] == pricing.price("portfolio", total_candles=2 * 1440, chunks=2) == 5
    status, _ = _finished(bt_api, token, launch["job_id"])
    assert status["status"] == "completed", status
    result = _ok(_bt(bt_api, "result", {"job_id": launch["job_id"]}, token))
    book = drivers.portfolio(
        _engine_strategy(),
        ["BTCUSDT", "ETHUSDT"],
        "1h",
        divide=2,
        initial_balance=1000,
        start_ts=START,
        store=store,
        commission_pct=0.1,
    )
    expected = as_requested(book.to_dict(), NAMES)
    assert {k: result[k] for k in expected} == expected
    assert result["coin"] == "BTC,ETH" and len(result["all_positions"]) == result["total_positions"]
    part = _ok(_bt(bt_api, "coin_result", {"job_id": launch["job_id"], "coin": "BTC"}, token))
    btc = book.trades.filter(book.trades["coin"] == "BTCUSDT")
    assert part["summary"] == expected["coin_results"]["BTC"]
    assert part["total_trades"] == btc.height == len(part["trades"])
    assert _balance(bt_api, svc_id) == 50 - 4 - 5
    with bt_api.app.state.services.store.write() as conn:
        assert backtests.delete_for_strategy(conn, svc_id, "smacross", now=int(time.time())) == 2
    assert _ok(bt_api.user("backtest_history", token=token))["data"]["count"] == 0


def test_bad_requests_are_400_with_clear_messages(bt_api: Api) -> None:
    _, token = _user(bt_api)
    base = {"strategy_name": "smacross", "coins": ["BTC"], "timeframe": "1h"}
    cases = [
        ("estimate", {**base, "start_ts": START}, "give both start_ts and end_ts"),
        ("estimate", {**base, "start_ts": END, "end_ts": START}, "inverted range"),
        (
            "estimate",
            {**base, "coins": ["BTC", "ETH"], "start_ts": START, "end_ts": END},
            "range mode takes exactly one",
        ),
        ("estimate", {**base, "coins": ["BTX"]}, "unknown instrument: coin='BTX'; did you mean TRX, BTC?"),
        ("estimate", {**base, "timeframe": "7m"}, "timeframe must be one of"),
        ("run", {**base, "coin": "BTC", "start_ts": START}, "end_ts is required"),
        (
            "run",
            {**base, "coin": "BTC", "start_ts": START, "end_ts": END, "max_wait_days": -1},
            "max_wait_days must be",
        ),
        ("full_range", {**base, "coins": "BTC"}, "coins must be a list"),
        ("portfolio", {**base, "coins": ["BTC"]}, "coins must list 2 to 50 coins"),
        (
            "portfolio",
            {**base, "coins": ["BTC", "ETH"], "divide": 21},
            "divide must be an integer from 1 to 20",
        ),
        ("info", {"strategy_name": "smacross", "coin": "TRX", "timeframe": "1h"}, "no data for TRX"),
        ("list_timeframes", {}, "coin or symbol is required"),
        ("status", {}, "job_id is required"),
    ]
    for action, body, message in cases:
        reply = _bt(bt_api, action, body, token)
        assert reply.status_code == 400, (action, body, reply.text)
        assert message in reply.json()["message"], (action, reply.json())
    missing = _bt(bt_api, "estimate", {**base, "strategy_name": "nosuch"}, token)
    assert missing.status_code == 404
    assert bt_api.post("/backtest", params={"action": "estimate"}, json=base).status_code == 401


def test_info_and_list_timeframes(bt_api: Api, market_dir: Path) -> None:
    _, token = _user(bt_api, balance=7)
    info = _ok(_bt(bt_api, "info", {"strategy_name": "smacross", "symbol": "SPY", "timeframe": "1d"}, token))
    data_range = Catalog(DataStore(market_dir)).data_range("SPY", "1d", "etfs")
    assert info == {
        "action": "info",
        "coin": "SPY",
        "symbol": "SPY",
        "asset_class": "etf",
        "provider": "svc-daily",
        "market": "etfs",
        "exchange": "svc-daily",
        "instrument": {"asset_class": "etf", "provider": "svc-daily", "market": "etfs", "symbol": "SPY"},
        "timeframe": "1d",
        "data_range": data_range,
        "strategy": {"slug": "smacross", "candle_count": 21},
        "cost_preview": {
            "credits_if_full": pricing.price(
                "full_range", total_candles=data_range["total_candles"], chunks=1
            )
        },
        "current_credits": 7,
    }
    listed = _ok(_bt(bt_api, "list_timeframes", {"coin": "ETH"}, token))
    assert listed["coin"] == "ETH" and listed["instrument"]["symbol"] == "ETHUSDT"
    first = listed["timeframes"][:2]
    assert first == [
        {"timeframe": "1m", "suffix": "-1m", "s3_key": "crypto/ETHUSDT/1m.parquet", "stored": True},
        {"timeframe": "3m", "suffix": "-3m", "s3_key": "crypto/ETHUSDT/1m.parquet", "stored": False},
    ]
    hourly = next(t for t in listed["timeframes"] if t["timeframe"] == "4h")
    assert hourly == {
        "timeframe": "4h",
        "suffix": "-4h",
        "s3_key": "crypto/ETHUSDT/1h.parquet",
        "stored": False,
    }
    forex = _ok(_bt(bt_api, "list_timeframes", {"symbol": "EURUSD", "asset_class": "forex"}, token))
    assert [t["timeframe"] for t in forex["timeframes"]] == ["1d", "3d", "1w"]


def test_insufficient_credits_is_402_and_nothing_is_written(bt_api: Api) -> None:
    svc_id, token = _user(bt_api, balance=1)
    body = {"strategy_name": "smacross", "coins": ["BTC", "ETH"], "timeframe": "1h"}
    reply = _bt(bt_api, "full_range", body, token)
    assert reply.status_code == 402
    assert reply.json()["code"] == "insufficient_credits"
    assert _balance(bt_api, svc_id) == 1
    assert _ok(bt_api.user("backtest_history", token=token))["data"]["count"] == 0


@pytest.fixture
def blocked(monkeypatch: pytest.MonkeyPatch) -> threading.Event:
    """Jobs wait for the event, then fail (as if the engine raised)."""
    release = threading.Event()

    def run_engine(work: Any, **_: Any) -> Any:
        release.wait(20)
        raise RuntimeError("engine exploded")

    monkeypatch.setattr(jobs, "run_engine", run_engine)
    yield release
    release.set()


def test_concurrency_limit_then_failure_refunds(
    monkeypatch: pytest.MonkeyPatch, bt_settings: Settings, make_api: Any, blocked: threading.Event
) -> None:
    monkeypatch.setenv("BACKTEST_MAX_CONCURRENT", "1")
    api = make_api(bt_settings)
    svc_id, token = _user(api, balance=10)
    body = {"strategy_name": "smacross", "coins": ["BTC"], "timeframe": "1h"}
    first = _ok(_bt(api, "full_range", body, token))
    second = _bt(api, "full_range", body, token)
    assert second.status_code == 429
    assert second.json() == {
        "error": "backtest_concurrency_limit",
        "reason": "backtest_concurrency_limit",
        "retry_after": 10,
        "message": "1 backtests are running; at most 1 at a time now",
        "current_running": 1,
        "max_concurrent": 1,
    }
    assert second.headers["Retry-After"] == "10"
    assert _balance(api, svc_id) == 8
    blocked.set()
    status, _ = _finished(api, token, first["job_id"])
    assert status["status"] == "failed"
    assert status["error"].startswith("RuntimeError: engine exploded")
    assert _balance(api, svc_id) == 10
    ledger = _ok(api.user("credits_history", token=token))["data"]["transactions"]
    assert [(t["action"], t["amount"]) for t in ledger[:2]] == [("backtest", 2), ("backtest", -2)]
    again = _bt(api, "result", {"job_id": first["job_id"]}, token)
    assert again.status_code == 409 and "failed" in again.json()["message"]


def test_capacity_exceeded(
    monkeypatch: pytest.MonkeyPatch, bt_settings: Settings, make_api: Any, blocked: threading.Event
) -> None:
    monkeypatch.setenv("BACKTEST_QUEUE_CAPACITY", "1")
    api = make_api(bt_settings)
    svc_id, token = _user(api, balance=10)
    body = {"strategy_name": "smacross", "coins": ["BTC"], "timeframe": "1h"}
    _ok(_bt(api, "full_range", body, token))
    reply = _bt(api, "full_range", body, token)
    assert reply.status_code == 429
    assert (reply.json()["reason"], reply.headers["Retry-After"]) == ("backtest_capacity_exceeded", "2")
    assert _balance(api, svc_id) == 8


def test_adaptive_limit_follows_executor_load() -> None:
    assert [jobs.adaptive_limit(4, busy=b) for b in (0.0, 0.5, 0.9, 1.0)] == [4, 3, 3, 2]


def test_a_job_left_running_by_a_crash_is_failed_and_refunded_at_start_up(
    bt_settings: Settings, make_api: Any
) -> None:
    api = make_api(bt_settings)
    svc_id, token = _user(api, balance=5, strategy=False)
    launch = backtests.Launch("full_range", "gone", 1, ["BTCUSDT"], "crypto", "1h", {}, 1, 3, 1.0)
    with api.app.state.services.store.write() as conn:
        made = backtests.create_job(conn, svc_id, launch, limit=3, now=time.time() - 3600)
    assert _balance(api, svc_id) == 2
    restarted = make_api(bt_settings)
    status = _ok(_bt(restarted, "status", {"job_id": made["job_id"]}, token))
    assert (status["status"], status["error"]) == ("failed", jobs.INTERRUPTED)
    assert _balance(restarted, svc_id) == 5


def test_progress_events_reach_the_row(bt_api: Api) -> None:
    svc_id, _ = _user(bt_api, balance=5, strategy=False)
    launch = backtests.Launch("full_range", "p", 1, ["BTCUSDT", "ETHUSDT"], "crypto", "1h", {}, 2, 3, 1.0)
    store = bt_api.app.state.services.store
    with store.write() as conn:
        job_id = backtests.create_job(conn, svc_id, launch, limit=3, now=int(time.time()))["job_id"]
    work = jobs.Work(job_id, svc_id, "full_range", None, ["BTCUSDT", "ETHUSDT"], "crypto", "1h")
    progress = jobs.Progress(store, work, interval=0.0)
    progress({"done": 1, "total": 2, "item": "ETHUSDT", "index": 1, "status": "failed", "pct": 50.0})
    with store.read() as conn:
        status = backtests.job_status(backtests.get_job(conn, svc_id, job_id), now=int(time.time()))
    assert status["progress_pct"] == 50.0
    # Coins as the request named them (issue 13).
    assert status["coin_progress"] == {
        "BTC": {"status": "running", "progress_pct": 0.0},
        "ETH": {"status": "failed", "progress_pct": 100.0},
    }


def test_history_filters_and_cursor(bt_api: Api) -> None:
    svc_id, token = _user(bt_api, balance=50, strategy=False)
    store = bt_api.app.state.services.store
    made = []
    with store.write() as conn:
        rows = [
            ("alpha", ["BTCUSDT"], "1h"),
            ("alpha", ["ETHUSDT", "BTCUSDT"], "4h"),
            ("beta", ["SOLUSDT"], "1h"),
            ("alpha", ["SOLUSDT"], "1h"),
            ("beta", ["BTCUSDT"], "1d"),
        ]
        for i, (name, coins, tf) in enumerate(rows):
            launch = backtests.Launch("full_range", name, 1, coins, "crypto", tf, {}, len(coins), 2, 1.0)
            made.append(
                backtests.create_job(conn, svc_id, launch, limit=99, now=1_800_000_000 + i // 2)["job_id"]
            )
    newest_first = sorted(made, key=lambda j: (int(j[3:16]) // 1000, j), reverse=True)
    pages, cursor = [], None
    while True:
        body = {"limit": 2} | ({"cursor": cursor} if cursor else {})
        data = _ok(bt_api.user("backtest_history", body, token=token))["data"]
        pages.append([b["job_id"] for b in data["backtests"]])
        cursor = data["last_evaluated_key"]
        if not data["has_more"]:
            assert cursor is None
            break
    assert [len(p) for p in pages] == [2, 2, 1]
    assert [j for page in pages for j in page] == newest_first

    def ids(**filters: Any) -> list[str]:
        data = _ok(bt_api.user("backtest_history", filters, token=token))["data"]
        return sorted(b["job_id"] for b in data["backtests"])

    assert ids(coin="BTC") == sorted([made[0], made[1], made[4]])
    assert ids(strategy_name="alpha", timeframe="1h") == sorted([made[0], made[3]])
    assert ids(coin="SOL", strategy_name="beta") == [made[2]]
    entry = _ok(bt_api.user("backtest_history", {"coin": "ETH"}, token=token))["data"]["backtests"][0]
    assert (entry["coin"], entry["coins"], entry["symbol"]) == ("ETH,BTC", ["ETH", "BTC"], None)
    for bad in ({"limit": 0}, {"limit": "x"}, {"cursor": "garbage"}, {"timeframe": "2m"}, {"coin": "NOPE"}):
        assert bt_api.user("backtest_history", bad, token=token).status_code == 400, bad
    with store.write() as conn:
        assert backtests.delete_for_strategy(conn, svc_id, "alpha", now=int(time.time())) == 3
    with store.read() as conn:
        assert backtests.full_range_returns(conn, svc_id, "beta") is None


def test_legacy_delete_pair_and_running_jobs(bt_api: Api) -> None:
    svc_id, token = _user(bt_api, balance=5, strategy=False)
    store = bt_api.app.state.services.store
    launch = backtests.Launch("full_range", "legacy", 1, ["BTCUSDT"], "crypto", "1h", {}, 1, 2, 1.0)
    with store.write() as conn:
        job_id = backtests.create_job(conn, svc_id, launch, limit=3, now=int(time.time()))["job_id"]
    body = {"strategy_name": "legacy", "backtest_key": job_id}
    running = _bt(bt_api, "delete_backtest", body, token)
    assert running.status_code == 409
    with store.write() as conn:
        conn.execute(
            backtest_jobs.update().values(status="completed", result_key=jobs.result_key(svc_id, job_id))
        )
    assert _bt(bt_api, "delete_backtest", {**body, "strategy_name": "other"}, token).status_code == 404
    deleted = _ok(
        _bt(bt_api, "delete_backtest", {**body, "backtest_key": jobs.result_key(svc_id, job_id)}, token)
    )
    assert (deleted["job_id"], deleted["deleted_objects"]) == (job_id, 0)
    assert json.loads(json.dumps(deleted))["success"] is True


def test_concurrent_launches_respect_the_limit(
    monkeypatch: pytest.MonkeyPatch, bt_settings: Settings, make_api: Any, blocked: threading.Event
) -> None:
    monkeypatch.setenv("BACKTEST_MAX_CONCURRENT", "1")
    api = make_api(bt_settings)
    svc_id, token = _user(api, balance=20)
    body = {"strategy_name": "smacross", "coins": ["BTC"], "timeframe": "1h"}
    replies: list[Any] = []
    threads = [
        threading.Thread(target=lambda: replies.append(_bt(api, "full_range", body, token))) for _ in range(4)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(r.status_code for r in replies) == [200, 429, 429, 429]
    assert _balance(api, svc_id) == 18
    job_id = next(r.json()["job_id"] for r in replies if r.status_code == 200)
    running = _bt(api, "result", {"job_id": job_id}, token)
    assert running.status_code == 409 and "running" in running.json()["message"]
    estimate = _ok(_bt(api, "estimate", {**body, "coins": ["BTC", "ETH", "SOL", "DOT", "INJ"]}, token))
    assert (estimate["mode"], estimate["total_candles"], estimate["chunks"]) == ("full_range", 5 * 1440, 5)
    assert (estimate["estimated_cost_credits"], estimate["current_credits"]) == (6, 18)
    assert estimate["can_afford"] is True


def test_every_market_of_the_data_store(bt_api: Api, market_dir: Path) -> None:
    _, token = _user(bt_api)
    coins = ["AAPL", "SPY", "EURUSD", "GOLD", "BTC"]
    launch = _ok(
        _bt(bt_api, "full_range", {"strategy_name": "smacross", "coins": coins, "timeframe": "1d"}, token)
    )
    assert launch["coins"] == coins and "market" not in launch
    assert launch["symbols"] == ["AAPL", "SPY", "EURUSD", "GOLD", "BTCUSDT"]
    status, _ = _finished(bt_api, token, launch["job_id"])
    assert status["status"] == "completed", status
    result = _ok(_bt(bt_api, "result", {"job_id": launch["job_id"]}, token))
    symbols = launch["symbols"]
    expected = drivers.full_range(_engine_strategy(), symbols, "1d", store=DataStore(market_dir)).to_dict()
    expected = as_requested(expected, dict(zip(symbols, coins, strict=True)))
    assert {k: result[k] for k in expected} == expected
    assert result["summary"]["completed"] == 5
    daily = {"strategy_name": "smacross", "timeframe": "1d", "market": "forex"}
    forex = _ok(_bt(bt_api, "full_range", {**daily, "coins": ["EURUSD"]}, token))
    assert (forex["market"], forex["asset_class"], forex["provider"]) == ("forex", "forex", "svc-daily")
    wrong = _bt(bt_api, "full_range", {**daily, "coins": ["AAPL"]}, token)
    assert wrong.status_code == 400 and "AAPL" in wrong.json()["message"]


def test_a_retried_launch_with_an_idempotency_key_runs_once(bt_api: Api) -> None:
    svc_id, token = _user(bt_api, balance=10)
    body = {
        "strategy_name": "smacross",
        "coins": ["BTC"],
        "timeframe": "1h",
        "idempotency_key": "launch-0001-abcdef",
    }
    first = _bt(bt_api, "full_range", body, token)
    again = _bt(bt_api, "full_range", body, token)
    assert first.status_code == again.status_code == 200
    assert again.headers.get("Idempotent-Replay") == "true"
    assert again.json()["job_id"] == first.json()["job_id"]
    _finished(bt_api, token, first.json()["job_id"])
    assert _balance(bt_api, svc_id) == 8
    assert _ok(bt_api.user("backtest_history", token=token))["data"]["count"] == 1


def test_job_status_times_and_remaining_estimate() -> None:
    base = {"job_id": "bt_1", "coin_progress": None, "error": None, "estimated_seconds": 8.0}
    queued = SimpleNamespace(**base, status="running", progress_pct=0.0, started_at=None, finished_at=None)
    assert backtests.job_status(queued, now=100.0)["estimated_remaining_seconds"] == 8.0
    early = SimpleNamespace(**base, status="running", progress_pct=0.0, started_at=97.0, finished_at=None)
    assert backtests.job_status(early, now=100.0)["estimated_remaining_seconds"] == 5.0
    half = SimpleNamespace(**base, status="running", progress_pct=25.0, started_at=96.0, finished_at=None)
    status = backtests.job_status(half, now=100.0)
    assert (status["elapsed_seconds"], status["estimated_remaining_seconds"]) == (4.0, 12.0)
    done = SimpleNamespace(**base, status="failed", progress_pct=50.0, started_at=90.0, finished_at=92.5)
    assert backtests.job_status(done, now=100.0) == {
        "action": "status",
        "job_id": "bt_1",
        "status": "failed",
        "progress_pct": 50.0,
        "elapsed_seconds": 2.5,
        "estimated_remaining_seconds": 0.0,
        "error": "failed",
    }


def test_a_job_of_a_dead_process_is_failed_at_start_up_though_its_heartbeat_is_fresh(
    bt_settings: Settings, make_api: Any
) -> None:
    """The process that ran the job was killed a moment ago: its heartbeat is still fresh, but its
    holder id (host, pid, start time) names a process that is gone, so the restart settles it at once."""
    import subprocess
    import sys

    import sqlalchemy as sa

    from svc_api.backtests.tables import backtest_jobs
    from svc_api.core.liveness import holder_id

    api = make_api(bt_settings)
    svc_id, token = _user(api, balance=5, strategy=False)
    launch = backtests.Launch("full_range", "gone", 1, ["BTCUSDT"], "crypto", "1h", {}, 1, 3, 1.0)
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    dead = holder_id(child.pid)
    child.wait()
    with api.app.state.services.store.write() as conn:
        made = backtests.create_job(conn, svc_id, launch, limit=3, now=time.time())
        conn.execute(
            backtest_jobs.update().where(backtest_jobs.c.job_id == made["job_id"]).values(runner=dead)
        )
    assert _balance(api, svc_id) == 2
    restarted = make_api(bt_settings)
    status = _ok(_bt(restarted, "status", {"job_id": made["job_id"]}, token))
    assert (status["status"], status["error"]) == ("failed", jobs.INTERRUPTED)
    assert _balance(restarted, svc_id) == 5
    history = restarted.user("credits_history", token=token).json()["data"]["transactions"]
    refund = next(t for t in history if t["amount"] > 0)
    assert refund["description"] == f"Refund of failed backtest {made['job_id']}"
    with restarted.app.state.services.store.read() as conn:
        assert conn.execute(sa.select(backtest_jobs.c.status)).scalar() == "failed"


def test_a_users_own_jobs_filling_the_executor_do_not_lower_their_limit(
    monkeypatch: pytest.MonkeyPatch, bt_settings: Settings, make_api: Any
) -> None:
    """Issue 28: alone on the server, one job's chunks take every executor worker (busy 1.0); that
    load is the caller's own, already counted per job, so the limit stays the documented 3 (it was
    429 "at most 2 at a time now"); another account's launch sees the load and gets 2."""
    release = threading.Event()

    def run_engine(work: Any, *, executor: Any, **_: Any) -> Any:
        executor.map(lambda _i: release.wait(20), list(range(executor.workers)))  # every worker taken
        raise RuntimeError("engine exploded")

    monkeypatch.setattr(jobs, "run_engine", run_engine)
    try:
        api = make_api(bt_settings)
        svc_id, token = _user(api, balance=20)
        body = {"strategy_name": "smacross", "coins": ["BTC"], "timeframe": "1h"}
        _ok(_bt(api, "full_range", body, token))
        runner = backtests.runner_of(api.app.state.services)
        deadline = time.monotonic() + 10
        while runner.executor.busy() < 1.0:
            assert time.monotonic() < deadline
            time.sleep(0.01)
        _ok(_bt(api, "full_range", body, token))
        _ok(_bt(api, "full_range", body, token))  # the third of 3: refused before the fix
        fourth = _bt(api, "full_range", body, token)
        assert fourth.status_code == 429
        assert (fourth.json()["current_running"], fourth.json()["max_concurrent"]) == (3, 3)
        assert (runner.limit_now(svc_id), runner.limit_now("ZZ99ZZ")) == (3, 2)
    finally:
        release.set()


@pytest.fixture(scope="session")
def wide_market(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """22 crypto pairs of 60 days of 1h: the small market's five plus 17 copies of BTCUSDT's candles
    under other pairs of the universe (a portfolio's default ``divide`` stops at 20 coins)."""
    root = tmp_path_factory.mktemp("wide-market")
    store = DataStore(root)
    generate_market(store, small=True)
    btc = store._read(store.key("crypto", "BTCUSDT", "1h"))
    have = set(Catalog(store).symbols("crypto"))
    extra = [f"{b}USDT" for b in CRYPTO_BASES if f"{b}USDT" not in have][:17]
    for symbol in extra:
        store.write_klines("crypto", symbol, "1h", btc, replace=True)
    return root


def _busy_user(api: Api) -> tuple[str, str]:
    """A pro user with 1000 credits and ``busy``: a strategy that trades many times a week."""
    svc_id, token = _user(api, balance=1000, strategy=False)
    busy = STRATEGY | {
        "strategy_name": "busyone",
        "entry_condition": "close crosses above SMA(3)",
        "tp_condition": "0.5%",
        "sl_condition": "0.5%",
    }
    assert api.user("strategy_generate", busy, token=token).status_code == 200
    deadline = time.monotonic() + 10
    while (
        api.user("strategy_detail", {"strategy_name": "busyone"}, token=token).json()["data"]["status"]
        == "generating"
    ):
        assert time.monotonic() < deadline
        time.sleep(0.02)
    return svc_id, token


def test_portfolio_defaults_and_its_500_trade_cap(
    wide_market: Path, settings: Settings, make_api: Any
) -> None:
    """The spec: ``divide`` defaults to the number of coins capped at 20, ``initial_balance`` to 100;
    the result lists the first 500 trades and says ``trades_truncated`` when there were more."""
    api = make_api(settings.replace(data_dir=wide_market))
    _, token = _busy_user(api)
    coins = sorted(Catalog(DataStore(wide_market)).symbols("crypto"))
    assert len(coins) == 22, coins
    base = {"strategy_name": "busyone", "timeframe": "1h"}

    three = _ok(_bt(api, "portfolio", {**base, "coins": coins[:3]}, token))
    assert (three["divide"], three["initial_balance"]) == (3, 100.0)
    wide = _ok(_bt(api, "portfolio", {**base, "coins": coins}, token))
    assert (wide["divide"], wide["initial_balance"]) == (20, 100.0)

    status, _ = _finished(api, token, wide["job_id"])
    assert status["status"] == "completed", status
    result = _ok(_bt(api, "result", {"job_id": wide["job_id"]}, token))
    assert (result["divide"], result["summary"]["initial_balance"]) == (20, 100.0)
    assert result["total_trades"] > 500, result["total_trades"]
    assert (len(result["trades"]), result["trades_truncated"]) == (500, True)
    # the first 500 in the engine's order, not any 500
    book = drivers.portfolio(
        compile_strategy("close crosses above SMA(3)", "0.5%", "0.5%"),
        coins,
        "1h",
        divide=20,
        initial_balance=100,
        store=DataStore(wide_market),
    )
    assert book.trades.height == result["total_trades"]
    engine = json.loads(json.dumps(book.to_dict()["trades"]))
    assert [t | {"coin": t["coin"] + "USDT"} for t in result["trades"]] == engine  # displayed names

    status, _ = _finished(api, token, three["job_id"])
    assert status["status"] == "completed", status
    small = _ok(_bt(api, "result", {"job_id": three["job_id"]}, token))
    assert (small["divide"], small["summary"]["initial_balance"]) == (3, 100.0)  # what the engine ran
