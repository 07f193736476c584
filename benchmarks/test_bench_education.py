"""The education API at load (issue 17), through the real service (uvicorn on loopback, SQLite):
guest catalog reads, and playback event batches.

Printed: requests per second, p50/p99 and server CPU per request of

- ``GET /education/v1/catalog`` by guests (the sample catalog, a filter and a sort), and
- ``POST /education/v1/playback-sessions/{id}/events``: each client owns a session of its own
  student and sends batches ``seq = 1, 2, ...`` of three events under fresh idempotency keys (each a
  claim, the accounting, the progress merge and the stored reply: four writes in one transaction).

Run: ``.venv/bin/python -m pytest benchmarks/test_bench_education.py --benchmark-only -s``
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
import uuid
from collections import Counter
from typing import Any

import httpx
import numpy as np
import pytest

from benchmarks.test_bench_api import (
    CONCURRENCY,
    DURATION_S,
    WARMUP_S,
    Load,
    Server,
    _cpu_seconds,
    _free_port,
    _serving,
)
from benchmarks.test_bench_community import _members
from svc_api.core.store import Store
from svc_api.education.catalog import service as catalog
from svc_api.education.commerce import service as commerce
from svc_api.education.commerce.provider import SandboxProvider
from svc_api.migrations import migrate

SECRET = "bench-secret-key-0123456789abcdef"
VIDEO = {
    "kind": "course",
    "title": "Bench course",
    "language": "en",
    "level": "beginner",
    "price_minor": 0,
    "currency": "USD",
    "topics": [],
    "curriculum": {
        "sections": [
            {
                "section_id": "s",
                "title": "S",
                "lessons": [
                    {
                        "lesson_id": "v1",
                        "title": "Video",
                        "kind": "video",
                        "duration_seconds": 3600,
                        "preview": False,
                    }
                ],
            }
        ]
    },
}


@pytest.fixture(scope="module")
def edu_server(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """The service with the sample catalog and :data:`CONCURRENCY` students who own a free course."""
    var = tmp_path_factory.mktemp("svc-bench-edu")
    store = Store(f"sqlite:///{var / 'svc.db'}")
    migrate(store)
    now = int(time.time())
    (teacher,), _ = _members(store, 1, "T", now)
    students, tokens = _members(store, CONCURRENCY, "S", now)
    provider = SandboxProvider(SECRET.encode())
    with store.write() as conn:
        course = catalog.publish_product(conn, teacher, VIDEO, now=now)
        for svc_id in students:
            commerce.checkout(
                conn, provider, svc_id, {"product_id": course}, now=now, is_open=True, ttl=60, expected=None
            )
    store.dispose()
    port = _free_port()
    env = {
        **os.environ,
        "DATABASE_URL": f"sqlite:///{var / 'svc.db'}",
        "SVC_VAR_DIR": str(var),
        "SECRET_KEY": SECRET,
        "RATE_LIMIT_SCALE": "100000",
        "TREND_REFRESH_SECONDS": "0",
        "SVC_SEED_SAMPLES": "1",
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
    with _serving(cmd, env, port) as running:
        yield running, tokens, course


async def _drive(server: Server, request: Any, setup: Any = None) -> Load:
    """CONCURRENCY keep-alive clients, each sending ``request(client, index)`` in a loop."""
    latencies: list[float] = []
    statuses: Counter[int] = Counter()
    one = httpx.Limits(max_connections=1, max_keepalive_connections=1)
    clients = [httpx.AsyncClient(base_url=server.url, limits=one, timeout=30.0) for _ in range(CONCURRENCY)]
    state = [await setup(c, i) if setup else None for i, c in enumerate(clients)]

    async def worker(i: int, until: float, record: bool) -> None:
        while time.perf_counter() < until:
            start = time.perf_counter()
            response = await request(clients[i], state[i])
            if record:
                latencies.append(time.perf_counter() - start)
                statuses[response.status_code] += 1

    try:
        await asyncio.gather(*(worker(i, time.perf_counter() + WARMUP_S, False) for i in range(CONCURRENCY)))
        server_cpu, client_cpu = _cpu_seconds(server.pid), time.process_time()
        began = time.perf_counter()
        await asyncio.gather(*(worker(i, began + DURATION_S, True) for i in range(CONCURRENCY)))
        elapsed = time.perf_counter() - began
        server_cpu, client_cpu = _cpu_seconds(server.pid) - server_cpu, time.process_time() - client_cpu
    finally:
        await asyncio.gather(*(c.aclose() for c in clients))
    ms = np.asarray(latencies) * 1000.0
    return Load(
        len(ms),
        elapsed,
        float(np.percentile(ms, 50)),
        float(np.percentile(ms, 99)),
        dict(statuses),
        server_cpu,
        client_cpu,
    )


def _report(benchmark: Any, name: str, load: Load) -> None:
    print("\n" + load.line(name))
    benchmark.extra_info.update(
        rps=round(load.rps), p50_ms=round(load.p50_ms, 2), p99_ms=round(load.p99_ms, 2)
    )


def test_bench_guest_catalog_reads(benchmark: Any, edu_server: Any) -> None:
    server, _, _ = edu_server
    params = {"kind": "course", "sort": "popular", "limit": 20}

    async def read(client: httpx.AsyncClient, _: Any) -> httpx.Response:
        return await client.get("/education/v1/catalog", params=params)

    load = benchmark.pedantic(lambda: asyncio.run(_drive(server, read)), rounds=1, iterations=1)
    _report(benchmark, "education catalog (guest)", load)
    assert load.statuses == {200: load.requests}


def test_bench_playback_event_batches(benchmark: Any, edu_server: Any) -> None:
    server, tokens, course = edu_server

    async def open_session(client: httpx.AsyncClient, i: int) -> dict[str, Any]:
        auth = {"Authorization": f"Bearer {tokens[i]}"}
        path = f"/education/v1/products/{course}/playback-sessions"
        headers = {**auth, "Idempotency-Key": str(uuid.uuid4())}
        reply = await client.post(path, json={"lesson_id": "v1"}, headers=headers)
        assert reply.status_code == 201, reply.text
        return {"auth": auth, "id": reply.json()["session_id"], "seq": 0, "position": 0.0}

    async def batch(client: httpx.AsyncClient, s: dict[str, Any]) -> httpx.Response:
        s["seq"] += 1
        s["position"] += 1.0
        events = [
            {"type": "heartbeat", "position": s["position"]},
            {"type": "rate", "rate": 1.5},
            {"type": "pause", "position": s["position"] + 0.5},
        ]
        return await client.post(
            f"/education/v1/playback-sessions/{s['id']}/events",
            json={"seq": s["seq"], "events": events},
            headers={**s["auth"], "Idempotency-Key": str(uuid.uuid4())},
        )

    load = benchmark.pedantic(
        lambda: asyncio.run(_drive(server, batch, open_session)), rounds=1, iterations=1
    )
    _report(benchmark, "education playback event batches", load)
    assert load.statuses == {200: load.requests}
