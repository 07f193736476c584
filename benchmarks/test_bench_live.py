"""Live signals at platform scale (issue 28): one close of a 1h candle for 100,000 strategy-coin
pairs (1,000 distinct programs drawn from the language's families, on 100 random-walk coins), through
``svc_engine.live.advance``, against today's path (``svc_api.signals.evaluate.positions``, a whole
backtest per pair since its anchor) measured on a small sample in the same run.

Printed: pairs per second on one core (evaluation, indicators and kernel step), the ratio to today's
path, the split of the time, and the resident memory of the 100,000 pairs' state.

Run: ``.venv/bin/python -m pytest benchmarks/test_bench_live.py -p no:cacheprovider -s -n 0``
"""

from __future__ import annotations

import resource
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest

from svc_engine import live
from svc_engine.data import DataStore
from svc_engine.live import shared
from svc_engine.strategy import ast as A
from svc_engine.strategy import compile_strategy

pytest.importorskip("pytest_benchmark")
COINS, PROGRAMS = 100, 1_000
HOUR = 3_600_000
SETTINGS = {"commission_pct": 0.1, "spread_pct": 0.05}


def family_programs(n: int, seed: int = 28) -> list[Any]:
    """``n`` distinct programs drawn from the language's families (crosses of averages, oscillator
    levels, bands, breakouts, candle runs, MACD; percent, ATR, risk-reward and trailing exits, exit
    conditions and holding times, market entries, shorts on futures), parameters at random."""
    rng = np.random.default_rng(seed)
    pick = lambda xs: xs[int(rng.integers(len(xs)))]  # noqa: E731
    out: dict[str, Any] = {}
    while len(out) < n:
        a, b = sorted(rng.choice(np.arange(5, 61), 2, replace=False).tolist())
        rsi, lvl = int(rng.integers(7, 22)), int(rng.integers(20, 41))
        avg = pick(["sma", "ema", "wma"])
        slow = A.Ind(avg, (b,))
        entries = [
            A.Cross("above", A.Ind(avg, (a,)), A.Ind(avg, (b,))),
            A.Cross("above", A.Field("close"), A.Ind(avg, (b,))),
            A.Cross("above", A.Ind("rsi", (rsi,)), A.Num(float(lvl))),
            A.And(
                (
                    A.Cross("above", A.Ind("rsi", (rsi,)), A.Num(float(lvl))),
                    A.Compare(">", A.Field("close"), A.Ind("ema", (int(rng.integers(50, 201)),))),
                )
            ),
            A.Cross("above", A.Field("close"), A.Ind("bb", (b, 2.0), "upper")),
            A.Cross("above", A.Field("close"), A.Ind("donchian", (b,), "upper")),
            A.Cross("above", A.Ind("macd", (12, 26, 9), "line"), A.Ind("macd", (12, 26, 9), "signal")),
            A.Cross("above", A.Ind("stoch", (14, 3, 3), "%k"), A.Num(float(lvl))),
            A.And((A.Candles("green", int(rng.integers(2, 4))), A.Compare(">", A.Field("close"), slow))),
            A.NewExtreme("high", b, A.Field("close")),
        ]
        entry = pick(entries)
        tp = pick(
            [f"{rng.integers(1, 8)}%", f"{rng.integers(1, 4)} x ATR(14)", "risk reward 2", "no take profit"]
        )
        sl = pick([f"{rng.integers(1, 5)}%", "2 x ATR(14)", f"trailing stop {rng.integers(1, 4)}%"])
        if tp == "risk reward 2" and sl.startswith("trailing"):
            sl = "2%"
        if tp == "no take profit" and not sl.startswith("trailing"):
            tp = "5%"
        hold = f"after {rng.integers(6, 48)} candles"
        rule = pick(
            [
                None,
                None,
                f"exit when RSI({rsi}) rises above 70",
                hold,
                "move the stop to break-even after 1% profit",
            ]
        )
        short = rng.random() < 0.2
        if short:  # mirror the entry: a cross below, on futures
            entry = A.Not(entry)
        program = compile_strategy(
            entry,
            tp,
            sl,
            exit_condition=rule,
            entry_order="market" if rng.random() < 0.2 else None,
            market_type="futures" if short else "spot",
            position_side="short" if short else "long",
        )
        out.setdefault(program.to_json(), program)
    return list(out.values())


