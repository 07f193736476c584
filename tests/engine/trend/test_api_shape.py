"""signal_to_api: the Trend signal object, its anchors within the 200-candle snapshot."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest
from trend_helpers import candle, falling_resistance, frame

from svc_engine.data.times import ms_columns
from svc_engine.trend import detect_trends, signal_summary, signal_to_api


def test_hand_made_break_in_api_shape() -> None:
    cols = falling_resistance()
    candle(cols, 45, 12.0, 9.0, 11.5)
    k = frame(cols)
    api = signal_to_api(detect_trends(k, symbol="BTCUSDT", timeframe="1m"), k)
    assert {
        key: api[key] for key in ("coin_name", "graph_type", "timestamp", "way", "is_return_to_trend")
    } == {
        "coin_name": "BTCUSDT",
        "graph_type": "1m",
        "timestamp": "2700",
        "way": "BUY",
        "is_return_to_trend": False,
    }
    # The series is shorter than 200 candles: the snapshot starts at candle 0.
    assert api["trend_data"] == {"high_trend": [[900_000, 15, 15.0], [1_800_000, 30, 13.0]]}
    assert len(api["klines_data"]) == 46
    assert api["klines_data"][-1] == [2_700_000, 11.5, 12.0, 9.0, 11.5, 1.0]
    assert signal_to_api(detect_trends(k), k, with_klines=False)["klines_data"] == []


def test_real_signals_fit_their_snapshot(shared_datasets: Path) -> None:
    k = pl.read_parquet(shared_datasets / "crypto" / "BTCUSDT-4h.parquet").head(4000)
    signals = detect_trends(k, symbol="BTCUSDT", timeframe="4h")
    for row in ms_columns(signals).iter_rows(named=True):
        api = signal_to_api(row, k)
        snap = api["klines_data"]
        assert len(snap) == min(200, row["index"] + 1)
        assert snap[-1][0] == row["open_time"] and api["timestamp"] == str(row["open_time"] // 1000)
        side = "high_trend" if row["way"] == "BUY" else "low_trend"
        assert side in api["trend_data"]
        for name, anchors in api["trend_data"].items():
            column = 2 if name == "high_trend" else 3
            for ms, index, price in anchors:
                assert 0 <= index < len(snap)
                assert snap[index][0] == ms and snap[index][column] == price
            assert anchors[0][1] < anchors[1][1] < len(snap)
    assert signals.height == 103


def test_a_row_whose_candles_are_missing_is_refused() -> None:
    cols = falling_resistance()
    candle(cols, 45, 12.0, 9.0, 11.5)
    k = frame(cols)
    signals = detect_trends(k)
    with pytest.raises(ValueError, match="signal candle at open_time 2700000 is not in the klines"):
        signal_to_api(signals, k.head(40))
    with pytest.raises(ValueError, match="one signal row, got a frame of 0 rows"):
        signal_to_api(signals.clear(), k)
    with pytest.raises(ValueError, match="lack the columns \\['open', 'volume'\\]"):
        signal_to_api(signals, k.drop("open", "volume"))
    assert np.isfinite(signals["high_p1_price"].to_numpy()).all()


def test_list_record_is_the_detail_without_lines_and_candles() -> None:
    cols = falling_resistance()
    candle(cols, 45, 12.0, 9.0, 11.5)
    k = frame(cols)
    row = detect_trends(k, symbol="BTCUSDT", timeframe="1m").row(0, named=True)
    detail = signal_to_api(row, k)
    assert signal_summary(row) == {
        key: detail[key] for key in ("coin_name", "graph_type", "timestamp", "way", "is_return_to_trend")
    }
    assert set(detail) - set(signal_summary(row)) == {"trend_data", "klines_data"}
