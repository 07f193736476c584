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
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import httpx
import numpy as np
import pytest

CONCURRENCY = int(os.environ.get("BENCH_API_CONCURRENCY", "32"))
WORKERS = int(os.environ.get("BENCH_API_WORKERS", "1"))  # uvicorn worker processes of the service
REDIS_URL = os.environ.get("BENCH_API_REDIS_URL")  # rate limits in Redis instead of memory when set
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
    server_cpu_s: float
    client_cpu_s: float

    @property
    def rps(self) -> float:
        return self.requests / self.seconds

    @property
    def server_us(self) -> float:
        """Server CPU time per request (all its threads): what the service costs, whatever the load."""
        return self.server_cpu_s / self.requests * 1e6

    def line(self, name: str) -> str:
        per_core = 1e6 / self.server_us if self.server_us > 0 else float("inf")
        return (
            f"{name:<34} {self.rps:7.0f} req/s  p50 {self.p50_ms:7.2f} ms  p99 {self.p99_ms:7.2f} ms  "
            f"server CPU {self.server_us:6.0f} us/req (= {per_core:5.0f} req/s per core)  "
            f"client CPU {self.client_cpu_s / self.requests * 1e6:4.0f} us/req  "
            f"[{self.requests} requests, {CONCURRENCY} concurrent, {WORKERS} worker(s), "
            f"limits in {'Redis' if REDIS_URL else 'memory'}, "
            f"statuses {dict(sorted(self.statuses.items()))}]"
        )


@dataclass(frozen=True)
class Server:
    """A running server: its base URL and process id (for CPU accounting)."""

    url: str
    pid: int


def _cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of a process, its threads and its live child processes (Linux
    ``/proc``; uvicorn ``--workers N`` runs the app in children)."""
    total, pending = 0.0, [pid]
    while pending:
        current = pending.pop()
        try:
            fields = Path(f"/proc/{current}/stat").read_text().rpartition(")")[2].split()
            for task in Path(f"/proc/{current}/task").iterdir():
                pending += [int(c) for c in (task / "children").read_text().split()]
        except FileNotFoundError:
            continue
        total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return total


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _wait_until_up(url: str, proc: subprocess.Popen[bytes], log: IO[bytes], timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            log.seek(0)
            raise RuntimeError(f"server exited with {proc.returncode}: {log.read().decode()[-2000:]}")
        try:
            if httpx.get(url + "/health", timeout=10.0).status_code == 200:
                return
        except httpx.TransportError:
            time.sleep(0.2)
    raise RuntimeError("server did not answer GET /health in time")


# The reference: the same client against a bare Starlette endpoint on the same uvicorn settings, so
# the service's figures can be read against what this machine and client allow at that moment.
BARE_SERVER = """
import sys, uvicorn
from starlette.applications import Starlette
from starlette.responses import JSONResponse
from starlette.routing import Route
async def ok(request):
    return JSONResponse({"ok": True})
