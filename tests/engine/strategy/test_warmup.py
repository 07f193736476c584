"""`Strategy.warmup_candles`: the stabilisation warm-up of recursive indicators, next to `candle_count`.

The numbers are derived by hand from the rule: an indicator's lookback plus ``ceil(100 / alpha)``
for each recursive smoothing (EMA alpha = 2/(n+1), Wilder alpha = 1/n), composed along sources,
"N candles ago" shifts and crosses, plus one (as ``candle_count``).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest

from svc_engine.strategy import Strategy, compile_strategy
from svc_engine.strategy import ast as A
from svc_engine.strategy.compiler import TREND_SETTLE, Context, lookback, settle


@pytest.mark.parametrize(
    ("entry", "tp", "candle_count", "warmup"),
    [
        # RSI(14): lookback 14 + 100 x 14 (Wilder); the cross needs one candle more; plus one.
        ("RSI(14) crosses above 30", None, 16, 14 + 1400 + 1 + 1),
        # EMA(200): lookback 199 + ceil(100 x 201 / 2) = 10050.
        ("close is above EMA(200)", None, 200, 199 + 10050 + 1),
        # MACD(12, 26, 9) signal line: slow EMA 25 + 1350, then the signal EMA 8 + 500.
        ("MACD line crosses above MACD signal line", None, 35, 25 + 1350 + 8 + 500 + 1 + 1),
        # EMA(9) of RSI(14): the EMA settles after its source does.
        ("EMA(9) of RSI(14) crosses above 50", None, 24, (14 + 1400) + (8 + 500) + 1 + 1),
        # "3 candles ago" shifts the settled series by 3.
        ("RSI(14) is above RSI(14) 3 candles ago", None, 18, 14 + 1400 + 3 + 1),
        # Keltner upper = EMA(20) + 2 ATR(20): the ATR's Wilder smoothing (100 x 20) dominates.
        ("close crosses above the upper Keltner channel (20, 2)", None, 22, 20 + 2000 + 1 + 1),
        # An ATR exit counts like an indicator in the entry.
        ("close is above SMA(20)", "2 x ATR(14) above entry", 20, 14 + 1400 + 1),
        # Session VWAP sums the UTC day so far: up to 1440 1m candles.
        ("close crosses above VWAP", None, 2, 1439 + 1 + 1),
        ("a trend line breaks upward", None, 16, TREND_SETTLE + 1),
    ],
)
def test_warmup_candles_of_recursive_programs(
    entry: str, tp: str | None, candle_count: int, warmup: int
) -> None:
    strategy = compile_strategy(entry, tp)
    assert strategy.candle_count == candle_count
    assert strategy.warmup_candles == warmup


@pytest.mark.parametrize(
    "entry",
    [
        "SMA(10) crosses above SMA(30)",
        "close crosses above the upper Bollinger band (20, 2)",
        "price makes a new 20-candle high",
        "CCI(20) crosses above 100 and Williams %R(14) is below -80",
        "close is above WMA(50) and ROC(10) is above 2",
        "3 green candles in a row",
    ],
)
def test_window_only_programs_need_no_more_than_candle_count(entry: str) -> None:
    strategy = compile_strategy(entry, "3%", "2%")
    assert strategy.warmup_candles == strategy.candle_count


def test_trend_settle_is_the_documented_sum() -> None:
    assert TREND_SETTLE == 14 + 1400 + 3 * (199 + 15) + 20 == 2076


def test_settle_composes_through_arithmetic_and_levels() -> None:
    rsi = A.Ind("rsi", (14,))
    ema = A.Ind("ema", (50,))
    assert settle(A.Arith("-", rsi, ema)) == max(1414, 49 + 2550) == 2599
    assert settle(A.Lag(ema, 5)) == 2599 + 5
    assert settle(A.After(A.Compare(">", rsi, A.Num(50.0)), A.Compare("<", ema, A.Num(1.0)))) == 2600
    assert lookback(A.Lag(ema, 5)) == 54


def test_warmup_is_derived_and_the_program_is_unchanged() -> None:
    strategy = compile_strategy("RSI(14) crosses above 30 and close is above EMA(200)", "3%", "2%")
    text = strategy.to_json()
    assert "warmup" not in text
    again = Strategy.from_json(text)
    assert again.to_json() == text
    assert again.warmup_candles == strategy.warmup_candles == 10250
    assert strategy.describe() == (
        "long when RSI(14) crosses above 30 and close is above EMA(200);"
        " take profit 3% above entry; stop loss 2% below entry"
    )


@pytest.fixture(scope="module")
def btc_closes(shared_datasets: Path) -> pl.DataFrame:
    frame = pl.read_parquet(shared_datasets / "crypto" / "BTCUSDT-1m.parquet")
    return frame.slice(1_000_000, 60_000)


@pytest.mark.parametrize(
    "node",
    [
        A.Ind("ema", (200,)),
        A.Ind("rsi", (14,)),
        A.Ind("atr", (14,)),
        A.Ind("macd", (12, 26, 9), "histogram"),
        A.Ind("ema", (9,), "", A.Ind("rsi", (14,))),
        A.Ind("keltner", (20, 2.0), "upper"),
        A.Ind("vwap", (0,)),
    ],
)
def test_a_restart_settle_candles_back_is_bit_identical(btc_closes: pl.DataFrame, node: A.Node) -> None:
    whole = Context(btc_closes).values(node)
    back = settle(node)
    differed_at_candle_count = 0
    for start in (12_000, 25_000, 41_000):
        part = Context(btc_closes.slice(start - back)).values(node)
        np.testing.assert_array_equal(part[back:], whole[start:])
        short = Context(btc_closes.slice(start - lookback(node))).values(node)
        differed_at_candle_count += int(np.any(short[lookback(node) :] != whole[start:]))
    # The premise: the first-defined-value warm-up alone does not give the same floats.
    assert differed_at_candle_count == 3


@pytest.mark.parametrize(
    "node",
    [
        A.Ind("sma", (20,)),
        A.Ind("sma", (200,)),
        A.Ind("sma", (20,), "", A.Field("volume")),
        A.Ind("wma", (50,)),
        A.Ind("bb", (20, 2.0), "upper"),
        A.Ind("stoch", (14, 3, 3), "%d"),
        A.Ind("cci", (20,)),
        A.Ind("willr", (14,)),
        A.Ind("roc", (10,)),
        A.Ind("donchian", (20,), "middle"),
        A.Ind("bb", (20, 2.0), "bandwidth"),
        A.Ind("vwap", (30,)),
    ],
)
def test_window_indicators_restart_bit_identical_after_their_lookback(
    btc_closes: pl.DataFrame, node: A.Node
) -> None:
    """Windows need no stabilisation: running sums are kept exact, so no rounding drift carries over."""
    assert settle(node) == lookback(node)
    whole = Context(btc_closes).values(node)
    back = lookback(node)
    for start in (12_000, 25_000, 41_000):
        part = Context(btc_closes.slice(start - back)).values(node)
        np.testing.assert_array_equal(part[back:], whole[start:])


def test_trend_events_restart_identical_after_trend_settle(btc_closes: pl.DataFrame) -> None:
    events = ("break_up", "break_down", "return_up", "return_down")
    whole = Context(btc_closes.slice(0, 30_000))
    fired = {e: whole.truth(A.TrendEvent(e)) for e in events}
    assert sum(int(f.sum()) for f in fired.values()) > 100
    for start in (5_000, 21_000):
        part = Context(btc_closes.slice(start - TREND_SETTLE, 30_000 - start + TREND_SETTLE))
        for event in events:
            restarted = part.truth(A.TrendEvent(event))
            np.testing.assert_array_equal(restarted[TREND_SETTLE:], fired[event][start:])
