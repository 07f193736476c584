"""A whole backtest along the paths a user takes, against a bare numba loop timed in the same run.

Whole = compile the words + evaluate + simulate (with every summary statistic) + the trades frame,
on the 4.35 M-row BTCUSDT 1m file, one thread, for strategies of three indicators from words
(MACD, Bollinger bands, RSI, EMA; ATR exits). Three paths:

- ``polars``: the frame straight from ``pl.read_parquet`` (several chunks, as read), then
  ``sv.simulate(k, s.evaluate(k))``; the first call on a new frame and later calls on the same one;
- ``pandas``: the same candles as a pandas frame with a DatetimeIndex and backtesting.py's
  capitalised columns, ``sv.simulate(p, s.evaluate(p))``;
- ``stored``: ``sv.backtest(s, "BTCUSDT", "1m", store=...)`` from a Parquet store (a temporary copy).

The reference is the bare loop of ``test_bench_sim.py`` (the same fill and exit rules, balance only,
no validation, no records) over the same candles and the strategy's own signals. Every figure is
printed with its ratio to that loop.

Run: ``.venv/bin/python -m pytest benchmarks/test_bench_backtest_paths.py --benchmark-only -s -p no:randomly``
"""

from __future__ import annotations

import importlib.util
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest
from numba import njit

import svc_engine as sv

pytest.importorskip("pytest_benchmark")
DATASETS = Path(
    os.environ.get("SVC_SHARED_DATASETS", Path(__file__).resolve().parents[2] / "shared" / "datasets")
)
BTC_1M = DATASETS / "crypto" / "BTCUSDT-1m.parquet"
pytestmark = pytest.mark.skipif(not BTC_1M.exists(), reason="BTCUSDT 1m dataset not found")

STRATEGIES = {
    "macd_bb_rsi": (
        "RSI(14) < 70 and MACD line crosses above MACD signal line and close > lower Bollinger band (20, 2)",
        "2 x ATR(14) above entry",
        "1 x ATR(14) below entry",
    ),
    "bb_macd_ema": (
        "close crosses above the upper Bollinger band (20, 2) and MACD histogram > 0 and close > EMA(200)",
        "3 x ATR(14) above entry",
        "1.5 x ATR(14) below entry",
    ),
}


def _bare_loop() -> Callable[..., float]:
    """The bare loop of ``test_bench_sim.py`` (one definition of the reference for both files),
    compiled here without numba's cache: a cache entry records the name of the module it was
    compiled in, and this copy's name is not the one pytest gives that file, so a cached entry
    written here broke the next run of ``test_bench_sim.py`` (ModuleNotFoundError: bench_sim)."""
    spec = importlib.util.spec_from_file_location("bench_sim", Path(__file__).with_name("test_bench_sim.py"))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_sim"] = module
    spec.loader.exec_module(module)
    return njit(nogil=True)(module.bare_loop.py_func)


def best_of(fn: Callable[[], Any], rounds: int = 5) -> tuple[float, Any]:
    """Fastest wall time of ``rounds`` calls after one warm-up call (JIT, caches)."""
    out = fn()
    best = float("inf")
    for _ in range(rounds):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def stored(words: tuple[str, str, str], store: sv.DataStore) -> sv.BacktestResult:
    """The stored-symbol path: ``sv.backtest`` loads the series (one chunk of evaluation: one core)."""
    result = sv.backtest(sv.compile_strategy(*words), "BTCUSDT", "1m", store=store, chunks=1)
    assert result.trades.height == result.summary["total_trades"]
    return result


def _once(fn: Callable[[], Any]) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def whole(words: tuple[str, str, str], klines: Any) -> sv.BacktestResult:
    """compile + evaluate + simulate + summary + trades frame, as a notebook writes it."""
    strategy = sv.compile_strategy(*words)
    result = sv.simulate(klines, strategy.evaluate(klines))
    assert result.trades.height == result.summary["total_trades"]
    return result


