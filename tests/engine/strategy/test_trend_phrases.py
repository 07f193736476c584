"""Trend-line phrases compile to trend events and evaluate to svc_engine.trend.break_events."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal

from svc_engine.strategy import ast as A
from svc_engine.strategy import compile_strategy

PHRASES = {
    "a trend line breaks upward": "break_up",
    "the trendline breaks down": "break_down",
    "close breaks above the trend line": "break_up",
    "support trend line breaks": "break_down",
    "a trend line breaks": "break",
    "price returns to the broken trend line": "return",
    "price returns to the trend line broken upward": "return_up",
    "price returns to the trend line broken downward": "return_down",
}


@pytest.mark.parametrize(("text", "event"), PHRASES.items())
def test_trend_phrases_compile(text: str, event: str) -> None:
    s = compile_strategy(text)
    assert s.entry == A.TrendEvent(event)
    assert s.candle_count == 16


@pytest.fixture(scope="module")
def candles(shared_datasets: Path) -> pl.DataFrame:
    return pl.read_parquet(shared_datasets / "crypto" / "ETHUSDT-1h.parquet").slice(1_000, 2_000)


def test_trend_events_drive_signals(candles: pl.DataFrame) -> None:
    from svc_engine.trend import break_events

    events = break_events(candles)
    up = compile_strategy("a trend line breaks upward").evaluate(candles)
    assert up["open_time"].to_list() == events.filter("break_up")["open_time"].to_list()
    assert up.height > 0
    either = compile_strategy("price returns to the broken trend line").evaluate(candles)
    expected = events.filter(pl.col("return_up") | pl.col("return_down"))["open_time"].to_list()
    assert either["open_time"].to_list() == expected
    combined = compile_strategy(
        "a trend line breaks downward and RSI(14) is below 50", market_type="futures", position_side="short"
    ).evaluate(candles)
    assert set(combined["open_time"].to_list()) <= set(events.filter("break_down")["open_time"].to_list())
    assert combined["side"].unique().to_list() in ([], ["short"])


def test_trend_signals_have_no_look_ahead(candles: pl.DataFrame) -> None:
    s = compile_strategy("a trend line breaks or price returns to the broken trend line")
    whole = s.evaluate(candles)
    for k in (700, 1_500):
        prefix = candles.head(k)
        assert_frame_equal(s.evaluate(prefix), whole.filter(pl.col("open_time") <= prefix["open_time"][-1]))
