"""load_klines: inclusive second ranges clipped to the data, warm-up, market lookup, errors; to_arrays."""

from __future__ import annotations

from datetime import UTC, date, datetime

import numpy as np
import polars as pl
import pyarrow.parquet as pq
import pytest

from svc_engine.data import DataNotFoundError, DataStore, load_klines, to_arrays
from svc_engine.data.times import TIME, time_series

H = 3_600_000
T0 = 1_704_067_200_000  # 2024-01-01 00:00 UTC


def hours(n: int, start: int = T0, skip: tuple[int, ...] = ()) -> pl.DataFrame:
    idx = [i for i in range(n) if i not in skip]
    return pl.DataFrame(
        {
            "open_time": [start + i * H for i in idx],
            "open": [100.0 + i for i in idx],
            "high": [102.0 + i for i in idx],
            "low": [99.0 + i for i in idx],
            "close": [101.0 + i for i in idx],
            "volume": [float(i) for i in idx],
        }
    )


@pytest.fixture
def store(tmp_path) -> DataStore:
    s = DataStore(tmp_path)
    s.write_klines("crypto", "BTCUSDT", "1h", hours(48))
    s.write_klines(
        "us_stocks",
        "AAPL",
        "1d",
        pl.DataFrame(
            {
                "open_time": [T0, T0 + 86_400_000],
                "open": [1.0, 2.0],
                "high": [2.0, 3.0],
                "low": [0.5, 1.5],
                "close": [1.5, 2.5],
                "volume": [10.0, 20.0],
            }
        ),
    )
    return s


def sec(i: int) -> int:
    return (T0 + i * H) // 1000


def test_whole_series_without_a_range(store):
    df = load_klines("BTCUSDT", "1h", store=store)
    assert df.height == 48
    assert df.columns == ["open_time", "open", "high", "low", "close", "volume"]
    assert df.dtypes == [pl.Datetime("ms", "UTC")] + [pl.Float64] * 5
    # Int64 Unix ms on disk, read back as TIME with the same instants
    assert pq.read_schema(store.path("crypto", "BTCUSDT", "1h")).field("open_time").type == "int64"
    assert df["open_time"].equals(time_series("open_time", np.arange(48) * H + T0))


def test_range_is_inclusive_at_both_ends(store):
    df = load_klines("BTCUSDT", "1h", sec(5), sec(9), store=store)
    assert df["open_time"].dt.epoch("ms").to_list() == [T0 + i * H for i in range(5, 10)]


def test_range_between_candles_selects_the_candles_inside(store):
    df = load_klines("BTCUSDT", "1h", sec(5) + 1, sec(9) - 1, store=store)
    assert df["open_time"].dt.epoch("ms").to_list() == [T0 + i * H for i in range(6, 9)]


def test_range_is_clipped_to_the_data(store):
    df = load_klines("BTCUSDT", "1h", sec(-100), sec(1000), store=store)
    assert df.height == 48


def test_warmup_prepends_earlier_candles(store):
    df = load_klines("BTCUSDT", "1h", sec(10), sec(12), warmup=4, store=store)
    assert df["open_time"].dt.epoch("ms").to_list() == [T0 + i * H for i in range(6, 13)]


def test_warmup_stops_at_the_start_of_the_data(store):
    df = load_klines("BTCUSDT", "1h", sec(2), sec(3), warmup=10, store=store)
    assert df["open_time"].dt.epoch("ms").to_list() == [T0 + i * H for i in range(4)]


def test_warmup_reaches_across_a_long_gap(tmp_path):
    s = DataStore(tmp_path)
    s.write_klines("crypto", "ETHUSDT", "1h", hours(200, skip=tuple(range(3, 195))))
    df = load_klines("ETHUSDT", "1h", (T0 + 197 * H) // 1000, None, warmup=4, store=s)
    assert df["open_time"].dt.epoch("ms").to_list() == [T0 + i * H for i in (1, 2, 195, 196, 197, 198, 199)]


def test_market_is_found_from_the_symbol(store):
    assert load_klines("aapl", "1d", store=store)["close"].to_list() == [1.5, 2.5]


def test_unknown_symbol_names_the_markets(store):
    expected = r"no market holds symbol 'DOGEUSDT' .*\(markets: crypto, us_stocks\)"
    with pytest.raises(DataNotFoundError, match=expected):
        load_klines("DOGEUSDT", "1h", store=store)


def test_ambiguous_symbol_names_the_markets(store):
    store.write_klines("crypto_futures", "BTCUSDT", "1h", hours(3))
    with pytest.raises(DataNotFoundError, match=r"several markets \(crypto, crypto_futures\); pass market="):
        load_klines("BTCUSDT", "1h", store=store)
    assert load_klines("BTCUSDT", "1h", market="crypto_futures", store=store).height == 3


def test_inverted_range_is_refused(store):
    with pytest.raises(ValueError, match="inverted range: start_ts 200 is after end_ts 100"):
        load_klines("BTCUSDT", "1h", 200, 100, store=store)


def test_range_with_no_candle_is_refused_with_the_data_range(store):
    with pytest.raises(
        ValueError,
        match=r"selects no candle of crypto/BTCUSDT 1h; the data covers "
        r"2024-01-01 00:00 \.\. 2024-01-02 23:00 UTC",
    ):
        load_klines("BTCUSDT", "1h", sec(100), sec(200), store=store)


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), "1704067200", True])
def test_a_timestamp_that_is_not_a_finite_number_is_refused(store, bad):
    with pytest.raises(ValueError, match=f"start_ts must be a finite number of Unix seconds, got {bad!r}"):
        load_klines("BTCUSDT", "1h", bad, None, store=store)


