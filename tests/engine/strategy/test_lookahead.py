"""No look-ahead: for random strategies drawn from the grammar, the signals of the first k candles
are exactly the signals of the whole series up to candle k."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

from svc_engine.strategy import ast as A
from svc_engine.strategy import compile_strategy
from svc_engine.strategy.errors import StrategyCompileError
from svc_engine.strategy.wording import render

SLICE = 2_000

periods = st.integers(min_value=2, max_value=30)
fields = st.sampled_from(["open", "high", "low", "close", "typical"]).map(A.Field)
indicators = st.one_of(
    st.builds(
        lambda n, k: A.Ind(k, (n,)),
        periods,
        st.sampled_from(["sma", "ema", "wma", "atr", "cci", "willr", "roc", "rsi"]),
    ),
    st.builds(lambda n: A.Ind("vwap", (n,)), st.sampled_from([0, 5, 20])),
    st.builds(lambda o: A.Ind("macd", (12, 26, 9), o), st.sampled_from(["line", "signal", "histogram"])),
    st.builds(lambda o: A.Ind("stoch", (14, 3, 3), o), st.sampled_from(["%k", "%d"])),
    st.builds(lambda n, o: A.Ind("bb", (n, 2.0), o), periods, st.sampled_from(["upper", "middle", "lower"])),
    st.builds(lambda n, o: A.Ind("keltner", (n, 1.5), o), periods, st.sampled_from(["upper", "lower"])),
    st.builds(lambda n, o: A.Ind("donchian", (n,), o), periods, st.sampled_from(["upper", "lower"])),
    st.builds(lambda n, f: A.Ind("max", (n,), "", A.Field(f)), periods, st.sampled_from(["high", "close"])),
    st.builds(lambda n, f: A.Ind("min", (n,), "", A.Field(f)), periods, st.sampled_from(["low", "close"])),
    st.builds(lambda n, m: A.Ind("ema", (n,), "", A.Ind("rsi", (m,))), periods, periods),
)
prices = st.one_of(
    fields,
    indicators.filter(lambda i: i.name in ("sma", "ema", "wma", "bb", "keltner", "donchian", "max", "min")),
)
price_values = st.one_of(
    prices,
    st.builds(A.Lag, prices, st.integers(1, 5)),
    st.builds(A.PctOff, st.sampled_from([-2.0, -0.5, 1.0, 3.0]), prices),
)
oscillator = st.sampled_from([A.Ind("rsi", (14,)), A.Ind("stoch", (14, 3, 3), "%k")])
levels = st.integers(10, 90).map(float).map(A.Num)


def _distinct(node: A.Compare | A.Cross) -> bool:
    return node.left != node.right


predicates = st.one_of(
    st.builds(A.Compare, st.sampled_from([">", "<", ">=", "<="]), price_values, prices).filter(_distinct),
    st.builds(A.Cross, st.sampled_from(["above", "below"]), price_values, prices).filter(_distinct),
    st.builds(A.Cross, st.sampled_from(["above", "below"]), oscillator, levels),
    st.builds(
        lambda o, a, b: A.Between(o, A.Num(min(a, b)), A.Num(max(a, b) + 1)),
        oscillator,
        st.integers(5, 60).map(float),
        st.integers(20, 90).map(float),
    ),
    st.builds(A.Within, fields, st.sampled_from([0.5, 1.0, 2.0]), prices),
    st.builds(A.Streak, st.sampled_from(["rise", "fall"]), st.integers(1, 4), price_values),
    st.builds(A.Candles, st.sampled_from(["green", "red"]), st.integers(1, 4)),
    st.builds(A.NewExtreme, st.sampled_from(["high", "low"]), st.integers(2, 40), fields),
)
conditions = st.recursive(
    predicates,
    lambda inner: st.one_of(
        st.builds(lambda items: A.And(tuple(items)), st.lists(inner, min_size=2, max_size=3)),
        st.builds(lambda items: A.Or(tuple(items)), st.lists(inner, min_size=2, max_size=3)),
        st.builds(A.Not, inner),
        st.builds(A.After, inner, inner),
    ),
    max_leaves=5,
)
take_profits = st.one_of(
    st.sampled_from(
        [
            "2%",
            "take profit 3 x ATR(14)",
            "risk reward 2",
            "take profit at the upper Bollinger band",
            "take profit at the highest high of 20 candles",
        ]
    ),
)
stop_losses = st.sampled_from(
    [
        "1%",
        "stop loss 2 x ATR(10)",
        "stop loss at the lowest low of the last 10 candles",
        "stop loss at the lower Keltner channel",
    ]
)


@pytest.fixture(scope="module")
def candles(shared_datasets: Path) -> pl.DataFrame:
    return pl.read_parquet(shared_datasets / "crypto" / "ETHUSDT-1h.parquet").slice(1_000, SLICE)


entry_prices = st.sampled_from(
    ["", ", limit at 0.5% below close", ", limit at EMA(20)", ", limit at lower Bollinger band(20, 2)"]
)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    cond=conditions,
    price=entry_prices,
    tp=take_profits,
    sl=stop_losses,
    cuts=st.lists(st.integers(1, SLICE), min_size=3, max_size=3),
)
def test_prefix_signals_equal_whole_series_signals(
    candles: pl.DataFrame, cond: A.Node, price: str, tp: str, sl: str, cuts: list[int]
) -> None:
    text = render(cond) + price
    try:
        strategy = compile_strategy(text, tp, sl)
    except StrategyCompileError:
        assume(False)
        raise
    whole = strategy.evaluate(candles)
    for k in cuts:
        prefix = candles.head(k)
        expected = whole.filter(pl.col("open_time").dt.epoch("ms") <= prefix["open_time"][-1])
        assert_frame_equal(strategy.evaluate(prefix), expected)
    assert whole.schema["open_time"] == pl.Datetime("ms", "UTC")  # the candles' Int64 ms, with its unit
    first = whole["open_time"].dt.epoch("ms").to_list()[:1]
    if first:
        first_index = candles["open_time"].to_list().index(first[0])
        assert first_index >= strategy.candle_count - 1


@settings(max_examples=60, deadline=None)
@given(cond=conditions)
def test_canonical_wording_is_a_fixed_point(cond: A.Node) -> None:
    try:
        strategy = compile_strategy(render(cond))
    except StrategyCompileError:
        assume(False)
        raise
    again = compile_strategy(strategy.wording["entry"])
    assert again == strategy
    assert again.to_json() == strategy.to_json()
