"""resample: hand-computed buckets, UTC grid (Monday weeks, epoch 3d), idle minutes, cache; real BTCUSDT."""

from __future__ import annotations

import time

import numpy as np
import polars as pl
import pytest

from svc_engine.data import DataStore, load_klines, resample
from svc_engine.data.times import TIME

M = 60_000
D = 86_400_000
MONDAY = 1_704_067_200_000  # 2024-01-01 00:00 UTC


def ms(df: pl.DataFrame) -> pl.DataFrame:
    """``df`` with its ``open_time`` back in Unix ms, after checking it is ``Datetime("ms", "UTC")``."""
    assert df.schema["open_time"] == TIME
    return df.with_columns(pl.col("open_time").dt.epoch("ms"))


def klines(rows: list[tuple[int, float, float, float, float, float]]) -> pl.DataFrame:
    return pl.DataFrame(rows, schema=["open_time", "open", "high", "low", "close", "volume"], orient="row")


def test_hand_computed_5m_buckets_with_a_gap_and_an_empty_bucket():
    df = klines(
        [
            (0 * M, 10.0, 11.0, 9.5, 10.5, 1.0),
            (1 * M, 10.5, 12.0, 10.0, 11.0, 2.0),
            (4 * M, 11.0, 11.5, 8.0, 9.0, 3.0),  # minutes 2-3 missing
            (5 * M, 9.0, 9.5, 8.5, 9.2, 4.0),
            (6 * M, 9.2, 10.0, 9.1, 9.9, 0.5),
            (15 * M, 9.9, 10.1, 9.8, 10.0, 6.0),  # bucket 10-14 has no candle: no row
        ]
    )
    out = resample(df, "5m")
    assert ms(out).rows() == [
        (0, 10.0, 12.0, 8.0, 9.0, 6.0),
        (5 * M, 9.0, 10.0, 8.5, 9.9, 4.5),
        (15 * M, 9.9, 10.1, 9.8, 10.0, 6.0),
    ]
    assert out.dtypes == [TIME] + [pl.Float64] * 5


def test_idle_candles_do_not_set_open_high_low():
    df = klines(
        [
            (0, 10.0, 10.0, 10.0, 10.0, 0.0),  # idle minute repeating the previous close
            (M, 10.2, 10.8, 10.1, 10.6, 5.0),
            (2 * M, 10.6, 10.6, 10.6, 10.6, 0.0),
        ]
    )
    assert ms(resample(df, "3m")).row(0) == (0, 10.2, 10.8, 10.1, 10.6, 5.0)
    assert ms(resample(df, "3m", skip_idle=False)).row(0) == (0, 10.0, 10.8, 10.0, 10.6, 5.0)


def test_an_all_idle_bucket_uses_every_candle():
    df = klines([(0, 5.0, 5.5, 4.5, 5.2, 0.0), (M, 5.2, 6.0, 5.1, 5.9, 0.0)])
    assert ms(resample(df, "3m")).row(0) == (0, 5.0, 6.0, 4.5, 5.9, 0.0)


def test_high_and_low_always_bound_open_and_close():
    # the last candle is idle with a close above the traded high: the bucket stays a valid candle
    df = klines([(0, 10.0, 10.5, 9.9, 10.4, 1.0), (M, 10.4, 11.0, 10.4, 11.0, 0.0)])
    assert ms(resample(df, "3m")).row(0) == (0, 10.0, 11.0, 9.9, 11.0, 1.0)


def test_weeks_open_on_monday_utc():
    days = klines([(MONDAY + (i - 2) * D, 1.0 + i, 2.0 + i, 0.5 + i, 1.5 + i, 1.0) for i in range(9)])
    out = resample(days, "1w")
    # Saturday and Sunday belong to the week of Monday 2023-12-25
    assert ms(out)["open_time"].to_list() == [MONDAY - 7 * D, MONDAY]
    assert ms(out).rows()[1] == (MONDAY, 3.0, 10.0, 2.5, 9.5, 7.0)


