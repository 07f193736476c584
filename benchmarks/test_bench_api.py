"""Load test of the real service: uvicorn on loopback, SQLite in a temporary directory, concurrent
httpx clients. Reports requests per second and p50/p99 latency for ``GET /``, ``account_info``
with API-key authentication and ``credits_history``.

The client runs in this process (one event loop) and competes with the server for the machine's
cores, so the figures are a floor for the server alone. Rate limits are scaled up through
``RATE_LIMIT_SCALE`` so that the load measures the request path, not 429 answers; the status
counts are printed so a run that was throttled anyway shows it.

Run: ``.venv/bin/python -m pytest benchmarks/test_bench_api.py --benchmark-only -s``
"""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import pytest

CONCURRENCY = int(os.environ.get("BENCH_API_CONCURRENCY", "32"))
DURATION_S = float(os.environ.get("BENCH_API_SECONDS", "5"))
WARMUP_S = 1.0
MAX_REQUESTS = 200_000  # a bound even if the machine is far faster than expected


@dataclass(frozen=True)
class Load:
    """Outcome of one load run."""

    requests: int
    seconds: float
    p50_ms: float
    p99_ms: float
    statuses: dict[int, int]

    @property
    def rps(self) -> float:
        return self.requests / self.seconds

    def line(self, name: str) -> str:
        return (
            f"{name:<34} {self.rps:8.0f} req/s   p50 {self.p50_ms:6.2f} ms   p99 {self.p99_ms:6.2f} ms   "
            f"({self.requests} requests, {CONCURRENCY} concurrent, "
            f"statuses {dict(sorted(self.statuses.items()))})"
        )


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _wait_until_up(url: str, proc: subprocess.Popen[bytes], timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode}: {proc.stderr.read().decode()[-2000:]}")
        try:
            if httpx.get(url + "/", timeout=1.0).status_code == 200:
                return
        except httpx.TransportError:
            time.sleep(0.2)
    raise RuntimeError("server did not answer GET / in time")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``uvicorn --factory svc_api.app:create_app`` on a free loopback port; yields the base URL."""
    var = tmp_path_factory.mktemp("svc-bench")
    port = _free_port()
    env = {
        **os.environ,
        "DATABASE_URL": f"sqlite:///{var / 'svc.db'}",
        "SVC_VAR_DIR": str(var),
        "SECRET_KEY": "bench-secret-key-0123456789abcdef",
        "RATE_LIMIT_SCALE": "100000",
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
    proc = subprocess.Popen(
        cmd,
        env=env,
        cwd=Path(__file__).resolve().parents[1],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_until_up(url, proc)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if proc.stderr is not None:
            proc.stderr.close()


def _user(url: str, request_type: str, headers: dict[str, str], body: dict[str, Any]) -> dict[str, Any]:
    r = httpx.post(
        f"{url}/user", params={"request_type": request_type}, json=body, headers=headers, timeout=10
    )
    if r.status_code != 200:
        raise RuntimeError(f"{request_type} -> {r.status_code} {r.text}")
    return r.json()["data"]


@pytest.fixture(scope="module")
def key_headers(server: str) -> dict[str, str]:
    """Register an account over HTTP, create its API key with the session, return key headers."""
    email = f"bench-{uuid.uuid4().hex[:12]}@example.com"
    session = _user(server, "register", {}, {"email": email, "password": "correct horse battery"})
    bearer = {"Authorization": f"Bearer {session['session_token']}"}
    key = _user(server, "api_key_generate", bearer, {"label": "benchmark"})
    return {"X-API-Key": key["api_key"], "X-API-Secret": key["api_secret"]}


async def _drive(
    url: str,
    method: str,
    path: str,
    *,
    params: dict[str, str] | None = None,
    headers: dict[str, str] | None = None,
    json: Any = None,
) -> Load:
    """CONCURRENCY workers over one pooled client: warm up, then measure for DURATION_S."""
    latencies: list[float] = []
    statuses: Counter[int] = Counter()
    limits = httpx.Limits(max_connections=CONCURRENCY, max_keepalive_connections=CONCURRENCY)
    async with httpx.AsyncClient(base_url=url, limits=limits, timeout=30.0, headers=headers) as client:

        async def worker(until: float, record: bool) -> None:
            while time.perf_counter() < until and len(latencies) < MAX_REQUESTS:
                start = time.perf_counter()
                response = await client.request(method, path, params=params, json=json)
                if record:
                    latencies.append(time.perf_counter() - start)
                    statuses[response.status_code] += 1

        warm_until = time.perf_counter() + WARMUP_S
        await asyncio.gather(*(worker(warm_until, False) for _ in range(CONCURRENCY)))
        began = time.perf_counter()
        await asyncio.gather(*(worker(began + DURATION_S, True) for _ in range(CONCURRENCY)))
        elapsed = time.perf_counter() - began
    ms = np.asarray(latencies) * 1000.0
    return Load(len(ms), elapsed, float(np.percentile(ms, 50)), float(np.percentile(ms, 99)), dict(statuses))


def _run(benchmark: Any, name: str, url: str, method: str, path: str, **kw: Any) -> Load:
    load: Load = benchmark.pedantic(
        lambda: asyncio.run(_drive(url, method, path, **kw)), rounds=1, iterations=1
    )
    print("\n" + load.line(name))
    benchmark.extra_info.update(
        rps=round(load.rps),
        p50_ms=round(load.p50_ms, 2),
        p99_ms=round(load.p99_ms, 2),
        requests=load.requests,
        concurrency=CONCURRENCY,
        statuses={str(k): v for k, v in load.statuses.items()},
    )
    return load


def test_bench_platform_config(benchmark: Any, server: str) -> None:
    """``GET /``: public, no credentials (guest rate-limit path)."""
    load = _run(benchmark, "GET / (guest)", server, "GET", "/")
    assert load.statuses.get(200, 0) == load.requests


def test_bench_account_info_api_key(benchmark: Any, server: str, key_headers: dict[str, str]) -> None:
    """``account_info`` authenticated by ``X-API-Key`` + ``X-API-Secret``."""
    load = _run(
        benchmark,
        "account_info (API key)",
        server,
        "POST",
        "/user",
        params={"request_type": "account_info"},
        headers=key_headers,
        json={},
    )
    assert load.statuses.get(200, 0) == load.requests


def test_bench_credits_history(benchmark: Any, server: str, key_headers: dict[str, str]) -> None:
    """``credits_history`` first page, authenticated by API key."""
    load = _run(
        benchmark,
        "credits_history (API key)",
        server,
        "POST",
        "/user",
        params={"request_type": "credits_history"},
        headers=key_headers,
        json={},
    )
    assert load.statuses.get(200, 0) == load.requests
