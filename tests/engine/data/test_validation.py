"""One test per rule of section 1 of the engine semantics: the error names the file, the row and the rule."""

from __future__ import annotations

import math

import polars as pl
import pytest

from svc_engine.data import DataStore, KlineValidationError, validate_klines
from svc_engine.data.schema import grid_offset_ms

SOURCE = "crypto/BTCUSDT/1m.parquet"


def frame(n: int = 5, step: int = 60_000) -> pl.DataFrame:
    return pl.DataFrame(
        {
            "open_time": [i * step for i in range(n)],
            "open": [10.0] * n,
            "high": [11.0] * n,
            "low": [9.0] * n,
            "close": [10.5] * n,
            "volume": [1.0] * n,
        }
    )


def with_value(df: pl.DataFrame, col: str, row: int, value: float) -> pl.DataFrame:
    values = df[col].to_list()
    values[row] = value
    return df.with_columns(pl.Series(col, values, dtype=df[col].dtype))


def refused(df: pl.DataFrame) -> KlineValidationError:
    with pytest.raises(KlineValidationError) as info:
        validate_klines(df, source=SOURCE, timeframe="1m")
    err = info.value
    assert str(err).startswith(f"{SOURCE}: ")
    assert err.source == SOURCE
    return err


def test_valid_series_passes_with_its_size():
    report = validate_klines(frame(), source=SOURCE, timeframe="1m")
    assert (report.rows, report.gaps, report.missing_candles, report.off_grid) == (5, 0, 0, 0)


def test_empty_is_refused():
    err = refused(frame(0))
    assert (err.row, err.rule) == (None, "empty")
    assert str(err) == f"{SOURCE}: empty: the series has no candles"


def test_unsorted_is_refused_at_the_row_that_goes_back():
    df = frame().with_columns(pl.Series("open_time", [0, 60_000, 180_000, 120_000, 240_000]))
    err = refused(df)
    assert (err.row, err.rule) == (3, "unsorted_time")
    assert str(err) == f"{SOURCE}: row 3: unsorted_time: open_time is before the previous row"


def test_duplicate_time_is_refused_at_the_second_copy():
    df = frame().with_columns(pl.Series("open_time", [0, 60_000, 60_000, 120_000, 180_000]))
    err = refused(df)
    assert (err.row, err.rule) == (2, "duplicate_time")


def test_high_below_open_or_close_is_refused():
    err = refused(with_value(frame(), "high", 4, 10.4))  # close 10.5 above the high
    assert (err.row, err.rule) == (4, "high_below_open_close")
    assert str(err) == f"{SOURCE}: row 4: high_below_open_close: high < max(open, close)"


def test_low_above_open_or_close_is_refused():
    err = refused(with_value(frame(), "low", 1, 10.1))  # open 10.0 below the low
    assert (err.row, err.rule) == (1, "low_above_open_close")


@pytest.mark.parametrize("bad", [math.nan, math.inf, None])
def test_non_finite_price_is_refused(bad):
    err = refused(with_value(frame(), "close", 2, bad))
    assert (err.row, err.rule) == (2, "nonfinite_price")


@pytest.mark.parametrize("bad", [0.0, -1.0])
def test_non_positive_price_is_refused(bad):
    df = frame().with_columns(pl.Series("low", [9.0, 9.0, 9.0, bad, 9.0]))
    err = refused(df)
    assert (err.row, err.rule) == (3, "nonpositive_price")


@pytest.mark.parametrize("bad", [math.nan, -math.inf, None])
def test_non_finite_volume_is_refused(bad):
    err = refused(with_value(frame(), "volume", 0, bad))
    assert (err.row, err.rule) == (0, "nonfinite_volume")


def test_negative_volume_is_refused():
    err = refused(with_value(frame(), "volume", 4, -0.5))
    assert (err.row, err.rule) == (4, "negative_volume")
    assert str(err) == f"{SOURCE}: row 4: negative_volume: volume is negative"


def test_zero_volume_is_allowed():
    assert validate_klines(with_value(frame(), "volume", 1, 0.0)).rows == 5


def test_the_earliest_bad_row_is_named_whatever_its_rule():
    df = with_value(with_value(frame(), "volume", 1, -1.0), "high", 3, 10.0)
    err = refused(df)
    assert (err.row, err.rule) == (1, "negative_volume")


def test_missing_column_is_refused_by_name():
    err = refused(frame().drop("volume"))
    assert err.rule == "schema"
    assert "['volume']" in str(err)


def test_gaps_are_allowed_and_reported():
    # minutes 0, 1, 4, 5, 9: gaps of 2 and 3 missing candles
    df = frame().with_columns(pl.Series("open_time", [m * 60_000 for m in (0, 1, 4, 5, 9)]))
    report = validate_klines(df, timeframe="1m")
    assert (report.gaps, report.missing_candles, report.max_gap_ms, report.off_grid) == (2, 5, 240_000, 0)


def test_off_grid_candles_are_allowed_and_reported():
    df = frame(4, step=3_600_000).with_columns(
        pl.Series("open_time", [0, 3_600_000, 7_230_000, 10_800_000])
    )  # one candle 30 s late
    report = validate_klines(df, timeframe="1h")
    assert report.off_grid == 1


def test_weeks_are_on_the_monday_grid():
    monday = 1_704_067_200_000  # 2024-01-01 00:00 UTC
    week = 7 * 86_400_000
    df = frame(3, step=week).with_columns(pl.col("open_time") + monday)
    assert validate_klines(df, timeframe="1w").off_grid == 0
    assert validate_klines(df.with_columns(pl.col("open_time") + 86_400_000), timeframe="1w").off_grid == 3
    assert grid_offset_ms("1w") == 4 * 86_400_000


def test_store_refuses_a_bad_file_naming_the_source(tmp_path):
    store = DataStore(tmp_path)
    df = frame().with_columns(pl.Series("open_time", [0, 60_000, 180_000, 120_000, 240_000]))
    with pytest.raises(KlineValidationError) as info:
        store.write_klines("crypto", "BTCUSDT", "1m", df, source="dump.csv")
    assert str(info.value).startswith("dump.csv: row 3: unsorted_time")
    assert not store.path("crypto", "BTCUSDT", "1m").exists()


@pytest.mark.parametrize(
    ("name", "timeframe", "expected"),
    [
        ("crypto/BTCUSDT-1h.parquet", "1h", (28, 128, 0)),  # the figures of the datasets README
        ("crypto/NEOBTC-4h.parquet", "4h", (1, 1, 9)),  # 9 candles 2 h off the 4h grid, kept as served
    ],
)
def test_gaps_of_real_files_match_the_datasets_readme(shared_datasets, name, timeframe, expected):
    report = validate_klines(pl.read_parquet(shared_datasets / name), source=name, timeframe=timeframe)
    assert (report.gaps, report.missing_candles, report.off_grid) == expected
