"""Live signals on SQLite and PostgreSQL: the market clock stepped candle by candle reveals exactly
the positions a backtest of the same range gives, on the embedded market and on real candles."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import polars as pl
import pytest

import svc_engine.sim.drivers as drivers
from svc_api.accounts import service as accounts
from svc_api.core.clock import ManualClock
from svc_api.credits import service as credits
from svc_api.market import service as market
from svc_api.settings import Settings
from svc_api.signals import queries as signal_queries
from svc_api.signals import service as signals
from svc_engine.data import DataStore
from svc_engine.strategy import compile_strategy
from tests.api.conftest import SIGNALS_T0

if TYPE_CHECKING:
    from tests.api.conftest import Api

HOUR = 3600
T0 = SIGNALS_T0
STRATEGY = {
    "strategy_name": "smacross",
    "market_type": "spot",
    "signal_mode": "signal_orders",
    "timeframe": "1h",
    "entry_condition": "close crosses above SMA(20)",
    "tp_condition": "3%",
    "sl_condition": "2%",
}


def _ok(reply: Any) -> Any:
    assert reply.status_code == 200, reply.text
    return reply.json()


def creator(
    api: Api, coins: list[str], *, name: str = "smacross", strategy: dict[str, str] | None = None
) -> tuple[str, str]:
    """A pro user with an active strategy whose full_range ran on ``coins``: (svc_id, token)."""
    data = api.register()
    with api.app.state.services.store.write() as conn:
        accounts.grant_plan(
            conn, data["svc_id"], "pro", 3650, now=api.clock.now()
        )  # long: some domains use wall time
        credits.deposit_credits(conn, data["svc_id"], 50, now=int(time.time()))
    token = data["session_token"]
    _ok(api.user("strategy_generate", STRATEGY | (strategy or {}) | {"strategy_name": name}, token=token))
    deadline = time.monotonic() + 10
    while (
        _ok(api.user("strategy_detail", {"strategy_name": name}, token=token))["data"]["status"]
        == "generating"
    ):
        assert time.monotonic() < deadline
        time.sleep(0.02)
    headers = {"Authorization": f"Bearer {token}"}
    timeframe = (strategy or {}).get("timeframe", "1h")
    job = _ok(
        api.post(
            "/backtest",
            params={"action": "full_range"},
            json={"strategy_name": name, "coins": coins, "timeframe": timeframe},
            headers=headers,
        )
    )
    deadline = time.monotonic() + 60
    while (
        _ok(
            api.post(
                "/backtest", params={"action": "status"}, json={"job_id": job["job_id"]}, headers=headers
            )
        )["status"]
        == "running"
    ):
        assert time.monotonic() < deadline
        time.sleep(0.05)
    return data["svc_id"], token


def step_to(api: Api, until: int) -> None:
    """Move the clock an hour at a time to ``until``, running the signal worker at every close."""
    services = api.app.state.services
    while api.clock.now() < until:
        api.clock.advance(HOUR)
        signals.run_once(services)


def test_a_replay_through_the_clock_gives_the_backtest_positions_candle_for_candle(sig_api: Api) -> None:
    creator(sig_api, ["BTC", "ETH"])
    first = signals.run_once(sig_api.app.state.services)
    assert first == {"watches": 2, "evaluated": 0, "signals": 0}  # a new watch starts at the next close
    replay_equals_backtest(sig_api, [("BTC", "BTCUSDT"), ("ETH", "ETHUSDT")], T0, T0 + 10 * 24 * HOUR)


def test_a_replay_of_real_candles_equals_their_backtest(
    settings: Settings, make_api: Any, shared_datasets: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    candles = pl.read_parquet(shared_datasets / "crypto" / "BTCUSDT-1h.parquet").tail(1500)
    DataStore(tmp_path).write_klines("crypto", "BTCUSDT", "1h", candles)
    start = int(candles["open_time"][1000]) // 1000  # 1,000 candles of history before it
    monkeypatch.setenv("SIGNAL_POLL_SECONDS", "0")
    api = make_api(settings.replace(data_dir=tmp_path), clock=ManualClock(start))
    creator(api, ["BTC"])
    signals.run_once(api.app.state.services)
    replay_equals_backtest(api, [("BTC", "BTCUSDT")], start, start + 15 * 24 * HOUR)


def replay_equals_backtest(api: Api, coins: list[tuple[str, str]], t0: int, end: int) -> None:
    """Step the clock from ``t0`` to ``end`` and compare every signal with the backtest of
    ``[t0, end - 1h]`` (the watch's first candle opens at ``t0``, the last closed one at ``end - 1h``):
    the same positions (time, side, levels), fills, exits and results."""
    services = api.app.state.services
    step_to(api, end)
    engine = compile_strategy(STRATEGY["entry_condition"], STRATEGY["tp_condition"], STRATEGY["sl_condition"])
    for coin, symbol in coins:
        expected = drivers.backtest(
            engine,
            symbol,
            "1h",
            t0,
            end - HOUR,
            store=DataStore(services.settings.data_dir),
            market_type="spot",
            spread_pct=market.coin_spread(services, "crypto", symbol),
        ).to_dict()  # the API's defaults, at the coin's spread as live signals execute
        trades = {t["signal_time"]: t for t in expected["trades"]}
        placed = [p for p in expected["all_positions"] if p["fate"] in ("traded", "expired")]
        if len(placed) > 1 and trades.get(placed[-2]["signal_time"], {}).get("exit_reason") == "end":
            # The backtest's range end closes the open trade on the last candle (reason end), which
            # frees the coin for a signal on that candle; live, the trade is still open.
            assert placed[-1]["signal_time"] == (end - HOUR) * 1000
            placed = placed[:-1]
        with services.store.read() as conn:
            rows = sorted(
                (r for r in conn.execute(signal_queries.signals.select()) if r.coin == coin),
                key=lambda r: r.signal_ms,
            )
        assert len(placed) >= 3
        assert [(r.signal_ms, r.side, r.limit_price, r.tp_price, r.sl_price) for r in rows] == [
            (p["signal_time"], p["side"], p["limit_price"], p["tp_price"], p["sl_price"]) for p in placed
        ]
        for row, p in zip(rows, placed, strict=True):
            trade = trades.get(p["signal_time"])
            if trade is None:
                assert row.status in ("waiting", "closed") and row.fill_ms is None
                continue
            assert (row.fill_ms, row.entry_price) == (trade["fill_time"], trade["entry_price"])
            if trade["exit_reason"] == "end":
                assert row.status == "open" and row.exit_ms is None
                continue
            assert (row.status, row.exit_ms, row.exit_price, row.reason) == (
                "closed",
                trade["exit_time"],
                trade["exit_price"],
                trade["exit_reason"],
            )
            assert row.result == ("GAIN" if trade["return_pct"] > 0 else "LOSS")