@pytest.fixture(scope="module")
def candles() -> dict[str, Any]:
    read = pl.read_parquet(BTC_1M)
    arrays = {c: np.ascontiguousarray(read[c].to_numpy()) for c in ("open", "high", "low", "close")}
    pandas = _pandas_frame(read)
    root = tempfile.mkdtemp(prefix="bench-paths-")
    store = sv.DataStore(root)
    store.write_klines("crypto", "BTCUSDT", "1m", read)
    return {
        "path": BTC_1M,
        "read": read,
        "arrays": arrays,
        "pandas": pandas,
        "store": store,
        "n": read.height,
    }


def _pandas_frame(read: pl.DataFrame) -> Any:
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame(
        {name.capitalize(): read[name].to_numpy() for name in ("open", "high", "low", "close", "volume")}
    )
    frame.index = pd.DatetimeIndex(read["open_time"].to_numpy().astype("datetime64[ms]"), name="Date")
    return frame


def _bare_time(bare: Callable[..., float], arrays: dict[str, np.ndarray], result: sv.BacktestResult) -> float:
    """The bare loop over the candles and the strategy's own signals (its placed orders)."""
    pos = result.all_positions
    t = pl.read_parquet(BTC_1M, columns=["open_time"])["open_time"].to_numpy()
    at = np.searchsorted(t, pos["signal_time"].dt.epoch("ms").to_numpy()).astype(np.int64)
    up = np.ones(at.size, np.int8)
    lim, tp, sl = (np.ascontiguousarray(pos[c].to_numpy()) for c in ("limit_price", "tp_price", "sl_price"))
    o, h, lo, c = (arrays[k] for k in ("open", "high", "low", "close"))
    s = result.settings
    wait = round(s.max_wait_days * 1440)
    elapsed, _ = best_of(
        lambda: bare(
            o, h, lo, c, at, up, lim, tp, sl, s.min_candles_between_signals, wait, s.commission_pct / 100
        )
    )
    return elapsed


@pytest.mark.parametrize("name", sorted(STRATEGIES))
def test_bench_whole_backtest_paths(benchmark: Any, candles: dict[str, Any], name: str) -> None:
    words, n = STRATEGIES[name], candles["n"]
    whole(words, candles["read"])  # JIT and the language's tables warm
    fresh = [pl.read_parquet(candles["path"]) for _ in range(2)]  # frames never seen by the engine
    first_t = min(_once(lambda f=f: whole(words, f)) for f in fresh)
    del fresh
    result = benchmark.pedantic(
        lambda: whole(words, candles["read"]), rounds=5, iterations=1, warmup_rounds=1
    )
    polars_t = benchmark.stats.stats.min
    try:
        pandas_t, pandas_r = best_of(lambda: whole(words, candles["pandas"]))
    except (AttributeError, ValueError) as exc:  # an engine that refuses pandas frames: reported
        print(f"\n  pandas frame refused: {exc}")
        pandas_t, pandas_r = float("nan"), result
    stored_t, stored_r = best_of(lambda: stored(words, candles["store"]))
    bare_t = _bare_time(_bare_loop(), candles["arrays"], result)
    load = os.getloadavg()
    print(f"\n  {name}: {' / '.join(w for w in words if w)}")
    print(
        f"  candles {n:,}, signals {result.summary['total_signals']:,}, "
        f"trades {result.summary['total_trades']:,}"
    )
    rows = [
        ("bare numba loop (reference)", bare_t),
        ("polars, frame already seen", polars_t),
        ("polars, first call on a new frame", first_t),
        ("pandas frame (DatetimeIndex, Open..)", pandas_t),
        ("stored symbol sv.backtest", stored_t),
    ]
    for label, t in rows:
        print(f"  {label:38s} {t * 1e3:8.1f} ms  {n / t / 1e6:7.1f} M candles/s  {t / bare_t:5.1f}x bare")
    print(f"  load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    assert pandas_r.summary == result.summary
    assert stored_r.summary["total_trades"] == result.summary["total_trades"]
