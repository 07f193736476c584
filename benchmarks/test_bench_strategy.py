"""Strategy language speed: compile time per strategy, and evaluation throughput of a
three-indicator strategy on the 4.35 M-row BTCUSDT 1m file (candles per second, one core), with
TA-Lib computing the same three indicators as a reference.

Run: ``.venv/bin/python -m pytest benchmarks/test_bench_strategy.py -p no:cacheprovider --benchmark-only -s``
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest

from svc_engine.strategy import compile_strategy

pytest.importorskip("pytest_benchmark")
DATASETS = Path(
    os.environ.get("SVC_SHARED_DATASETS", Path(__file__).resolve().parents[2] / "shared" / "datasets")
)

STRATEGIES = [
    ("RSI(14) crosses above 30 and close is above EMA 200", "2%", "1%"),
    (
        "the 50 EMA crosses over the 200 EMA while volume is above its 20-candle average",
        "risk reward 2",
        "stop loss below the lowest low of the last 10 candles",
    ),
    (
        "close breaks above the upper Bollinger band (20, 2) after 3 red candles in a row",
        "take profit at 2 x ATR(14)",
        "stop loss at the middle band",
    ),
    ("MACD histogram turns positive and price is within 2% of the 100-day SMA", None, None),
    (
        "(RSI(14) below 30 or stochastic %K below 20) and close > SMA(200), buy 0.5% below close",
        "take profit at the upper Keltner channel",
        "1.5 x ATR(14) below entry",
    ),
]
THREE_INDICATORS = (
    "RSI(14) crosses above 30 and close is above EMA(200) and volume is above its 20-candle average"
)


@pytest.fixture(scope="module")
def btc_1m() -> pl.DataFrame:
    path = DATASETS / "crypto" / "BTCUSDT-1m.parquet"
    if not path.exists():
        pytest.skip(f"{path} not found (set SVC_SHARED_DATASETS)")
    return pl.read_parquet(path)


def compile_all() -> None:
    for entry, tp, sl in STRATEGIES:
        compile_strategy(entry, tp, sl)


def test_bench_compile(benchmark: Any) -> None:
    compile_all()
    benchmark.pedantic(compile_all, rounds=50, iterations=1)
    per_strategy_ms = benchmark.stats.stats.mean / len(STRATEGIES) * 1e3
    benchmark.extra_info.update(strategies=len(STRATEGIES), ms_per_strategy=per_strategy_ms)
    print(
        f"\ncompile: {per_strategy_ms:.3f} ms per strategy (mean over {len(STRATEGIES)} example strategies; "
        f"aim < 5 ms)"
    )


def test_bench_evaluate_three_indicators_btcusdt_1m(benchmark: Any, btc_1m: pl.DataFrame) -> None:
    strategy = compile_strategy(THREE_INDICATORS, "take profit 2 x ATR(14)", "1%")
    strategy.evaluate(btc_1m.head(1_000))  # load the compiled kernels first
    # A warm-up round: the kernels' variants that write into kept arrays load on the first full run.
    signals = benchmark.pedantic(strategy.evaluate, args=(btc_1m,), rounds=5, iterations=1, warmup_rounds=1)
    seconds = benchmark.stats.stats.min
    rate = btc_1m.height / seconds
    reference = _talib_seconds(btc_1m)
    benchmark.extra_info.update(candles=btc_1m.height, signals=signals.height, candles_per_second=rate)
    ratio = f"; TA-Lib alone for RSI+EMA+SMA: {reference:.3f} s" if reference else ""
    print(
        f"\nevaluate '{THREE_INDICATORS}' on BTCUSDT 1m: {btc_1m.height:,} candles, "
        f"{signals.height:,} signals in {seconds:.3f} s = {rate / 1e6:.1f} M candles/s on one core{ratio}"
    )


def _talib_seconds(klines: pl.DataFrame) -> float | None:
    try:
        import talib
    except ImportError:
        return None
    close = np.ascontiguousarray(klines["close"].to_numpy())
    volume = np.ascontiguousarray(klines["volume"].to_numpy())
    began = time.perf_counter()
    talib.RSI(close, 14)
    talib.EMA(close, 200)
    talib.SMA(volume, 20)
    return time.perf_counter() - began