def test_three_day_buckets_are_epoch_aligned():
    days = klines([(MONDAY + i * D, 1.0, 2.0, 0.5, 1.5, 1.0) for i in range(6)])
    out = resample(days, "3d")
    # day 19723 after the epoch; 19723 % 3 == 1, so its 3-day bucket opened the day before
    first = MONDAY - D
    assert ms(out)["open_time"].to_list() == [first, first + 3 * D, first + 6 * D]
    assert out["volume"].to_list() == [2.0, 3.0, 1.0]


def test_load_resamples_from_the_finest_divisor_and_caches(tmp_path):
    store = DataStore(tmp_path)
    minutes = klines([(i * M, 10.0 + i, 11.0 + i, 9.0 + i, 10.5 + i, 1.0) for i in range(240)])
    store.write_klines("crypto", "XUSDT", "1m", minutes)
    store.write_klines("crypto", "XUSDT", "1d", klines([(0, 10.0, 250.0, 9.0, 249.5, 240.0)]))
    out = load_klines("XUSDT", "2h", store=store)  # from 1m, not from 1d
    assert ms(out).rows() == [
        (0, 10.0, 130.0, 9.0, 129.5, 120.0),
        (120 * M, 130.0, 250.0, 129.0, 249.5, 120.0),
    ]
    cache = tmp_path / "crypto" / "XUSDT" / ".cache" / "2h.parquet"
    assert cache.is_file()
    stamp = cache.stat().st_mtime_ns
    assert load_klines("XUSDT", "2h", store=store).equals(out)
    assert cache.stat().st_mtime_ns == stamp  # served from the cache


def test_load_prefers_the_divisor_reaching_furthest_back(tmp_path):
    # the synthetic market's shape: years of 1h, only recent days of 1m
    store = DataStore(tmp_path)
    hours = klines([(i * 60 * M, 1.0 + i, 2.0 + i, 0.5 + i, 1.5 + i, 1.0) for i in range(8)])
    store.write_klines("crypto", "XUSDT", "1h", hours)
    recent = klines([((420 + i) * M, 8.0, 9.0, 7.5, 8.5, 1.0 / 60) for i in range(60)])
    store.write_klines("crypto", "XUSDT", "1m", recent)
    out = load_klines("XUSDT", "4h", store=store)
    assert ms(out)["open_time"].to_list() == [0, 240 * M]
    assert ms(out).rows()[0] == (0, 1.0, 5.0, 0.5, 4.5, 4.0)


def test_cache_is_rebuilt_when_the_source_changes(tmp_path):
    store = DataStore(tmp_path)
    store.write_klines("crypto", "XUSDT", "1m", klines([(i * M, 1.0, 2.0, 0.5, 1.5, 1.0) for i in range(10)]))
    assert load_klines("XUSDT", "5m", store=store)["volume"].to_list() == [5.0, 5.0]
    time.sleep(0.01)
    store.write_klines("crypto", "XUSDT", "1m", klines([(10 * M, 1.0, 3.0, 0.5, 1.5, 7.0)]))
    assert load_klines("XUSDT", "5m", store=store)["volume"].to_list() == [5.0, 5.0]  # 10:00 not closed
    time.sleep(0.01)
    more = klines([(i * M, 1.0, 2.0, 0.5, 1.5, 1.0) for i in range(11, 15)])
    store.write_klines("crypto", "XUSDT", "1m", more)
    out = load_klines("XUSDT", "5m", store=store)
    assert out["volume"].to_list() == [5.0, 5.0, 11.0]
    assert out["high"].to_list() == [2.0, 2.0, 3.0]


