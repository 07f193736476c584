"""Issue 28's scale-out target: two ``svc worker`` processes on 2 cores against one, on the same
pass (20,000 strategy-coin pairs over 100 coins, PostgreSQL, a new 1h candle a round). Each process
takes half the coins' partitions through its lease; a round ends when both have committed.

Printed: the round's wall time with one process and with two, pairs per second, and the ratio
(target >= 1.7x), with the load average (other work on the machine lowers the ratio).

Run: ``.venv/bin/python -m pytest benchmarks/test_bench_signal_processes.py -p no:randomly -s -n 0``
"""

from __future__ import annotations

import multiprocessing as mp
import os
import shutil
import time
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest

from benchmarks import test_bench_signals as one_process
from benchmarks.test_bench_signals import T0, _database, _owners_bulk, _services, _strategy

pytest.importorskip("pytest_benchmark")
ROUNDS, STRATEGIES = 3, 400  # 400 strategies x 50 coins


def _worker(url: str, data: str, name: str, orders: Any, done: Any) -> None:
    """A worker process: one pass per order (the market time to pass at), reporting its time."""
    from svc_api.core.clock import ManualClock
    from svc_api.signals import service

    # leases of two hours: the bench clock moves an hour a round, and a lease must outlive it
    services = _services(Path(data).parent / f"proc-{name}", Path(data), url=url, signal_lease_seconds=7200)
    services.worker_holder = name
    while (at := orders.get()) is not None:
        if isinstance(services.clock, ManualClock):
            services.clock.advance(at - services.clock.now())
        began = time.perf_counter()
        got = service.run_once(services)
        done.put((name, time.perf_counter() - began, got["evaluated"]))


def _setup(tmp: Path, market: Path) -> tuple[str, Path, list[str]]:
    from benchmarks.test_bench_live import family_programs
    from svc_api.accounts import service as accounts

    data = tmp / "data"
    shutil.copytree(market, data)
    url = _database(tmp / "db", "postgres")
    services = _services(tmp / "db", data, url=url)
    owners = _owners_bulk(services, STRATEGIES)
    symbols = sorted(p.stem for p in (market.parent / "next").glob("*.parquet"))
    halves = [[s.removesuffix("USDT") for s in symbols[:50]], [s.removesuffix("USDT") for s in symbols[50:]]]
    programs = family_programs(STRATEGIES // 2)
    with services.store.write() as conn:
        for i, svc_id in enumerate(owners):
            accounts.grant_plan(conn, svc_id, "investor", 3650, now=T0)
            _strategy(conn, svc_id, "strat", halves[i % 2], programs[i // 2])
    services.close()
    return url, data, symbols


def _rounds(url: str, data: Path, symbols: list[str], market: Path, names: list[str]) -> list[float]:
    """Wall time of each timed round with ``names`` worker processes (the first round warms up)."""
    ctx = mp.get_context("spawn")
    orders = {n: ctx.Queue() for n in names}
    done = ctx.Queue()
    procs = [ctx.Process(target=_worker, args=(url, str(data), n, orders[n], done)) for n in names]
    for p in procs:
        p.start()
    store = None
    walls = []
    try:
        from svc_engine.data import DataStore

        store = DataStore(data)
        at = T0
        for k in range(-1, ROUNDS):
            if k >= 0:
                for symbol in symbols:  # the feed's append, before the close it brings
                    frame = pl.read_parquet(market.parent / "next" / f"{symbol}.parquet")[k : k + 1]
                    store.append_klines("crypto", symbol, "1h", frame)
                at += 3600
            began = time.perf_counter()
            for n in names:
                orders[n].put(at)
            results = [done.get(timeout=1800) for _ in names]
            walls.append(time.perf_counter() - began)
            if k >= 0:
                assert sum(r[2] for r in results) == STRATEGIES * 50, results
    finally:
        for n in names:
            orders[n].put(None)
        for p in procs:
            p.join(timeout=60)
    return walls[2:]  # the start-up pass and the first close (books built) are not timed


@pytest.fixture(scope="module")
def market() -> Path:
    """The 100 random-walk coins of ``test_bench_signals`` (and the candles each round appends)."""
    return one_process.wide_market.__wrapped__()


def test_bench_two_worker_processes_against_one(benchmark: Any, market: Path, tmp_path: Path) -> None:
    url1, data1, symbols = _setup(tmp_path / "one", market)
    url2, data2, _ = _setup(tmp_path / "two", market)

    def both() -> tuple[float, float]:
        one = float(np.median(_rounds(url1, data1, symbols, market, ["solo"])))
        two = float(np.median(_rounds(url2, data2, symbols, market, ["w-a", "w-b"])))
        return one, two

    one, two = benchmark.pedantic(both, rounds=1, iterations=1)
    pairs = STRATEGIES * 50
    print(
        f"\n{pairs:,} pairs a close on PostgreSQL: one worker process {one:.2f} s "
        f"({pairs / one:,.0f} pairs/s), two {two:.2f} s ({pairs / two:,.0f} pairs/s): "
        f"{one / two:.2f}x (target >= 1.7x; "
        f"load {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)"
    )
