"""Catalog: entries, ranges, first/last, totals straight from the Parquet files of a small store."""

from __future__ import annotations

import polars as pl
import pyarrow.parquet as pq
import pytest

from svc_engine.data import Catalog, DataNotFoundError, DataStore

H = 3_600_000
D = 86_400_000
T0 = 1_704_067_200_000  # 2024-01-01 00:00 UTC


def series(start: int, step: int, n: int) -> pl.DataFrame:
    return pl.DataFrame(
        {
            "open_time": [start + i * step for i in range(n)],
            "open": 1.0,
            "high": 2.0,
            "low": 0.5,
            "close": 1.5,
            "volume": 1.0,
        }
    )


@pytest.fixture
def store(tmp_path) -> DataStore:
    s = DataStore(tmp_path)
    s.write_klines("crypto", "BTCUSDT", "1h", series(T0, H, 50))
    s.write_klines("crypto", "BTCUSDT", "1m", series(T0 + 10 * H, 60_000, 90))
    s.write_klines("crypto", "ETHUSDT", "4h", series(T0 - 6 * 4 * H, 4 * H, 12))
    s.write_klines("forex", "EURUSD", "1d", series(T0 - 365 * D, D, 400))
    return s


def test_entries_list_every_series_with_its_range(store):
    entries = Catalog(store).entries()
    assert entries.columns == [
        "market",
        "symbol",
        "timeframe",
        "dataset_key",
        "first_ts",
        "last_ts",
        "first_date",
        "last_date",
        "total_candles",
    ]
    assert entries.rows() == [
        (
            "crypto",
            "BTCUSDT",
            "1m",
            "crypto/BTCUSDT/1m.parquet",
            1_704_103_200,
            1_704_108_540,
            "2024-01-01",
            "2024-01-01",
            90,
        ),
        (
            "crypto",
            "BTCUSDT",
            "1h",
            "crypto/BTCUSDT/1h.parquet",
            1_704_067_200,
            1_704_243_600,
            "2024-01-01",
            "2024-01-03",
            50,
        ),
        (
            "crypto",
            "ETHUSDT",
            "4h",
            "crypto/ETHUSDT/4h.parquet",
            1_703_980_800,
            1_704_139_200,
            "2023-12-31",
            "2024-01-01",
            12,
        ),
        (
            "forex",
            "EURUSD",
            "1d",
            "forex/EURUSD/1d.parquet",
            1_672_531_200,
            1_707_004_800,
            "2023-01-01",
            "2024-02-04",
            400,
        ),
    ]


def test_markets_symbols_timeframes(store):
    cat = Catalog(store)
    assert cat.markets() == ["crypto", "forex"]
    assert cat.symbols("crypto") == ["BTCUSDT", "ETHUSDT"]
    assert cat.symbols("us_stocks") == []
    assert cat.timeframes("btcusdt") == ["1m", "1h"]
    keys = cat.entries(market="crypto", symbol="ethusdt")["dataset_key"].to_list()
    assert keys == ["crypto/ETHUSDT/4h.parquet"]


def test_data_range_of_a_stored_series(store):
    assert Catalog(store).data_range("EURUSD", "1d") == {
        "first_ts": 1_672_531_200,
        "last_ts": 1_707_004_800,
        "first_date": "2023-01-01",
        "last_date": "2024-02-04",
        "total_candles": 400,
    }


def test_data_range_of_a_resampled_series_counts_its_buckets(store):
    # 90 minutes from 10:00 make the 30m buckets 10:00, 10:30 and 11:00
    assert Catalog(store).data_range("BTCUSDT", "30m") == {
        "first_ts": 1_704_103_200,
        "last_ts": 1_704_103_200 + 3600,
        "first_date": "2024-01-01",
        "last_date": "2024-01-01",
        "total_candles": 3,
    }
    assert Catalog(store).data_range("EURUSD", "1w")["total_candles"] == 58


def test_data_range_of_a_missing_series(store):
    with pytest.raises(DataNotFoundError, match=r"crypto/ETHUSDT has no 1h series .*\(stored: 4h\)"):
        Catalog(store).data_range("ETHUSDT", "1h")
    expected = r"no market holds symbol 'SOLUSDT' in .+ \(markets: crypto, forex\)"
    with pytest.raises(DataNotFoundError, match=expected):
        Catalog(store).data_range("SOLUSDT", "1h")


def test_refresh_sees_new_writes(store):
    cat = Catalog(store)
    assert cat.data_range("BTCUSDT", "1h")["total_candles"] == 50
    store.write_klines("crypto", "BTCUSDT", "1h", series(T0 + 50 * H, H, 10))
    assert cat.data_range("BTCUSDT", "1h")["total_candles"] == 50  # cached until refresh
    cat.refresh()
    assert cat.data_range("BTCUSDT", "1h")["total_candles"] == 60


def test_files_without_statistics_are_scanned(store):
    path = store.path("crypto", "SOLUSDT", "1d")
    path.parent.mkdir(parents=True)
    pq.write_table(series(T0, D, 7).to_arrow(), path, write_statistics=False)
    assert Catalog(store).data_range("SOLUSDT", "1d") == {
        "first_ts": 1_704_067_200,
        "last_ts": 1_704_585_600,
        "first_date": "2024-01-01",
        "last_date": "2024-01-07",
        "total_candles": 7,
    }


def test_stray_files_and_caches_are_not_series(store, tmp_path):
    (tmp_path / "crypto" / "BTCUSDT" / "notes.parquet").write_bytes(b"not parquet")
    (tmp_path / "crypto" / "BTCUSDT" / ".cache").mkdir()
    series(T0, 2 * H, 3).write_parquet(tmp_path / "crypto" / "BTCUSDT" / ".cache" / "2h.parquet")
    assert Catalog(store).timeframes("BTCUSDT") == ["1m", "1h"]


def test_empty_store(tmp_path):
    cat = Catalog(DataStore(tmp_path / "nothing"))
    assert cat.entries().height == 0
    assert cat.markets() == []


@pytest.mark.parametrize("timeframe", ["3d", "1w"])
def test_resampled_range_agrees_with_resample_even_before_1970(tmp_path, timeframe):
    from svc_engine.data import load_klines

    s = DataStore(tmp_path)
    s.write_klines("us_stocks", "OLD", "1d", series(-20 * D, D, 40))
    expected = load_klines("OLD", timeframe, store=s)
    got = Catalog(s).data_range("OLD", timeframe)
    assert (got["first_ts"], got["last_ts"], got["total_candles"]) == (
        expected["open_time"].dt.epoch("s")[0],
        expected["open_time"].dt.epoch("s")[-1],
        expected.height,
    )
    assert got["first_ts"] < 0
