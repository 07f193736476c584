"""Candle times carry their unit in the dtype (issue 19): every kline frame the engine hands back has
``open_time`` as ``Datetime("ms", "UTC")``; frames come in as integer Unix ms or any datetime; the
Parquet store keeps ``Int64`` Unix ms on disk."""

from __future__ import annotations

from datetime import UTC, datetime

import numpy as np
import polars as pl
import pyarrow.parquet as pq
import pytest

from svc_engine.data import SCHEMA, Catalog, DataStore, KlineValidationError, load_klines, resample, to_arrays
from svc_engine.data.schema import STORED_SCHEMA, conform
from svc_engine.data.synthetic import generate_market, market_frame
from svc_engine.data.times import TIME, as_time, ms_array, stored, time_series, with_time
from svc_engine.research.demo import random_walk

H = 3_600_000
T0 = 1_704_067_200_000  # 2024-01-01 00:00 UTC


def hours(n: int, times: pl.Series | None = None) -> pl.DataFrame:
    close = 100.0 + np.arange(n)
    return pl.DataFrame(
        {
            "open_time": T0 + np.arange(n, dtype=np.int64) * H if times is None else times,
            "open": close - 0.5,
            "high": close + 1.0,
            "low": close - 1.0,
            "close": close,
            "volume": np.ones(n),
        }
    )


def as_dtype(ms: np.ndarray, dtype: pl.DataType) -> pl.Series:
    """The instants ``ms`` (Unix ms) as a column of ``dtype``; naive columns hold UTC wall time."""
    utc = time_series("open_time", ms)
    if dtype.time_zone is None:
        return utc.dt.replace_time_zone(None).cast(dtype)
    return utc.dt.convert_time_zone(dtype.time_zone).cast(dtype)


DATETIMES = [
    pl.Datetime("ms"),
    pl.Datetime("us"),
    pl.Datetime("ns"),
    pl.Datetime("ms", "UTC"),
    pl.Datetime("us", "UTC"),
    pl.Datetime("ns", "UTC"),
    pl.Datetime("us", "Europe/Berlin"),
]


def test_schema_says_the_unit_and_the_store_keeps_int64() -> None:
    assert SCHEMA["open_time"] == TIME == pl.Datetime("ms", "UTC")
    assert STORED_SCHEMA["open_time"] == pl.Int64 and {**STORED_SCHEMA, "open_time": TIME} == SCHEMA


@pytest.mark.parametrize("dtype", DATETIMES, ids=str)
def test_conform_takes_int_ms_and_any_datetime_as_the_same_instants(dtype: pl.DataType) -> None:
    ms = T0 + np.arange(3, dtype=np.int64) * H
    want = conform(hours(3))
    assert want.schema == pl.Schema(SCHEMA)
    assert want["open_time"].dt.epoch("ms").to_list() == ms.tolist()
    assert conform(hours(3, as_dtype(ms, dtype))).equals(want)
    assert as_time(as_dtype(ms, dtype)).equals(want["open_time"])


@pytest.mark.parametrize(
    "times", [pl.Series("open_time", [0.0, 3.6e6]), pl.Series("open_time", ["0", "3600000"])], ids=str
)
def test_conform_refuses_floats_and_strings(times: pl.Series) -> None:
    refused = (
        r"<frame>: schema: columns do not cast to the schema: "
        r"open_time must be integer Unix milliseconds or a datetime, got (Float64|String)"
    )
    with pytest.raises(KlineValidationError, match=refused):
        conform(hours(2, times))


def test_ms_array_is_an_int64_view_of_a_time_column() -> None:
    df = conform(hours(5))
    a, b = ms_array(df["open_time"]), ms_array(df["open_time"])
    assert a.dtype == np.int64 and a.flags.c_contiguous and np.shares_memory(a, b)
    assert a.tolist() == (T0 + np.arange(5) * H).tolist()
    assert with_time(df) is df
    assert ms_array(as_dtype(a, pl.Datetime("ns"))).tolist() == a.tolist()


def test_load_klines_gives_time_and_the_file_stays_int64(tmp_path) -> None:
    store = DataStore(tmp_path)
    # written once as Int64 ms and once as naive nanoseconds: one series, Int64 ms on disk
    assert store.write_klines("crypto", "XUSDT", "1h", hours(4)) == 4
    more = hours(6).tail(2).with_columns(as_dtype(T0 + np.arange(4, 6) * H, pl.Datetime("ns")))
    assert store.write_klines("crypto", "XUSDT", "1h", more) == 2
    assert store.write_klines("crypto", "XUSDT", "1h", conform(hours(6))) == 0  # the same candles
    path = store.path("crypto", "XUSDT", "1h")
    assert pq.read_schema(path).field("open_time").type == "int64"
    assert pl.read_parquet(path).equals(stored(conform(hours(6))))
    df = load_klines("XUSDT", "1h", store=store)
    assert df.schema == pl.Schema(SCHEMA)
    assert df.equals(conform(hours(6)))
    assert df["open_time"][0] == datetime(2024, 1, 1, tzinfo=UTC)
    entry = Catalog(store).data_range("XUSDT", "1h")  # DuckDB statistics of the Int64 file
    assert (entry["first_ts"], entry["last_ts"]) == (T0 // 1000, T0 // 1000 + 5 * 3600)
    assert entry["total_candles"] == 6
    assert to_arrays(df)["open_time"].tolist() == (T0 + np.arange(6) * H).tolist()


def test_resampled_series_are_time_from_the_store_and_from_a_frame(tmp_path) -> None:
    store = DataStore(tmp_path)
    store.write_klines("crypto", "XUSDT", "1h", hours(8))
    two = load_klines("XUSDT", "2h", store=store)
    assert two.schema == pl.Schema(SCHEMA)
    assert two["open_time"].dt.epoch("ms").to_list() == [T0 + i * 2 * H for i in range(4)]
    cache = tmp_path / "crypto" / "XUSDT" / ".cache" / "2h.parquet"
    assert pl.read_parquet(cache).schema["open_time"] == pl.Int64
    for frame in (hours(8), conform(hours(8)), hours(8, as_dtype(T0 + np.arange(8) * H, pl.Datetime("us")))):
        assert resample(frame, "2h").equals(two)


def test_synthetic_and_demo_frames_are_time(tmp_path) -> None:
    assert market_frame(np.array([T0]), np.ones((5, 1))).schema == pl.Schema(SCHEMA)
    walk = random_walk(3, seed=1)
    assert walk.schema["open_time"] == TIME
    assert walk["open_time"].dt.epoch("ms").to_list() == [T0, T0 + H, T0 + 2 * H]
    store = DataStore(tmp_path)
    generate_market(store, small=True)
    for symbol, timeframe in (("BTCUSDT", "1h"), ("BTCUSDT", "1m"), ("BTCUSDT", "4h"), ("AAPL", "1d")):
        df = load_klines(symbol, timeframe, store=store)
        assert df.schema == pl.Schema(SCHEMA), (symbol, timeframe)
    assert pq.read_schema(store.path("crypto", "BTCUSDT", "1h")).field("open_time").type == "int64"