def test_datetimes_and_iso_strings_are_taken_as_utc(store):
    want = load_klines("BTCUSDT", "1h", sec(5), sec(9), store=store)
    assert want.schema["open_time"] == TIME  # the store's Unix milliseconds, as Datetime("ms", "UTC")
    assert want["open_time"].dt.epoch("ms").to_list() == [T0 + i * H for i in range(5, 10)]
    for start, end in (
        ("2024-01-01T05:00:00Z", "2024-01-01T09:00"),
        (datetime(2024, 1, 1, 5, tzinfo=UTC), datetime(2024, 1, 1, 9)),
        (np.datetime64("2024-01-01T05:00"), "2024-01-01T11:00+02:00"),
    ):
        assert load_klines("BTCUSDT", "1h", start, end, store=store).equals(want), (start, end)
    assert load_klines("BTCUSDT", "1h", date(2024, 1, 2), store=store).height == 24
    with pytest.raises(ValueError, match="'tomorrow' is neither Unix seconds nor an ISO 8601 date"):
        load_klines("BTCUSDT", "1h", "tomorrow", store=store)


def test_numpy_timestamps_are_numbers(store):
    assert load_klines("BTCUSDT", "1h", np.int64(sec(1)), np.float64(sec(2)), store=store).height == 2


def test_unknown_timeframe_is_refused(store):
    with pytest.raises(ValueError, match="unknown timeframe '7m'"):
        load_klines("BTCUSDT", "7m", store=store)


def test_missing_timeframe_without_a_finer_source_is_not_found(store):
    with pytest.raises(DataNotFoundError, match=r"crypto/BTCUSDT has no 30m series .*\(stored: 1h\)"):
        load_klines("BTCUSDT", "30m", store=store)


def test_negative_warmup_is_refused(store):
    with pytest.raises(ValueError, match="warmup must be a whole number"):
        load_klines("BTCUSDT", "1h", warmup=-1, store=store)


def test_to_arrays_is_zero_copy_on_a_loaded_frame(store):
    df = load_klines("BTCUSDT", "1h", sec(1), sec(30), store=store)
    a, b = to_arrays(df), to_arrays(df)
    for col in ("open_time", "open", "high", "low", "close", "volume"):
        assert a[col].flags.c_contiguous
        assert np.shares_memory(a[col], b[col]), col  # both are views of the one Arrow buffer
    assert a["open_time"].dtype == np.int64 and a["close"].dtype == np.float64
    assert a["close"][:3].tolist() == [102.0, 103.0, 104.0]


def test_to_arrays_copies_a_multi_chunk_frame_into_contiguous_arrays():
    df = pl.concat([hours(2), hours(2, start=T0 + 2 * H)], rechunk=False)
    assert df.n_chunks() == 2
    arrays = to_arrays(df)
    assert arrays["open"].flags.c_contiguous and arrays["open"].tolist() == [100.0, 101.0, 100.0, 101.0]


def test_range_reads_only_the_row_groups_it_needs(tmp_path, monkeypatch):
    s = DataStore(tmp_path)
    s.write_klines(
        "crypto",
        "BTCUSDT",
        "1m",
        pl.DataFrame(
            {
                "open_time": np.arange(200_000, dtype=np.int64) * 60_000,
                "open": 1.0,
                "high": 1.0,
                "low": 1.0,
                "close": 1.0,
                "volume": 1.0,
            }
        ),
    )
    assert pq.ParquetFile(s.path("crypto", "BTCUSDT", "1m")).metadata.num_row_groups == 4
    plans: list[str] = []
    collect = pl.LazyFrame.collect

    def spy(self, *args, **kwargs):
        plans.append(self.explain())
        return collect(self, *args, **kwargs)

    monkeypatch.setattr(pl.LazyFrame, "collect", spy)
    assert load_klines("BTCUSDT", "1m", 0, 600, store=s).height == 11
    # the range predicate is pushed into the Parquet scan, where row-group statistics skip the rest
    assert plans[0].startswith("Parquet SCAN")
    assert 'SELECTION: col("open_time").is_between' in plans[0]


def test_a_store_pickles_for_worker_processes(store):
    import pickle

    clone = pickle.loads(pickle.dumps(store))
    assert load_klines("BTCUSDT", "1h", sec(0), sec(1), store=clone).height == 2
