"""The request-path targets of the service, measured as the issue states them: wrk (2 threads, 50
connections, keep-alive, loopback) against ``svc serve`` on SQLite with rate limits on but not
reached. Printed per case: requests per second, p50 and p99 latency, the server's CPU per request,
and the ratio against the reference in the same run: a bare Starlette route doing one SQLite read
in the thread pool on the same uvicorn settings.

Cases: ``account_info`` by API key and by session token on one worker (target >= 2,000 req/s with
p99 < 50 ms), ``GET /``, ``account_info`` by API key on ``--workers 2`` (scaling), and the read
routes of issue 32 (``community_chat``, ``community_posts``, ``marketplace_browse``,
``market_ticker``, ``trend_signals``, ``active_signals``, ``backtest_history``, the education
catalog and a product page; target >= 2,000 req/s with p99 < 50 ms each) on the data ``svc serve``
plants (the samples; no market data store).

wrk is a Debian package (``make bench`` installs it when missing); without it the cases skip, saying so.
``BENCH_WRK_SECONDS`` sets the duration of each run (default 10).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

WRK = shutil.which("wrk")
SECONDS = int(os.environ.get("BENCH_WRK_SECONDS", "10"))
ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.skipif(WRK is None, reason="wrk is not installed (apt-get install wrk)")

BARE = textwrap.dedent(
    """
    import sqlite3, sys, tempfile, threading, uvicorn
    from starlette.applications import Starlette
    from starlette.concurrency import run_in_threadpool
    from starlette.responses import JSONResponse
    from starlette.routing import Route
    path = tempfile.mkdtemp() + "/bare.db"
    db = sqlite3.connect(path)
    db.execute("create table a (id text primary key, v integer)")
    db.execute("insert into a values ('x', 1)")
    db.commit()
    local = threading.local()
    def read():
        conn = getattr(local, "conn", None) or sqlite3.connect(path, check_same_thread=False)
        local.conn = conn
        return conn.execute("select id, v from a where id = ?", ("x",)).fetchone()
    async def user(request):
        await request.body()
        row = await run_in_threadpool(read)
        return JSONResponse({"ok": True, "data": {"id": row[0], "v": row[1]}})
    async def health(request):
        return JSONResponse({"ok": True})
    app = Starlette(routes=[Route("/user", user, methods=["POST"]), Route("/health", health)])
    uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), access_log=False, log_level="warning")
    """
)


@dataclass(frozen=True)
class Run:
    rps: float
    p50_ms: float
    p99_ms: float
    requests: int
    errors: int
    cpu_us: float

    def line(self, name: str, reference: Run | None) -> str:
        ratio = f"  = {self.rps / reference.rps:4.2f}x the bare reference" if reference else ""
        return (
            f"{name:<40} {self.rps:7.0f} req/s  p50 {self.p50_ms:6.1f} ms  p99 {self.p99_ms:6.1f} ms  "
            f"server CPU {self.cpu_us:5.0f} us/req  non-2xx {self.errors}{ratio}"
        )


def _port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _cpu_ticks(pids: list[int]) -> int:
    total = 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])
    return total


def _tree(pid: int) -> list[int]:
    out = [pid]
    for child in Path(f"/proc/{pid}/task/{pid}/children").read_text().split():
        out += _tree(int(child))
    return out


@dataclass
class Server:
    url: str
    process: subprocess.Popen[bytes]

    def pids(self) -> list[int]:
        return _tree(self.process.pid)


def _serve(cmd: list[str], env: dict[str, str], port: int) -> Server:
    process = subprocess.Popen(cmd, env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if httpx.get(url + "/health", timeout=2).status_code == 200:
                return Server(url, process)
        except httpx.TransportError:
            time.sleep(0.2)
    process.kill()
    raise RuntimeError(f"{cmd} did not start")


def _stop(server: Server) -> None:
    server.process.terminate()
    try:
        server.process.wait(15)
    except subprocess.TimeoutExpired:
        server.process.kill()


@pytest.fixture(scope="module")
def bare() -> Iterator[Server]:
    port = _port()
    server = _serve([sys.executable, "-c", BARE, str(port)], dict(os.environ), port)
    yield server
    _stop(server)


def _svc(workers: int) -> Iterator[Server]:
    var = Path(tempfile.mkdtemp(prefix="svc-bench-"))
    port = _port()
    env = {
        **os.environ,
        "DATABASE_URL": f"sqlite:///{var / 'svc.db'}",
        "SVC_VAR_DIR": str(var),
        "SECRET_KEY": "bench-secret-key-0123456789abcdef",
        "RATE_LIMIT_SCALE": "100000",
        "TREND_REFRESH_SECONDS": "0",
        "SVC_GENERATION_THREADS": "0",
    }
    env.pop("REDIS_URL", None)
    cmd = [str(Path(sys.executable).parent / "svc"), "serve", "--port", str(port), "--workers", str(workers)]
    cmd += ["--log-level", "warning"]
    server = _serve(cmd, env, port)
    yield server
    _stop(server)


@pytest.fixture(scope="module")
def one_worker() -> Iterator[Server]:
    yield from _svc(1)


@pytest.fixture(scope="module")
def two_workers() -> Iterator[Server]:
    yield from _svc(2)


def _credentials(server: Server) -> dict[str, str]:
    def user(request_type: str, headers: dict[str, str], body: dict[str, Any]) -> dict[str, Any]:
        reply = httpx.post(
            f"{server.url}/user",
            params={"request_type": request_type},
            json=body,
            headers=headers,
            timeout=30,
        )
        reply.raise_for_status()
        return reply.json()["data"]

    email = f"bench-{uuid.uuid4().hex[:10]}@example.com"
    session = user("register", {}, {"email": email, "password": "correct horse battery"})
    bearer = {"Authorization": f"Bearer {session['session_token']}"}
    key = user("api_key_generate", bearer, {"label": "bench"})
    return {"key": key["api_key"], "secret": key["api_secret"], "token": session["session_token"]}


def _wrk(server: Server, path: str, headers: dict[str, str], post: bool) -> Run:
    lua = Path(tempfile.mkstemp(suffix=".lua")[1])
    lines = [f'wrk.headers["{k}"] = "{v}"' for k, v in headers.items()]
    if post:
        lines = [
            'wrk.method = "POST"',
            'wrk.body = "{}"',
            'wrk.headers["Content-Type"] = "application/json"',
            *lines,
        ]
    lua.write_text("\n".join(lines) + "\n")
    before = _cpu_ticks(server.pids())
    out = subprocess.run(
        [WRK or "wrk", "-t2", "-c50", f"-d{SECONDS}s", "--latency", "-s", str(lua), server.url + path],
        capture_output=True,
        text=True,
        timeout=SECONDS + 60,
        check=True,
    ).stdout
    ticks = _cpu_ticks(server.pids()) - before
    requests = int(re.search(r"(\d+) requests in", out).group(1))  # type: ignore[union-attr]
    errors = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    hz = os.sysconf("SC_CLK_TCK")
    return Run(
        rps=float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1)),  # type: ignore[union-attr]
        p50_ms=_ms(re.search(r"50%\s+([\d.]+\w+)", out).group(1)),  # type: ignore[union-attr]
        p99_ms=_ms(re.search(r"99%\s+([\d.]+\w+)", out).group(1)),  # type: ignore[union-attr]
        requests=requests,
        errors=int(errors.group(1)) if errors else 0,
        cpu_us=ticks / hz / max(1, requests) * 1e6,
    )


def _ms(text: str) -> float:
    value, unit = re.match(r"([\d.]+)(\w+)", text).groups()  # type: ignore[union-attr]
    return float(value) * {"us": 1e-3, "ms": 1.0, "s": 1e3}[unit]


def _record(benchmark: Any, name: str, run: Run, reference: Run | None) -> None:
    benchmark.pedantic(lambda: None, rounds=1, iterations=1)
    print("\n" + run.line(name, reference))
    benchmark.extra_info.update(
        rps=round(run.rps),
        p50_ms=run.p50_ms,
        p99_ms=run.p99_ms,
        cpu_us=round(run.cpu_us),
        vs_bare=round(run.rps / reference.rps, 2) if reference else None,
    )


_REFERENCE: dict[str, Run] = {}


def test_bench_reference_bare_starlette_one_sqlite_read(benchmark: Any, bare: Server) -> None:
    run = _wrk(bare, "/user?request_type=account_info", {}, post=True)
    _REFERENCE["bare"] = run
    _record(benchmark, "reference: bare Starlette + 1 SQLite read", run, None)
    assert run.errors == 0


def test_bench_account_info_api_key_one_worker(benchmark: Any, one_worker: Server) -> None:
    c = _credentials(one_worker)
    run = _wrk(
        one_worker,
        "/user?request_type=account_info",
        {"X-API-Key": c["key"], "X-API-Secret": c["secret"]},
        True,
    )
    _record(benchmark, "account_info, API key, 1 worker", run, _REFERENCE.get("bare"))
    assert run.errors == 0


def test_bench_account_info_session_one_worker(benchmark: Any, one_worker: Server) -> None:
    c = _credentials(one_worker)
    run = _wrk(one_worker, "/user?request_type=account_info", {"Authorization": f"Bearer {c['token']}"}, True)
    _record(benchmark, "account_info, session, 1 worker", run, _REFERENCE.get("bare"))
    assert run.errors == 0


def test_bench_platform_config_one_worker(benchmark: Any, one_worker: Server) -> None:
    run = _wrk(one_worker, "/", {}, post=False)
    _record(benchmark, "GET / (guest), 1 worker", run, _REFERENCE.get("bare"))


def test_bench_account_info_api_key_two_workers(benchmark: Any, two_workers: Server) -> None:
    c = _credentials(two_workers)
    run = _wrk(
        two_workers,
        "/user?request_type=account_info",
        {"X-API-Key": c["key"], "X-API-Secret": c["secret"]},
        True,
    )
    _record(benchmark, "account_info, API key, 2 workers", run, _REFERENCE.get("bare"))
    assert run.errors == 0


READS = [
    ("community_chat", "/tradingdata?request_type=community_chat", False),
    ("community_posts", "/tradingdata?request_type=community_posts", False),
    ("marketplace_browse", "/tradingdata?request_type=marketplace_browse", False),
    ("market_ticker", "/tradingdata?request_type=market_ticker", False),
    ("trend_signals", "/tradingdata?request_type=trend_signals", False),
    ("active_signals", "/user?request_type=active_signals", True),
    ("backtest_history", "/user?request_type=backtest_history", True),
    ("education catalog", "/education/v1/catalog", False),
]


@pytest.mark.parametrize(("name", "path", "keyed"), READS, ids=[r[0] for r in READS])
def test_bench_read_routes_one_worker(
    benchmark: Any, one_worker: Server, name: str, path: str, keyed: bool
) -> None:
    """The read routes of issue 32 (target >= 2,000 req/s, p99 < 50 ms): guests on ``/tradingdata``
    and the catalog, an API key on ``/user``; the samples ``svc serve`` plants are the data."""
    headers = {}
    if keyed:
        c = _credentials(one_worker)
        headers = {"X-API-Key": c["key"], "X-API-Secret": c["secret"]}
    run = _wrk(one_worker, path, headers, post=keyed)
    _record(benchmark, f"{name}, 1 worker", run, _REFERENCE.get("bare"))
    assert run.errors == 0


def test_bench_product_page_one_worker(benchmark: Any, one_worker: Server) -> None:
    """A sample product's page (``GET /education/v1/products/{id}``) as a guest."""
    items = httpx.get(one_worker.url + "/education/v1/catalog", timeout=30).json()["items"]
    run = _wrk(one_worker, f"/education/v1/products/{items[0]['product_id']}", {}, post=False)
    _record(benchmark, "education product page, 1 worker", run, _REFERENCE.get("bare"))
    assert run.errors == 0
