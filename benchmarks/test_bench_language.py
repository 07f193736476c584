"""Strategy language of issue 20: compile time per condition over the trader corpus, and evaluation
speed of each new indicator (and candle pattern) on the 4.35 M-row BTCUSDT 1m file, printed in
candles per second (one core, numba kernels, first call's compilation excluded).

Run: ``.venv/bin/python -m pytest benchmarks/test_bench_language.py -p no:cacheprovider --benchmark-only -s``
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import polars as pl
import pytest

from svc_engine.strategy import ast as A
from svc_engine.strategy import compile_strategy
from svc_engine.strategy.compiler import Context

pytest.importorskip("pytest_benchmark")
DATASETS = Path(
    os.environ.get("SVC_SHARED_DATASETS", Path(__file__).resolve().parents[2] / "shared" / "datasets")
)
CORPUS = Path(__file__).resolve().parents[1] / "tests" / "engine" / "strategy" / "corpus" / "accepted.txt"

NEW = {
    "ADX(14)": A.Ind("dmi", (14,), "adx"),
    "+DI(14)": A.Ind("dmi", (14,), "+di"),
    "Aroon oscillator(25)": A.Ind("aroon", (25,), "oscillator"),
    "parabolic SAR(0.02, 0.2)": A.Ind("sar", (0.02, 0.2)),
    "Supertrend(10, 3)": A.Ind("supertrend", (10, 3.0), "line"),
    "Ichimoku cloud top(9, 26, 52)": A.Ind("ichimoku", (9, 26, 52), "cloud top"),
    "OBV": A.Ind("obv", ()),
    "A/D line": A.Ind("ad", ()),
    "MFI(14)": A.Ind("mfi", (14,)),
    "CMF(20)": A.Ind("cmf", (20,)),
    "StochRSI %D(14, 14, 3)": A.Ind("stochrsi", (14, 14, 3), "%d"),
    "momentum(10)": A.Ind("mom", (10,)),
    "DEMA(20)": A.Ind("dema", (20,)),
    "TEMA(20)": A.Ind("tema", (20,)),
    "HMA(20)": A.Ind("hma", (20,)),
    "standard deviation(20)": A.Ind("stddev", (20,)),
    "z-score(20)": A.Ind("zscore", (20,)),
    "ATR%(14)": A.Ind("natr", (14,)),
    "Bollinger %B(20, 2)": A.Ind("bb", (20, 2.0), "%b"),
    "EMA(9) of MFI(14)": A.Ind("ema", (9,), "", A.Ind("mfi", (14,))),
}
PATTERNS = [
    "engulfing",
    "harami",
    "doji",
    "hammer",
    "inverted hammer",
    "shooting star",
    "morning star",
    "evening star",
    "three white soldiers",
    "three black crows",
]


@pytest.fixture(scope="module")
def btc_1m() -> pl.DataFrame:
    path = DATASETS / "crypto" / "BTCUSDT-1m.parquet"
    if not path.exists():
        pytest.skip(f"{path} not found (set SVC_SHARED_DATASETS)")
    return pl.read_parquet(path)


def corpus() -> list[tuple[str, dict[str, str]]]:
    out = []
    for line in CORPUS.read_text().splitlines():
        if line and not line.startswith("#"):
            side, text = line.split(" => ", 1)[0].split(" | ", 1)
            kw = {"market_type": "futures", "position_side": "short"} if side == "short" else {}
            out.append((text, kw))
    return out


def test_compile_time_per_condition(benchmark) -> None:  # type: ignore[no-untyped-def]
    rows = corpus()

    def compile_corpus() -> None:
        for text, kw in rows:
            compile_strategy(text, **kw)

    benchmark.pedantic(compile_corpus, rounds=3, iterations=1)
    per = benchmark.stats["mean"] / len(rows)
    print(f"\ncompile: {len(rows)} corpus conditions, {per * 1e6:.0f} us per condition")


def test_evaluation_speed_of_each_new_indicator(btc_1m: pl.DataFrame, benchmark) -> None:  # type: ignore[no-untyped-def]
    small = Context(btc_1m.head(1000))
    for node in NEW.values():
        small.values(node)  # numba compiles (or loads its cache) outside the timing
    n = btc_1m.height
    print(f"\nevaluation on {n:,} BTCUSDT 1m candles (one core):")
    for name, node in NEW.items():
        ctx = Context(btc_1m)
        for column in ("open", "high", "low", "close", "volume"):
            ctx.array(column)  # frame -> arrays is not the indicator's time
        start = time.perf_counter()
        ctx.values(node)
        took = time.perf_counter() - start
        print(f"  {name:32s} {took * 1e3:8.1f} ms  {n / took / 1e6:8.1f} M candles/s")
    for pattern in PATTERNS:
        side = "bullish" if pattern in ("engulfing", "harami") else ""
        node = A.Pattern(pattern, side)
        Context(btc_1m.head(1000)).truth(node)
        ctx = Context(btc_1m)
        for column in ("open", "high", "low", "close"):
            ctx.array(column)
        start = time.perf_counter()
        ctx.truth(node)
        took = time.perf_counter() - start
        print(f"  {pattern + ' pattern':32s} {took * 1e3:8.1f} ms  {n / took / 1e6:8.1f} M candles/s")
    benchmark.pedantic(lambda: Context(btc_1m).values(NEW["ADX(14)"]), rounds=1, iterations=1)
