"""Validity, the clamp and reject filters (section 2), and the refusal of bad input."""

from __future__ import annotations

import polars as pl
import pytest
from sim_helpers import H, bars, sigs

from svc_engine.data.schema import KlineValidationError
from svc_engine.data.times import ms_columns
from svc_engine.sim import simulate

ROWS = [(10, 10, 10, 10)] + [(10, 10.05, 9.95, 10)] * 9
FREE = {"commission_pct": 0.0, "spread_pct": 0.0, "min_candles_between_signals": 0}


def fates(signals: list[tuple], **kw: object) -> list[str]:
    r = simulate(bars(ROWS), sigs(signals), **(FREE | kw))
    return r.all_positions["fate"].to_list()


@pytest.mark.parametrize(
    ("signal", "fate"),
    [
        ((0, "long", 10.0, None, 9.0), "skipped_invalid"),
        ((0, "long", 10.0, 11.0, None), "skipped_invalid"),
        ((0, "long", float("nan"), 11.0, 9.0), "skipped_invalid"),
        ((0, "long", 10.0, float("inf"), 9.0), "skipped_invalid"),
        ((0, "long", -1.0, 11.0, 9.0), "skipped_invalid"),
        ((0, "long", 10.0, 11.0, 0.0), "skipped_invalid"),
        ((0, "long", 10.0, 9.5, 9.0), "skipped_invalid"),  # tp <= 0
        ((0, "long", 10.0, 11.0, 10.0), "skipped_invalid"),  # sl <= 0
        ((0, "short", 10.0, 11.0, 12.0), "skipped_invalid"),
        ((0, "long", 10.0, 10.005, 9.0), "skipped_tp_below_min"),
    ],
)
def test_invalid_and_too_small_targets_are_skipped(signal: tuple, fate: str) -> None:
    assert fates([signal]) == [fate]


def test_clamp_sets_levels_to_the_limits() -> None:
    r = simulate(
        bars(ROWS),
        sigs(
            [
                (0, "long", 10.0, 20.0, 2.0),
                (2 * H, "long", 10.0, 11.0, 9.999),
                (4 * H, "short", 10.0, 1.0, 19.0),
            ]
        ),
        **FREE,
    )
    p = r.all_positions
    assert p["tp_price"].to_list() == pytest.approx([13.0, 11.0, 7.0], rel=1e-15)
    assert p["sl_price"].to_list() == pytest.approx([5.0, 9.99, 15.0], rel=1e-15)


def test_distances_within_1e12_of_a_limit_pass_unchanged() -> None:
    tp = 10.0 * (1 + 0.3 + 5e-13)
    r = simulate(bars(ROWS), sigs([(0, "long", 10.0, tp, 9.0)]), **FREE)
    assert r.all_positions["tp_price"].to_list() == [tp]


@pytest.mark.parametrize(
    ("signal", "fate"),
    [
        ((0, "long", 10.0, 10.005, 9.0), "skipped_tp_below_min"),
        ((0, "long", 10.0, 14.0, 9.0), "skipped_tp_above_max"),
        ((0, "long", 10.0, 11.0, 9.995), "skipped_sl_below_min"),
        ((0, "long", 10.0, 11.0, 4.0), "skipped_sl_above_max"),
        ((0, "long", 10.0, 14.0, 4.0), "skipped_tp_above_max"),  # the first that holds names the counter
        ((0, "short", 10.0, 6.0, 11.0), "skipped_tp_above_max"),
        ((0, "short", 10.0, 9.0, 16.0), "skipped_sl_above_max"),
        ((0, "long", 9.9, 11.0, 9.0), "expired"),
    ],
)
def test_reject_names_the_first_failed_limit(signal: tuple, fate: str) -> None:
    assert fates([signal], signal_filter_mode="reject", max_wait_days=1 / 24) == [fate]


def test_reject_counts_every_counter() -> None:
    r = simulate(
        bars(ROWS),
        sigs([(0, "long", 10.0, 14.0, 9.0), (2 * H, "long", 10.0, 11.0, 4.0)]),
        signal_filter_mode="reject",
        **FREE,
    )
    c = r.signal_counts
    assert (c["skipped_tp_above_max"], c["skipped_sl_above_max"], c["placed"]) == (1, 1, 0)


def test_signals_are_sorted_and_one_per_candle_is_considered() -> None:
    s = sigs([(2 * H, "long", 9.9, 11.0, 9.0), (0, "long", 10.0, None, 9.0), (0, "short", 10.0, 9.0, 11.0)])
    r = simulate(bars(ROWS), s, **(FREE | {"max_wait_days": 1 / 24}))
    assert ms_columns(r.all_positions)["signal_time"].to_list() == [0, 0, 2 * H]
    assert r.all_positions["fate"].to_list() == ["skipped_invalid", "skipped_min_gap", "expired"]


@pytest.mark.parametrize(
    ("signals", "message"),
    [
        (
            sigs([(30 * 60_000, "long", 10.0, 11.0, 9.0)]),
            r"signal row 0: open_time 1800000 is no candle of the series",
        ),
        (sigs([(0, "buy", 10.0, 11.0, 9.0)]), r"signal row 0: side must be 'long' or 'short' \(got 'buy'\)"),
        (
            pl.DataFrame({"open_time": [0], "side": ["long"]}),
            r"signals frame is missing columns \['limit_price'",
        ),
    ],
)
def test_bad_signals_are_refused(signals: pl.DataFrame, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        simulate(bars(ROWS), signals, **FREE)


@pytest.mark.parametrize(
    ("klines", "rule"),
    [
        (bars([]), "empty"),
        (bars([(10, 10, 10, 10), (10, 9, 9.5, 10)]), "high_below_open_close"),
        (bars([(10, 10, 10, 10), (10, 11, 10.5, 10)]), "low_above_open_close"),
        (bars([(10, 10, 10, 10), (0, 11, 0, 10)]), "nonpositive_price"),
        (bars([(10, 10, 10, 10), (float("nan"), 11, 9, 10)]), "nonfinite_price"),
        (
            bars([(10, 10, 10, 10)] * 2).with_columns(open_time=pl.Series([5, 5])),
            "unsorted_or_duplicate_time",
        ),
        (bars([(10, 10, 10, 10)] * 2).with_columns(volume=pl.Series([1.0, -1.0])), "negative_volume"),
        (bars([(10, 10, 10, 10)]).drop("volume"), "schema"),
    ],
)
def test_bad_series_are_refused(klines: pl.DataFrame, rule: str) -> None:
    with pytest.raises(KlineValidationError) as err:
        simulate(klines, sigs([]), timeframe="1h", **FREE)
    assert err.value.rule == rule


@pytest.mark.parametrize(
    ("kw", "message"),
    [
        ({"start_ts": 7200, "end_ts": 3600}, r"inverted range: start_ts 7200 is after end_ts 3600"),
        ({"start_ts": 10**9}, r"the range \[1000000000, None\] selects no candle of the series"),
        ({"intrabar": "detail"}, r"intrabar='detail' needs detail_klines="),
        ({"bogus": 1}, r"unknown setting\(s\) \['bogus'\]"),
    ],
)
def test_bad_runs_are_refused(kw: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        simulate(bars(ROWS), sigs([]), **(FREE | kw))


def test_the_timeframe_is_inferred_or_required() -> None:
    assert simulate(bars(ROWS), sigs([]), **FREE).timeframe == "1h"
    with pytest.raises(ValueError, match="cannot infer the timeframe of a single candle"):
        simulate(bars(ROWS[:1]), sigs([]), **FREE)
