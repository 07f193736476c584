"""The trend outputs say the unit of their times in the dtype (issue 19); the API shapes keep Unix ms."""

from __future__ import annotations

from datetime import UTC, datetime

import numpy as np
import polars as pl
from trend_helpers import candle, falling_resistance, frame

from svc_engine.data.times import TIME, ms_columns, time_series
from svc_engine.trend import (
    SCAN_SCHEMA,
    SIGNAL_SCHEMA,
    break_events,
    detect_trends,
    scan_trends,
    signal_summary,
    signal_to_api,
    trend_indicator,
)


def broken_at_45() -> dict[str, np.ndarray]:
    cols = falling_resistance(60)
    candle(cols, 45, 12.0, 9.0, 11.5)  # a close above the falling line, as in test_detector
    return cols


TIMES = ["open_time", "break_open_time", *(f"{s}_{a}_time" for s in ("high", "low") for a in ("p1", "p2"))]


def test_signal_and_scan_times_are_utc_milliseconds() -> None:
    k = frame(broken_at_45())
    out = detect_trends(k, symbol="BTCUSDT", timeframe="1m")
    assert {c: out.schema[c] for c in TIMES} == dict.fromkeys(TIMES, TIME)
    assert [c for c, t in SIGNAL_SCHEMA.items() if t == TIME] == TIMES
    assert [c for c, t in SCAN_SCHEMA.items() if t == TIME] == TIMES
    row = out.row(0, named=True)
    assert row["open_time"] == datetime(1970, 1, 1, 0, 45, tzinfo=UTC)
    assert row["high_p1_time"] == datetime(1970, 1, 1, 0, 15, tzinfo=UTC)
    assert row["low_p1_time"] is None
    scan = scan_trends(["BTCUSDT"], ["1m"], loader=lambda s, tf: k)
    assert scan.schema == pl.Schema(SCAN_SCHEMA)
    assert scan.drop("market").equals(out)
    empty = scan_trends([], ["1m"])
    assert {c: empty.schema[c] for c in TIMES} == dict.fromkeys(TIMES, TIME)


def test_since_takes_seconds_datetimes_and_iso_strings() -> None:
    k = frame(broken_at_45())
    scan = [
        scan_trends(["BTCUSDT"], ["1m"], since=since, loader=lambda s, tf: k)
        for since in (2700, "1970-01-01T00:45:00Z", datetime(1970, 1, 1, 0, 45, tzinfo=UTC))
    ]
    assert [s.height for s in scan] == [1, 1, 1]
    assert scan[0].equals(scan[1]) and scan[0].equals(scan[2])
    assert scan_trends(["BTCUSDT"], ["1m"], since="1970-01-01T00:45:01", loader=lambda s, tf: k).height == 0


def test_api_objects_are_the_same_from_datetimes_and_from_milliseconds() -> None:
    k = frame(broken_at_45())
    out = detect_trends(k, symbol="BTCUSDT", timeframe="1m")
    api = signal_to_api(out, k)
    assert api == signal_to_api(ms_columns(out).row(0, named=True), k)
    assert api["timestamp"] == "2700" and api["klines_data"][-1][0] == 2_700_000
    assert api["trend_data"]["high_trend"] == [[900_000, 15, 15.0], [1_800_000, 30, 13.0]]
    assert signal_summary(out.row(0, named=True)) == signal_summary(ms_columns(out).row(0, named=True))


def test_candle_aligned_frames_carry_the_klines_times_as_utc_milliseconds() -> None:
    k = frame(broken_at_45())
    assert k.schema["open_time"] == pl.Int64  # a user's frame of Unix ms
    events = break_events(k)
    assert events.schema["open_time"] == TIME
    assert events["open_time"].equals(time_series("open_time", k["open_time"].to_numpy()))
    assert ms_columns(events)["open_time"].to_list() == k["open_time"].to_list()
    assert events.filter("break_up")["open_time"].to_list() == [datetime(1970, 1, 1, 0, 45, tzinfo=UTC)]
    # Klines whose open_time is a datetime column, of any unit, naive or UTC, give the same frames.
    for dtype in (TIME, pl.Datetime("us"), pl.Datetime("ns", "UTC"), pl.Datetime("ms")):
        as_datetimes = k.with_columns(pl.col("open_time").cast(pl.Datetime("ms")).cast(dtype))
        assert detect_trends(as_datetimes).equals(detect_trends(k)), dtype
        assert break_events(as_datetimes).equals(events), dtype


def test_sentiment_scores_carry_utc_milliseconds() -> None:
    k = frame(broken_at_45())
    scores = trend_indicator(k)
    assert scores.schema == pl.Schema({"open_time": TIME, "score": pl.Int64, "direction": pl.Utf8})
    assert ms_columns(scores)["open_time"].to_list() == k["open_time"].to_list()