app = Starlette(routes=[Route("/", ok), Route("/health", ok)])
uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), access_log=False, log_level="warning")
"""


@contextmanager
def _serving(cmd: list[str], env: dict[str, str], port: int) -> Iterator[Server]:
    """Run ``cmd`` (a server on ``port``) until the block ends; its log goes to a temporary file."""
    with tempfile.TemporaryFile() as log:
        proc = subprocess.Popen(
            cmd, env=env, cwd=Path(__file__).resolve().parents[1], stdout=log, stderr=subprocess.STDOUT
        )
        try:
            url = f"http://127.0.0.1:{port}"
            _wait_until_up(url, proc, log)
            yield Server(url, proc.pid)
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


@pytest.fixture(scope="module")
def bare_server() -> Iterator[Server]:
    """A bare Starlette app under uvicorn on a free loopback port."""
    port = _free_port()
    with _serving([sys.executable, "-c", BARE_SERVER, str(port)], dict(os.environ), port) as running:
        yield running


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """``uvicorn --factory svc_api.app:create_app`` on a free loopback port; yields the base URL."""
    var = tmp_path_factory.mktemp("svc-bench")
    port = _free_port()
    env = {
        **os.environ,
        "DATABASE_URL": f"sqlite:///{var / 'svc.db'}",
        "SVC_VAR_DIR": str(var),
        "SECRET_KEY": "bench-secret-key-0123456789abcdef",
        "RATE_LIMIT_SCALE": "100000",
        "TREND_REFRESH_SECONDS": "0",  # no background trend scan competing with the load
    }
    env.pop("REDIS_URL", None)
    if REDIS_URL:
        env["REDIS_URL"] = REDIS_URL
    cmd = [sys.executable, "-m", "uvicorn", "--factory", "svc_api.app:create_app", "--host", "127.0.0.1"]
    cmd += ["--port", str(port), "--workers", str(WORKERS), "--no-access-log", "--log-level", "warning"]
    with _serving(cmd, env, port) as running:
        yield running


def _user(url: str, request_type: str, headers: dict[str, str], body: dict[str, Any]) -> dict[str, Any]:
    r = httpx.post(
        f"{url}/user", params={"request_type": request_type}, json=body, headers=headers, timeout=10
    )
    if r.status_code != 200:
        raise RuntimeError(f"{request_type} -> {r.status_code} {r.text}")
    return r.json()["data"]


@pytest.fixture(scope="module")
def key_headers(server: Server) -> dict[str, str]:
    """Register an account over HTTP, create its API key with the session, return key headers."""
    email = f"bench-{uuid.uuid4().hex[:12]}@example.com"
    session = _user(server.url, "register", {}, {"email": email, "password": "correct horse battery"})
    bearer = {"Authorization": f"Bearer {session['session_token']}"}
    key = _user(server.url, "api_key_generate", bearer, {"label": "benchmark"})
    return {"X-API-Key": key["api_key"], "X-API-Secret": key["api_secret"]}


async def _drive(
    server: Server,
    method: str,
    path: str,
    *,
    params: dict[str, str] | None = None,
    headers: dict[str, str] | None = None,
    json: Any = None,
) -> Load:
    """CONCURRENCY workers, each with its own keep-alive connection: warm up, then measure.

    One client per worker: a shared httpx pool costs the client time that grows with the number of
    connections it holds (measured: 1.5 ms of client CPU per request at 4 connections, 5 ms at 32).
    """
    latencies: list[float] = []
    statuses: Counter[int] = Counter()
    one = httpx.Limits(max_connections=1, max_keepalive_connections=1)
    clients = [
        httpx.AsyncClient(base_url=server.url, limits=one, timeout=30.0, headers=headers)
        for _ in range(CONCURRENCY)
    ]

    async def worker(client: httpx.AsyncClient, until: float, record: bool) -> None:
        while time.perf_counter() < until and len(latencies) < MAX_REQUESTS:
            start = time.perf_counter()
            response = await client.request(method, path, params=params, json=json)
            if record:
                latencies.append(time.perf_counter() - start)
                statuses[response.status_code] += 1

    try:
        warm_until = time.perf_counter() + WARMUP_S
        await asyncio.gather(*(worker(c, warm_until, False) for c in clients))
        server_cpu, client_cpu = _cpu_seconds(server.pid), time.process_time()
        began = time.perf_counter()
        await asyncio.gather(*(worker(c, began + DURATION_S, True) for c in clients))
        elapsed = time.perf_counter() - began
        server_cpu, client_cpu = _cpu_seconds(server.pid) - server_cpu, time.process_time() - client_cpu
    finally:
        await asyncio.gather(*(c.aclose() for c in clients))
    ms = np.asarray(latencies) * 1000.0
    p50, p99 = float(np.percentile(ms, 50)), float(np.percentile(ms, 99))
    return Load(len(ms), elapsed, p50, p99, dict(statuses), server_cpu, client_cpu)


def _run(benchmark: Any, name: str, server: Server, method: str, path: str, **kw: Any) -> Load:
    load: Load = benchmark.pedantic(
        lambda: asyncio.run(_drive(server, method, path, **kw)), rounds=1, iterations=1
    )
    print("\n" + load.line(name))
    benchmark.extra_info.update(
        rps=round(load.rps),
        p50_ms=round(load.p50_ms, 2),
        p99_ms=round(load.p99_ms, 2),
        requests=load.requests,
        server_cpu_us_per_request=round(load.server_us),
        concurrency=CONCURRENCY,
        statuses={str(k): v for k, v in load.statuses.items()},
    )
    return load


def test_bench_reference_bare_starlette(benchmark: Any, bare_server: Server) -> None:
    """Reference: a bare Starlette JSON endpoint, same client and server settings."""
    load = _run(benchmark, "reference: bare Starlette GET /", bare_server, "GET", "/")
    assert load.statuses.get(200, 0) == load.requests


def test_bench_platform_config(benchmark: Any, server: Server) -> None:
    """``GET /``: public, no credentials (guest rate-limit path)."""
    load = _run(benchmark, "GET / (guest)", server, "GET", "/")
    assert load.statuses.get(200, 0) == load.requests


def test_bench_account_info_api_key(benchmark: Any, server: Server, key_headers: dict[str, str]) -> None:
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


def test_bench_credits_history(benchmark: Any, server: Server, key_headers: dict[str, str]) -> None:
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
