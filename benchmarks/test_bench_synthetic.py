"""How long the full synthetic market takes to generate and how much disk it needs.

Run: ``.venv/bin/python -m pytest benchmarks/test_bench_synthetic.py -p no:cacheprovider -s``
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest

from svc_engine.data.store import DataStore
from svc_engine.data.synthetic import generate_market

pytest.importorskip("pytest_benchmark")


def test_bench_generate_full_market(benchmark: Any, tmp_path: Path) -> None:
    summaries: list[dict[str, Any]] = []

    def fresh_store() -> tuple[tuple[DataStore], dict[str, Any]]:
        return (DataStore(tempfile.mkdtemp(dir=tmp_path)),), {}

    def run(store: DataStore) -> None:
        summaries.append(generate_market(store))
        shutil.rmtree(store.root)

    generate_market(DataStore(tmp_path / "warm"), small=True)  # compile the numba kernels first
    benchmark.pedantic(run, setup=fresh_store, rounds=2, iterations=1)
    s = summaries[-1]
    seconds = benchmark.stats.stats.min
    benchmark.extra_info.update(
        candles=s["candles"], bytes=s["bytes"], files=s["files"], candles_per_second=s["candles"] / seconds
    )
    print(
        f"\nsynthetic market: {s['instruments']} instruments, {s['files']} files, "
        f"{s['candles']:,} candles, "
        f"{s['bytes'] / 1e6:.1f} MB in {seconds:.2f} s ({s['candles'] / seconds:,.0f} candles/s)"
    )
    assert s["candles"] == 1_493_806
