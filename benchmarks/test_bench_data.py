"""Data store benchmarks on the real 4.35 M-row BTCUSDT 1m file: loading a range, resampling to 4h.

Run with ``make bench`` or ``pytest benchmarks/test_bench_data.py -s``; each prints candles per second.
"""

from __future__ import annotations

import os
from pathlib import Path

import polars as pl
import pytest

from svc_engine.data import DataStore, load_klines, resample, to_arrays
from svc_engine.data.importers import import_paths

YEAR_2024 = (1_704_067_200, 1_735_689_599)  # 2024-01-01 00:00:00 .. 2024-12-31 23:59:59 UTC
_BESIDE = Path(__file__).resolve().parents[2] / "shared" / "datasets"
SHARED = Path(os.environ.get("SVC_SHARED_DATASETS", _BESIDE))


@pytest.fixture(scope="module")
def btc_1m() -> Path:
    path = SHARED / "crypto" / "BTCUSDT-1m.parquet"
    if not path.is_file():
        pytest.skip(f"{path} not found (set SVC_SHARED_DATASETS)")
    return path


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory, btc_1m: Path) -> DataStore:
    s = DataStore(tmp_path_factory.mktemp("bench-store"))
    import_paths([btc_1m], store=s)
    return s


def _report(benchmark, what: str, candles: int) -> None:
    mean, best = benchmark.stats.stats.mean, benchmark.stats.stats.min
    print(
        f"\n{what}: {candles:,} candles in {mean * 1000:.1f} ms mean = {candles / mean / 1e6:.1f} M/s"
        f" (best {best * 1000:.1f} ms = {candles / best / 1e6:.1f} M candles/s)"
    )


def test_load_one_year_of_1m(benchmark, store: DataStore) -> None:
    def load() -> int:
        df = load_klines("BTCUSDT", "1m", *YEAR_2024, store=store)
        to_arrays(df)
        return df.height

    n = benchmark.pedantic(load, rounds=5, iterations=1, warmup_rounds=1)
    assert n == 527_040
    _report(benchmark, "load_klines 1 year of BTCUSDT 1m (+ to_arrays)", n)


def test_resample_all_1m_to_4h(benchmark, btc_1m: Path) -> None:
    df = pl.read_parquet(btc_1m).rechunk()  # one chunk, as load_klines returns it
    out = benchmark.pedantic(lambda: resample(df, "4h"), rounds=3, iterations=1, warmup_rounds=1)
    assert out.height == 18_151
    _report(benchmark, "resample BTCUSDT 1m -> 4h (input candles)", df.height)