def random_walks(n_coins: int, rows: int, seed: int = 28) -> dict[str, pl.DataFrame]:
    """``n_coins`` 1h random walks of ``rows`` candles ending at the same close."""
    rng = np.random.default_rng(seed)
    out = {}
    t = (np.arange(rows, dtype=np.int64) + 480_000) * HOUR
    for k in range(n_coins):
        close = 100.0 * np.exp(np.cumsum(rng.normal(0, 0.01, rows)))
        open_ = np.r_[close[0], close[:-1]]
        wick = np.abs(rng.normal(0, 0.004, (2, rows)))
        high, low = np.maximum(open_, close) * (1 + wick[0]), np.minimum(open_, close) * (1 - wick[1])
        volume = rng.uniform(1e3, 1e5, rows)
        out[f"C{k:03d}USDT"] = pl.DataFrame(
            {"open_time": t, "open": open_, "high": high, "low": low, "close": close, "volume": volume}
        )
    return out


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _rss_mb() -> float:
    """Resident memory now (``/proc/self/statm``; the peak where it is missing)."""
    try:
        pages = int(Path("/proc/self/statm").read_text().split()[1])
    except OSError:
        return _peak_mb()
    return pages * resource.getpagesize() / 2**20


@pytest.fixture(scope="module")
def world() -> dict[str, Any]:
    programs = family_programs(PROGRAMS)
    pairs = [(p, f"C{k:03d}USDT") for p in range(len(programs)) for k in range(COINS)]
    watch = live.watchlist(programs, pairs, "1h", **SETTINGS)
    rows = live.candles_needed(watch) + 300
    frames = random_walks(COINS, rows)
    return {"programs": programs, "watch": watch, "frames": frames, "rows": rows}


def test_bench_one_close_for_100000_pairs(benchmark: Any, world: dict[str, Any]) -> None:
    watch, frames = world["watch"], world["frames"]
    # the state after a replay of the last 300 candles (orders waiting, trades open), as a restart
    # builds it; then one close after another, each a new candle for every coin
    start = int(frames["C000USDT"]["open_time"][-300])
    rss0 = _rss_mb()
    state, replayed = live.rebuild_state(watch, {c: f[:-3] for c, f in frames.items()}, start)
    state_mb = state.nbytes / 2**20
    replayed_events = replayed.size
    del replayed  # the replay's events are the caller's to write; the closes hold only the state
    closes = iter(range(3, 0, -1))

    def one_close() -> np.ndarray:
        cut = next(closes) - 1  # each round one more candle: the newest close of every coin
        given = {c: shared.CoinCandles.of(f[: f.height - cut]) for c, f in frames.items()}
        return live.advance(watch, state, given)

    events = benchmark.pedantic(one_close, rounds=3, iterations=1)
    seconds = benchmark.stats.stats.median
    rate = len(watch) / seconds
    today = _today_rate(world)
    busy = np.count_nonzero(state["phase"] != 0)
    print(
        f"\none 1h close, {len(watch):,} pairs ({len(world['programs']):,} programs x {COINS} coins): "
        f"{seconds:.3f} s = {rate:,.0f} pairs/s on one core; today's path {today:,.0f} pairs/s "
        f"(issue 28: 142 through the worker) -> {rate / today:,.0f}x"
        f"\nstate: {state_mb:.1f} MB for {len(watch):,} pairs ({state.itemsize} B each), {busy:,} not flat; "
        f"events this close: {events.size:,}; replay of 300 candles: {replayed_events:,} events; "
        f"resident {_rss_mb():,.0f} MB after the closes (before the replay {rss0:,.0f} MB, "
        f"peak {_peak_mb():,.0f} MB)"
    )
    assert rate > 0 and events.dtype == live.EVENT_DTYPE


def _today_rate(world: dict[str, Any], sample: int = 12) -> float:
    """Pairs per second of ``svc_api.signals.evaluate.positions`` (a backtest since the anchor per
    pair; its candles read once per coin, as the worker shares them) on ``sample`` pairs."""
    from svc_api.signals.evaluate import Candles, positions

    store = DataStore(Path(tempfile.mkdtemp(prefix="bench-live-")))
    coins = list(world["frames"])[:3]
    for coin in coins:
        store.write_klines("crypto", coin, "1h", world["frames"][coin])
    candles = Candles(store)
    last = int(world["frames"][coins[0]]["open_time"][-1])
    anchor = last - 72 * HOUR  # the worker's anchor: three days back, as in benchmarks/test_bench_signals.py
    chosen = [(world["programs"][p], coins[p % len(coins)]) for p in range(sample)]
    for program, coin in chosen[:2]:  # warm the numba caches and the candle cache
        positions(
            program,
            coin,
            "crypto",
            "1h",
            anchor_ms=anchor,
            last_ms=last,
            store=store,
            candles=candles,
            spread_pct=0.05,
        )
    began = time.perf_counter()
    for program, coin in chosen:
        positions(
            program,
            coin,
            "crypto",
            "1h",
            anchor_ms=anchor,
            last_ms=last,
            store=store,
            candles=candles,
            spread_pct=0.05,
        )
    return sample / (time.perf_counter() - began)
