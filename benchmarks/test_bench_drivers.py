"""``full_range`` over every 1h USDT pair of ``../shared/datasets/crypto``: candles per second on
threads (``LocalExecutor``) and on local Ray (``RayExecutor``), and the scaling from 1 to 2 workers.

Run: ``.venv/bin/python -m pytest benchmarks/test_bench_drivers.py -p no:cacheprovider -s``
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from svc_engine.data import DataStore
from svc_engine.data.importers import import_paths
from svc_engine.executors import Executor, LocalExecutor, RayExecutor
from svc_engine.sim import backtest, full_range
from svc_engine.sim.drivers import plan_chunks

pytest.importorskip("pytest_benchmark")
SETTINGS = {"commission_pct": 0.1, "spread_pct": 0.05}
DATASETS = Path(
    os.environ.get("SVC_SHARED_DATASETS", Path(__file__).resolve().parents[2] / "shared" / "datasets")
)


@dataclass(frozen=True)
class Breakout:
    """Long above the highest close of the previous 19 candles; TP 3 %, SL 2 %."""

    candle_count: int = 20

    def evaluate(self, klines: pl.DataFrame) -> pl.DataFrame:
        top = pl.col("close").shift(1).rolling_max(self.candle_count - 1)
        return klines.filter((pl.col("close") > top).fill_null(False)).select(
            "open_time",
            side=pl.lit("long"),
            limit_price=pl.lit(None, pl.Float64),
            tp_price=pl.col("close") * 1.03,
            sl_price=pl.col("close") * 0.98,
        )


@pytest.fixture(scope="module")
def market(tmp_path_factory: pytest.TempPathFactory) -> tuple[DataStore, list[str]]:
    files = sorted((DATASETS / "crypto").glob("*USDT-1h.parquet"))
    if not files:
        pytest.skip(f"no 1h USDT pairs under {DATASETS / 'crypto'} (set SVC_SHARED_DATASETS)")
    store = DataStore(tmp_path_factory.mktemp("bench-drivers"))
    import_paths(files, store=store, market="crypto")
    return store, [f.name.split("-")[0] for f in files]


def _timed(run: Callable[[], Any], rounds: int = 2) -> tuple[float, Any]:
    best, out = float("inf"), None
    for _ in range(rounds):
        t0 = time.perf_counter()
        out = run()
        best = min(best, time.perf_counter() - t0)
    return best, out


def _report(
    kind: str, market: tuple[DataStore, list[str]], make: Callable[[int], Executor], benchmark: Any
) -> None:
    store, coins = market

    def run(executor: Executor) -> Any:
        return full_range(Breakout(), coins, "1h", store=store, executor=executor, **SETTINGS)

    with make(1) as one:
        run(one)  # numba caches, file system caches, Ray worker start
        t1, result = _timed(lambda: run(one))
    with make(2) as two:
        run(two)
        benchmark.pedantic(run, args=(two,), rounds=3, iterations=1)
    t2 = benchmark.stats.stats.min
    candles = sum(r.equity.height for r in result.results.values())
    assert result.errors == {} and len(result.results) == len(coins)
    benchmark.extra_info.update(coins=len(coins), candles=candles, seconds_1_worker=t1, seconds_2_workers=t2)
    print(
        f"\nfull_range {kind}: {len(coins)} coins, {candles:,} candles; 1 worker {t1:.3f} s"
        f" ({candles / t1 / 1e6:.2f} M candles/s), 2 workers {t2:.3f} s"
        f" ({candles / t2 / 1e6:.2f} M candles/s); scaling 1 -> 2 workers x{t1 / t2:.2f}"
    )


def test_bench_full_range_local(benchmark: Any, market: tuple[DataStore, list[str]]) -> None:
    _report("LocalExecutor", market, lambda n: LocalExecutor(max_workers=n), benchmark)


def test_bench_full_range_ray(benchmark: Any, market: tuple[DataStore, list[str]]) -> None:
    pytest.importorskip("ray")
    import cloudpickle

    cloudpickle.register_pickle_by_value(sys.modules[__name__])  # workers cannot import this module
    _report(
        "RayExecutor (local)",
        market,
        lambda n: RayExecutor(num_cpus=n, object_store_memory=300 << 20),
        benchmark,
    )


def test_bench_chunked_backtest_btc_1m(benchmark: Any, tmp_path_factory: pytest.TempPathFactory) -> None:
    """A whole-history ``backtest`` of BTCUSDT 1m (4.35 M candles): one piece vs 44 chunks on 2 threads."""
    source = DATASETS / "crypto" / "BTCUSDT-1m.parquet"
    if not source.exists():
        pytest.skip(f"{source} not found")
    store = DataStore(tmp_path_factory.mktemp("bench-btc-1m"))
    import_paths([source], store=store, market="crypto")
    strategy = Breakout()

    def run(chunks: int, executor: Executor) -> Any:
        return backtest(strategy, "BTCUSDT", "1m", store=store, chunks=chunks, executor=executor, **SETTINGS)

    with LocalExecutor(max_workers=2) as two:
        run(1, two)
        t1, one = _timed(lambda: run(1, two))
        result = benchmark.pedantic(run, args=(plan_chunks(4_351_448), two), rounds=2, iterations=1)
    tn = benchmark.stats.stats.min
    assert result.trades.equals(one.trades)
    candles = result.equity.height
    print(
        f"\nbacktest BTCUSDT 1m: {candles:,} candles, {result.trades.height:,} trades; one piece {t1:.3f} s"
        f" ({candles / t1 / 1e6:.1f} M candles/s), {plan_chunks(candles)} chunks on 2 threads {tn:.3f} s"
        f" ({candles / tn / 1e6:.1f} M candles/s)"
    )
