"""Load test of the guest market and trend reads: ``market_ticker`` and ``trend_signals`` (page 0)
against the real service (uvicorn on loopback, SQLite) over the embedded synthetic market.

The data store is the full synthetic market (24 crypto pairs; ``BENCH_MARKET_SMALL=1`` for the
5-pair test market). The server's trend refresh job fills the signals at start-up; the load starts
once they are listed. Guests are limited per IP, so ``RATE_LIMIT_SCALE`` lifts the limits: the load
measures the request path, not 429 answers (the status counts are printed). The client shares the
machine's cores with the server, so the figures are a floor.

Run: ``.venv/bin/python -m pytest benchmarks/test_bench_market_api.py --benchmark-only -s``
"""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import pytest

from svc_engine.data import DataStore
from svc_engine.data.synthetic import generate_market

CONCURRENCY = int(os.environ.get("BENCH_API_CONCURRENCY", "16"))
DURATION_S = float(os.environ.get("BENCH_API_SECONDS", "5"))
SMALL = os.environ.get("BENCH_MARKET_SMALL", "") == "1"
WARMUP_S = 1.0


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _wait_for_signals(url: str, proc: subprocess.Popen[bytes], timeout: float = 120.0) -> int:
    """Wait until the server answers and its refresh job has stored the signals; return their count."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode}")
        try:
            reply = httpx.get(f"{url}/tradingdata", params={"request_type": "trend_signals"}, timeout=10.0)
            if reply.status_code == 200 and reply.json()["count"]:
                return int(reply.json()["count"])
        except httpx.TransportError:
            pass
        time.sleep(0.5)
    raise RuntimeError("the trend refresh job stored no signal in time")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The service under uvicorn over a fresh synthetic market; yields its base URL."""
    var = tmp_path_factory.mktemp("svc-market-bench")
    summary = generate_market(DataStore(var / "data"), small=SMALL)
    print(f"\nmarket: {summary['instruments']} instruments, {summary['candles']} candles")
    port = _free_port()
    env = {
        **os.environ,
        "DATABASE_URL": f"sqlite:///{var / 'svc.db'}",
        "SVC_VAR_DIR": str(var),
        "DATA_DIR": str(var / "data"),
        "SECRET_KEY": "bench-secret-key-0123456789abcdef",
        "RATE_LIMIT_SCALE": "100000",
        "TREND_REFRESH_SECONDS": "3600",
    }
    env.pop("REDIS_URL", None)
    cmd = [
        sys.executable,
        "-m",
        "uvicorn",
        "--factory",
        "svc_api.app:create_app",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--no-access-log",
        "--log-level",
        "warning",
    ]
    with tempfile.TemporaryFile() as log:
        proc = subprocess.Popen(
            cmd, env=env, cwd=Path(__file__).resolve().parents[1], stdout=log, stderr=subprocess.STDOUT
        )
        try:
            url = f"http://127.0.0.1:{port}"
            print(f"trend signals listed: {_wait_for_signals(url, proc)}")
            yield url
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


async def _drive(url: str, params: dict[str, str]) -> tuple[int, float, float, float, dict[int, int]]:
    """CONCURRENCY keep-alive clients: warm up, then count requests for DURATION_S seconds."""
    latencies: list[float] = []
    statuses: Counter[int] = Counter()
    one = httpx.Limits(max_connections=1, max_keepalive_connections=1)
    clients = [httpx.AsyncClient(base_url=url, limits=one, timeout=30.0) for _ in range(CONCURRENCY)]

    async def worker(client: httpx.AsyncClient, until: float, record: bool) -> None:
        while time.perf_counter() < until:
            start = time.perf_counter()
            reply = await client.get("/tradingdata", params=params)
            if record:
                latencies.append(time.perf_counter() - start)
                statuses[reply.status_code] += 1

    try:
        warm = time.perf_counter() + WARMUP_S
        await asyncio.gather(*(worker(c, warm, False) for c in clients))
        began = time.perf_counter()
        await asyncio.gather(*(worker(c, began + DURATION_S, True) for c in clients))
        elapsed = time.perf_counter() - began
    finally:
        await asyncio.gather(*(c.aclose() for c in clients))
    ms = np.asarray(latencies) * 1000.0
    return len(ms), elapsed, float(np.percentile(ms, 50)), float(np.percentile(ms, 99)), dict(statuses)


def _run(benchmark: Any, name: str, url: str, params: dict[str, str]) -> dict[int, int]:
    n, seconds, p50, p99, statuses = benchmark.pedantic(
        lambda: asyncio.run(_drive(url, params)), rounds=1, iterations=1
    )
    print(
        f"\n{name:<32} {n / seconds:7.0f} req/s  p50 {p50:7.2f} ms  p99 {p99:7.2f} ms  "
        f"[{n} requests, {CONCURRENCY} concurrent guests, statuses {dict(sorted(statuses.items()))}]"
    )
    benchmark.extra_info.update(
        rps=round(n / seconds),
        p50_ms=round(p50, 2),
        p99_ms=round(p99, 2),
        requests=n,
        concurrency=CONCURRENCY,
    )
    return statuses


def test_bench_market_ticker_guest(benchmark: Any, server: str) -> None:
    """``market_ticker`` as a guest: every pair, default page (rows cached 5 s in the process)."""
    statuses = _run(benchmark, "market_ticker (guest)", server, {"request_type": "market_ticker"})
    assert set(statuses) == {200}


def test_bench_trend_signals_guest(benchmark: Any, server: str) -> None:
    """``trend_signals`` page 0 as a guest (served from the store, page cached 5 s)."""
    statuses = _run(benchmark, "trend_signals (guest)", server, {"request_type": "trend_signals"})
    assert set(statuses) == {200}
