"""The sentiment score: its parts, its bounds, no look-ahead, and the API items."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest
from trend_helpers import candle, falling_resistance, frame, mirror

from svc_engine.data.times import ms_columns
from svc_engine.trend import detect_trends, market_key, sentiment_history, sentiment_item, trend_indicator


def ramp(n: int, step: float) -> pl.DataFrame:
    close = 100.0 + step * np.arange(n)
    return pl.DataFrame(
        {
            "open_time": np.arange(n, dtype=np.int64) * 60_000,
            "high": close + 1.0,
            "low": close - 1.0,
            "close": close,
        }
    )


def test_steady_rise_scores_80_and_steady_fall_minus_80() -> None:
    up = trend_indicator(ramp(300, 0.5))
    assert ms_columns(up).tail(1).rows() == [(299 * 60_000, 80, "BULLISH")]
    down = trend_indicator(ramp(300, -0.2))
    assert ms_columns(down).tail(1).rows() == [(299 * 60_000, -80, "BEARISH")]


def test_warm_up_parts_are_zero() -> None:
    up = trend_indicator(ramp(300, 0.5))["score"].to_list()
    assert up[:14] == [0] * 14  # nothing defined before RSI/ATR at 14
    assert up[14] == 25  # RSI 100 only
    assert up[49] == 45  # + price above EMA 50
    assert up[59] == 60  # + EMA 50 slope, clipped at 15 (defined from 59)
    assert up[199] == 80  # + price above EMA 200


def test_a_break_adds_20_decaying_over_50_candles() -> None:
    cols = falling_resistance(120)
    candle(cols, 45, 12.0, 9.0, 11.5)
    k = frame(cols)
    breaks = detect_trends(k)
    assert breaks["index"].to_list() == [45]
    with_break = trend_indicator(k, breaks=breaks)["score"].to_numpy()
    without = trend_indicator(k, breaks=breaks.clear())["score"].to_numpy()
    diff = with_break - without
    assert diff[44] == 0 and diff[95:].tolist() == [0] * 25
    # Rounding of the other parts moves the difference by at most one point.
    assert abs(diff[45] - 20) <= 1 and abs(diff[70] - 10) <= 1
    assert (trend_indicator(k)["score"].to_numpy() == with_break).all()


def test_scores_are_bounded_mirror_and_look_ahead_free(shared_datasets: Path) -> None:
    k = pl.read_parquet(shared_datasets / "crypto" / "ETHBTC-1h.parquet").head(3000)
    whole = trend_indicator(k)
    assert whole["score"].min() >= -100 and whole["score"].max() <= 100
    assert set(whole["direction"].unique()) == {"BULLISH", "BEARISH", "NEUTRAL"}
    for cut in (1, 15, 199, 201, 1234, 2999):
        assert trend_indicator(k.head(cut)).equals(whole.head(cut))
    assert (trend_indicator(mirror(k))["score"] == -whole["score"]).all()


def test_api_items_and_history_pages() -> None:
    scores = trend_indicator(ramp(300, 0.5))
    key = market_key("btcusdt", "1m")
    assert sentiment_item(key, scores.row(-1, named=True)) == {
        "market_key": "BTCUSDT#1m",
        "timestamp": 299 * 60,
        "score": 80,
        "direction": "BULLISH",
    }
    first = sentiment_history(key, scores)
    assert (first["count"], first["has_more"], first["oldest_timestamp"]) == (200, True, 100 * 60)
    second = sentiment_history(key, scores, before=first["next_before_timestamp"], limit=500)
    assert (second["count"], second["has_more"], second["next_before_timestamp"]) == (100, False, None)
    assert second["items"][0]["timestamp"] == 99 * 60 and second["limit"] == 200
    with pytest.raises(ValueError, match="<SYMBOL>#<timeframe>"):
        sentiment_item("BTCUSDT-1m", scores.row(0, named=True))


def test_the_last_signal_of_a_candle_counts() -> None:
    k = ramp(30, 0.0)
    both = pl.DataFrame({"open_time": [20 * 60_000, 20 * 60_000], "way": ["BUY", "SELL"]})
    scores = trend_indicator(k, breaks=both)["score"].to_list()
    assert scores[19] == 0 and scores[20] == -20 and scores[25] == -18  # 20 * (1 - 5 / 50)
    assert trend_indicator(k, breaks=both.reverse())["score"].to_list()[20] == 20