def test_unwritable_store_still_serves_the_resample(tmp_path, monkeypatch):
    store = DataStore(tmp_path)
    store.write_klines("crypto", "XUSDT", "1m", klines([(i * M, 1.0, 2.0, 0.5, 1.5, 1.0) for i in range(10)]))

    def read_only(*args, **kwargs):
        raise PermissionError("read-only file system")

    monkeypatch.setattr(DataStore, "_write", read_only)
    assert load_klines("XUSDT", "5m", store=store)["volume"].to_list() == [5.0, 5.0]
    assert not (tmp_path / "crypto" / "XUSDT" / ".cache" / "5m.parquet").exists()


@pytest.mark.parametrize("times", [[M, 0], [0, 10 * D, 20 * D, M]])
def test_unsorted_input_is_refused(times):
    df = klines([(t, 1.0, 1.0, 1.0, 1.0, 1.0) for t in times])
    with pytest.raises(ValueError, match=f"sorted by open_time; row {len(times) - 1} goes back in time"):
        resample(df, "5m")


def test_empty_input_gives_an_empty_frame():
    assert resample(klines([]), "1h").height == 0


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("skip_idle", [True, False])
def test_kernel_agrees_with_a_group_by_reference(seed, skip_idle):
    rng = np.random.default_rng(seed)
    t = np.sort(rng.choice(5_000, size=1_500, replace=False)).astype(np.int64) * M
    o, c = rng.uniform(90, 110, t.size), rng.uniform(90, 110, t.size)
    h, lo = np.maximum(o, c) + rng.uniform(0, 3, t.size), np.minimum(o, c) - rng.uniform(0, 3, t.size)
    v = np.where(rng.random(t.size) < 0.3, 0.0, rng.uniform(0, 5, t.size))
    df = pl.DataFrame({"open_time": t, "open": o, "high": h, "low": lo, "close": c, "volume": v})

    def pick(col: str, how: str) -> pl.Expr:
        plain = getattr(pl.col(col), how)()
        traded = getattr(pl.col(col).filter(pl.col("volume") > 0), how)()
        return traded.fill_null(plain) if skip_idle else plain

    ref = (
        df.group_by(pl.col("open_time") - pl.col("open_time") % (15 * M), maintain_order=True)
        .agg(
            pick("open", "first"),
            pick("high", "max"),
            pick("low", "min"),
            pl.col("close").last(),
            pl.col("volume").sum(),
        )
        .with_columns(pl.max_horizontal("high", "open", "close"), pl.min_horizontal("low", "open", "close"))
    )
    ours = resample(df, "15m", skip_idle=skip_idle)
    assert ours["open_time"].equals(ref["open_time"])
    for col in ("open", "high", "low", "close"):
        assert ours[col].equals(ref[col]), col
    assert np.allclose(ours["volume"].to_numpy(), ref["volume"].to_numpy(), rtol=1e-12, atol=0)


@pytest.fixture(scope="module")
def btc_1m(shared_datasets) -> pl.DataFrame:
    return pl.read_parquet(shared_datasets / "crypto" / "BTCUSDT-1m.parquet")


@pytest.mark.parametrize("timeframe", ["1h", "4h"])
def test_real_btcusdt_1m_resamples_to_the_shared_files(shared_datasets, btc_1m, timeframe):
    # The shared 1h and 4h files were aggregated from the 1m file with open/high/low from traded
    # minutes only (datasets README), which equals Binance's native klines; so is resample's default.
    ours = resample(btc_1m, timeframe)
    ref = pl.read_parquet(shared_datasets / "crypto" / f"BTCUSDT-{timeframe}.parquet")
    assert ours.height == ref.height
    assert ours["open_time"].equals(ref["open_time"])
    for col in ("open", "high", "low", "close"):
        assert ours[col].equals(ref[col]), col
    rel = (ours["volume"] - ref["volume"]).abs() / ref["volume"].abs().clip(lower_bound=1e-12)
    assert rel.filter(ref["volume"] > 0).max() <= 1e-6
    assert ours.filter(ref["volume"] == 0)["volume"].abs().max() <= 1e-8
