"""Hand-made series with known answers for ``detect_trends``."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from trend_helpers import candle, falling_resistance, flat, frame, line, mirror

from svc_engine.data.times import ms_columns
from svc_engine.indicators import atr_nb
from svc_engine.trend import break_events, detect_trends

COLS = [
    "index",
    "way",
    "is_return_to_trend",
    "high_p1_index",
    "high_p1_price",
    "high_p2_index",
    "high_p2_price",
]


def rows(k: pl.DataFrame, **params: object) -> list[tuple]:
    return detect_trends(k, **params).select(COLS).rows()


def broken_at_45(n: int = 60) -> dict[str, np.ndarray]:
    cols = falling_resistance(n)
    candle(cols, 45, 12.0, 9.0, 11.5)  # line(45) = 11
    return cols


def test_clean_falling_resistance_breaks_at_the_known_candle() -> None:
    k = frame(broken_at_45())
    out = detect_trends(k, symbol="BTCUSDT", timeframe="1m")
    assert out.height == 1
    row = ms_columns(out).row(0, named=True)
    assert row["symbol"] == "BTCUSDT" and row["timeframe"] == "1m"
    assert (row["index"], row["open_time"], row["way"], row["is_return_to_trend"]) == (
        45,
        2_700_000,
        "BUY",
        False,
    )
    assert (row["high_p1_time"], row["high_p1_index"], row["high_p1_price"]) == (900_000, 15, 15.0)
    assert (row["high_p2_time"], row["high_p2_index"], row["high_p2_price"]) == (1_800_000, 30, 13.0)
    assert row["low_p1_index"] is None and row["low_p2_price"] is None
    assert row["break_open_time"] == 2_700_000


def test_close_on_the_line_is_not_a_break_and_break_tol_raises_the_bar() -> None:
    cols = falling_resistance()
    candle(cols, 45, 12.0, 9.0, line(45))
    assert rows(frame(cols)) == []
    cols = broken_at_45()
    atr45 = atr_nb(cols["high"], cols["low"], cols["close"], 14)[45]
    assert 0.5 / atr45 == pytest.approx(0.39935, abs=1e-5)  # the close is 0.5 above the line
    assert [r[0] for r in rows(frame(cols), break_tol=0.399)] == [45]
    assert rows(frame(cols), break_tol=0.4) == []


def test_line_is_only_active_after_anchor_two_is_confirmed() -> None:
    # Candle 34 closes far above the future line, but pivot 30 is only known at 35.
    cols = falling_resistance()
    candle(cols, 34, 13.0, 9.0, 12.9)
    assert rows(frame(cols)) == []


def test_retest_that_holds_gives_one_return_signal() -> None:
    cols = broken_at_45()
    for i in (46, 47):
        candle(cols, i, 12.5, 11.8, 12.2)
    candle(cols, 48, 12.0, 10.7, 11.5)  # low 0.1 above line(48) = 10.6
    candle(cols, 49, 12.0, 10.7, 11.5)  # touches again: at most one return per break
    expected_line = (15, 15.0, 30, 13.0)
    assert rows(frame({c: v[:50] for c, v in cols.items()})) == [
        (45, "BUY", False, *expected_line),
        (48, "BUY", True, *expected_line),
    ]
    out = detect_trends(frame(cols)).filter(pl.col("is_return_to_trend"))
    assert ms_columns(out)["break_open_time"].to_list() == [45 * 60_000]


def test_retest_that_fails_after_a_close_back_through_the_line() -> None:
    cols = broken_at_45()
    candle(cols, 46, 12.5, 11.8, 12.2)
    candle(cols, 47, 12.5, 10.0, 10.5)  # closes below line(47) = 10.73: the break failed
    candle(cols, 48, 12.0, 10.7, 11.5)  # would be a retest
    assert [r[:3] for r in rows(frame(cols))] == [(45, "BUY", False)]


def test_retest_window_is_two_to_twenty_candles() -> None:
    def retest_at(touch: int, **params: object) -> list[tuple]:
        cols = broken_at_45(70)
        for i in range(46, 70):
            candle(cols, i, 13.5, 12.5, 13.0)  # far above the line (< 11)
        candle(cols, touch, 13.5, line(touch), 13.0)
        return [r[:3] for r in rows(frame(cols), **params) if r[2]]

    assert retest_at(46) == []  # one candle after the break: too early
    assert retest_at(47) == [(47, "BUY", True)]
    assert retest_at(65) == [(65, "BUY", True)]
    assert retest_at(66) == []  # 21 candles after
    assert retest_at(46, retest_min=1) == [(46, "BUY", True)]
    assert retest_at(55, retest_max=10) == [(55, "BUY", True)]
    assert retest_at(56, retest_max=10) == []


def test_early_touch_does_not_consume_the_retest() -> None:
    cols = broken_at_45()
    candle(cols, 46, 12.5, line(46), 12.2)
    candle(cols, 47, 12.5, line(47) + 0.05, 12.2)
    candle(cols, 48, 12.5, 12.0, 12.2)
    assert [r[:3] for r in rows(frame(cols))][1:] == [(47, "BUY", True)]


def test_line_expires_after_window_candles() -> None:
    def break_at(t: int, **params: object) -> list[int]:
        cols = flat(230)
        cols["high"][15], cols["high"][30] = 15.0, 14.9
        candle(cols, t, 15.0, 9.0, 14.5)  # line(214) = 13.67, far below 14.5
        return [r[0] for r in rows(frame(cols), **params)]

    assert break_at(214) == [214]  # 214 - 15 = 199 = window
    assert break_at(215) == []  # expired
    assert break_at(100, window=84) == []
    assert break_at(99, window=84) == [99]


def test_equal_anchors_make_no_line() -> None:
    cols = flat(60)
    cols["high"][15] = cols["high"][30] = 13.0
    candle(cols, 45, 14.0, 9.0, 13.5)
    assert rows(frame(cols)) == []
    cols["high"][15] = 13.01
    assert rows(frame(cols)) == [(45, "BUY", False, 15, 13.01, 30, 13.0)]


def test_tangent_is_the_lowest_slope_and_older_anchor_wins_a_tie() -> None:
    cols = flat(60)
    cols["high"][[12, 25, 38]] = [16.0, 15.5, 13.0]  # slopes from 12: -3/26, from 25: -2.5/13 (lower)
    candle(cols, 50, 11.5, 9.0, 11.0)  # above the tangent (10.69), below the line from 12 (11.62)
    assert rows(frame(cols)) == [(50, "BUY", False, 25, 15.5, 38, 13.0)]
    cols["high"][[12, 25, 38]] = [16.0, 15.0, 14.0]  # collinear: equal slopes
    candle(cols, 50, 13.5, 9.0, 13.3)  # line(50) = 13.08
    assert rows(frame(cols)) == [(50, "BUY", False, 12, 16.0, 38, 14.0)]


def test_a_close_above_the_line_rejects_the_candidate() -> None:
    cols = flat(60)
    cols["high"][[12, 25, 38]] = [16.0, 15.5, 13.0]
    cols["close"][40] = 12.7  # line 25->38 at 40 is 12.62 (rejected), line 12->38 is 12.77 (kept)
    cols["high"][40] = 12.8
    candle(cols, 50, 11.8, 9.0, 11.7)  # line 12->38 at 50 = 11.615
    assert rows(frame(cols)) == [(50, "BUY", False, 12, 16.0, 38, 13.0)]


def test_min_touches_counts_anchors_and_candles_within_touch_tol() -> None:
    cols = broken_at_45()
    assert len(rows(frame(cols), min_touches=3)) == 0
    # Within 0.1 ATR (1.34 at 35) of the line; at 18, not to hide pivot 30 (highs of 20..29 must be lower).
    cols["high"][18] = line(18) - 0.05
    assert [r[0] for r in rows(frame(cols), min_touches=3)] == [45]
    assert rows(frame(cols), min_touches=4) == []
    assert [r[0] for r in rows(frame(cols), min_touches=3, touch_tol=0.03)] == []


def test_no_line_from_anchors_before_the_last_break() -> None:
    cols = broken_at_45()
    cols["high"][52] = 11.0  # pivot high below 15 (at 15) and 12 (at 45, the break candle)
    candle(cols, 59, 12.0, 9.0, 11.9)
    assert [r[0] for r in rows(frame(cols))] == [45]


def test_support_mirrors_resistance() -> None:
    out = detect_trends(mirror(frame(broken_at_45())))
    assert out.select(
        "index", "way", "low_p1_index", "low_p1_price", "low_p2_index", "low_p2_price"
    ).rows() == [(45, "SELL", 15, -15.0, 30, -13.0)]
    assert out["high_p1_index"].to_list() == [None]


def test_other_side_line_is_reported_with_the_break() -> None:
    cols = broken_at_45()
    cols["low"][[12, 27]] = [5.0, 6.0]  # rising support from 12 to 27, active from 32
    row = detect_trends(frame(cols)).row(0, named=True)
    assert (
        row["way"],
        row["low_p1_index"],
        row["low_p1_price"],
        row["low_p2_index"],
        row["low_p2_price"],
    ) == ("BUY", 12, 5.0, 27, 6.0)


def test_atr_warm_up_means_zero_tolerance() -> None:
    def poke(offset: int) -> list[int]:
        cols = flat(offset + 11)  # ends at the poke: the line keeps falling after it
        cols["high"][offset + 3], cols["high"][offset + 7] = 15.0, 13.0  # line built at offset + 8
        value = 15.0 - 2.0 * 7 / 4.0  # line at offset + 10
        candle(cols, offset + 10, value + 0.5, 9.0, value + 0.01)
        return [r[0] for r in rows(frame(cols), left=2, right=1, min_gap=2, break_tol=1.0)]

    assert poke(0) == [10]  # ATR undefined at 10: tolerance 0, a 0.01 poke breaks
    assert poke(20) == []  # ATR defined at 30: needs a close one ATR above the line
    atr = atr_nb(*(flat(20)[c] for c in ("high", "low", "close")), 14)
    assert np.isnan(atr[:14]).all() and atr[14] == 1.0


def test_empty_and_tiny_series() -> None:
    assert detect_trends(frame(flat(0))).height == 0
    assert detect_trends(frame(flat(3))).columns[:4] == ["symbol", "timeframe", "open_time", "index"]


def test_bad_input_gives_clear_errors() -> None:
    k = frame(flat(30))
    with pytest.raises(ValueError, match="lack the columns \\['close'\\]"):
        detect_trends(k.drop("close"))
    with pytest.raises(ValueError, match="strictly increasing \\(row 1\\)"):
        detect_trends(k.reverse())
    with pytest.raises(ValueError, match="high, low or close has a NaN or infinite value \\(row 0\\)"):
        detect_trends(k.with_columns(pl.lit(float("nan")).alias("high")))
    with pytest.raises(ValueError, match="unknown trend parameter 'lenght'"):
        detect_trends(k, lenght=3)
    with pytest.raises(ValueError, match="window must be >= min_gap"):
        detect_trends(k, window=3)
    with pytest.raises(TypeError, match="polars DataFrame"):
        detect_trends(k.to_dict())  # type: ignore[arg-type]


def test_break_events_flag_the_signal_candles() -> None:
    cols = broken_at_45()
    for i in (46, 47):
        candle(cols, i, 12.5, 11.8, 12.2)
    candle(cols, 48, 12.0, 10.7, 11.5)
    k = frame(cols)
    ev = break_events(k)
    assert ev.height == 60 and ev["open_time"].dt.epoch("ms").to_list() == k["open_time"].to_list()
    assert {c: ev[c].arg_true().to_list() for c in ev.columns[1:]} == {
        "break_up": [45],
        "break_down": [],
        "return_up": [48],
        "return_down": [],
    }
    mirrored = break_events(mirror(k))
    assert mirrored["break_down"].arg_true().to_list() == [45]
    assert mirrored["return_down"].arg_true().to_list() == [48]
    assert not mirrored["break_up"].any() and not mirrored["return_up"].any()
