"""The community at load (issue 15): chat send and chat read through the real service (uvicorn on
loopback, SQLite), and the fan-out of one post to 10,000 followers.

Printed: requests per second and p50/p99 of ``community_chat_send`` (each request from another of
2,000 members, so the one-message-per-second rule of an author does not throttle the load; the
status counts show it) and of the guest ``community_chat`` read; for the post, the seconds to write
the 10,000 records and outbox rows (the fan-out worker) and to write the 10,000 mails (the outbox
worker, ``.eml`` files).

Run: ``.venv/bin/python -m pytest benchmarks/test_bench_community.py --benchmark-only -s``
"""

from __future__ import annotations

import asyncio
import itertools
import os
import secrets
import sys
import time
from collections import Counter
from pathlib import Path
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
from svc_api.accounts.identity import token_hash
from svc_api.accounts.tables import accounts, sessions
from svc_api.community import service as community
from svc_api.core.clock import ManualClock
from svc_api.core.services import Services
from svc_api.core.store import Store
from svc_api.migrations import migrate
from svc_api.notifications import service as notifications
from svc_api.settings import Settings

MEMBERS = 2_000
FOLLOWERS = 10_000
T0 = 1_790_812_800


def _members(store: Store, n: int, prefix: str, now: int) -> tuple[list[str], list[str]]:
    """``n`` accounts with a session each, written straight to the store: (ids, tokens)."""
    ids = [f"{prefix}{i:05d}" for i in range(n)]
    tokens = [secrets.token_urlsafe(24) for _ in ids]
    rows = [
        {
            "svc_id": s,
            "email": f"{s.lower()}@example.com",
            "password_hash": "!",
            "password_salt": "!",
            "referral_code": f"R{s}",
            "created_at": now,
        }
        for s in ids
    ]
    grants = [
        {"token_hash": token_hash(t), "svc_id": s, "created_at": now, "expires_at": now + 86400 * 30}
        for s, t in zip(ids, tokens, strict=True)
    ]
    with store.write() as conn:
        conn.execute(accounts.insert(), rows)
        conn.execute(sessions.insert(), grants)
    return ids, tokens


@pytest.fixture(scope="module")
def chat_server(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """The service with :data:`MEMBERS` members who hold sessions."""
    var = tmp_path_factory.mktemp("svc-bench-chat")
    store = Store(f"sqlite:///{var / 'svc.db'}")
    migrate(store)
    _, tokens = _members(store, MEMBERS, "M", int(time.time()))
    store.dispose()
    port = _free_port()
    env = {
        **os.environ,
        "DATABASE_URL": f"sqlite:///{var / 'svc.db'}",
        "SVC_VAR_DIR": str(var),
        "SECRET_KEY": "bench-secret-key-0123456789abcdef",
        "RATE_LIMIT_SCALE": "100000",
        "TREND_REFRESH_SECONDS": "0",
        "SVC_SEED_SAMPLES": "0",
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
        yield running, tokens


async def _drive_many(server: Server, tokens: list[str], send: bool) -> Load:
    """CONCURRENCY keep-alive clients; each request carries the next member's session."""
    latencies: list[float] = []
    statuses: Counter[int] = Counter()
    rotation = itertools.cycle(tokens)
    one = httpx.Limits(max_connections=1, max_keepalive_connections=1)
    clients = [httpx.AsyncClient(base_url=server.url, limits=one, timeout=30.0) for _ in range(CONCURRENCY)]

    async def request(client: httpx.AsyncClient) -> httpx.Response:
        if send:
            headers = {"Authorization": f"Bearer {next(rotation)}"}
            body = {"message": "gm, levels look constructive today"}
            return await client.post(
                "/user", params={"request_type": "community_chat_send"}, json=body, headers=headers
            )
        return await client.get("/tradingdata", params={"request_type": "community_chat", "limit": 50})

    async def worker(client: httpx.AsyncClient, until: float, record: bool) -> None:
        while time.perf_counter() < until:
            start = time.perf_counter()
            response = await request(client)
            if record:
                latencies.append(time.perf_counter() - start)
                statuses[response.status_code] += 1

    try:
        await asyncio.gather(*(worker(c, time.perf_counter() + WARMUP_S, False) for c in clients))
        server_cpu, client_cpu = _cpu_seconds(server.pid), time.process_time()
        began = time.perf_counter()
        await asyncio.gather(*(worker(c, began + DURATION_S, True) for c in clients))
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
        rps=round(load.rps),
        p50_ms=round(load.p50_ms, 2),
        p99_ms=round(load.p99_ms, 2),
        statuses={str(k): v for k, v in load.statuses.items()},
    )


def test_bench_chat_send(benchmark: Any, chat_server: Any) -> None:
    server, tokens = chat_server
    load = benchmark.pedantic(lambda: asyncio.run(_drive_many(server, tokens, True)), rounds=1, iterations=1)
    _report(benchmark, "community_chat_send", load)
    assert load.statuses.get(200, 0) > 0


def test_bench_chat_read(benchmark: Any, chat_server: Any) -> None:
    server, tokens = chat_server
    load = benchmark.pedantic(lambda: asyncio.run(_drive_many(server, tokens, False)), rounds=1, iterations=1)
    _report(benchmark, "community_chat read (50 messages)", load)
    assert load.statuses.get(200, 0) > 0


def test_bench_post_fanout_to_10000_followers(benchmark: Any, tmp_path: Path) -> None:
    settings = Settings(
        database_url=f"sqlite:///{tmp_path / 'svc.db'}",
        secret_key=b"k" * 32,
        var_dir=tmp_path,
        notify_poll_seconds=0,
        seed_samples=0,
    )
    services = Services(settings, migrate=migrate, clock=ManualClock(T0))
    services.open()
    store = services.store
    (leader_id,), _ = _members(store, 1, "L", T0)
    followers, _ = _members(store, FOLLOWERS, "F", T0)
    community.apply(
        store, leader_id, display_name="Bench Desk", reason="r", experience="e", socials={}, now=T0
    )
    community.decide(store, leader_id, True, now=T0)
    community.add_followers(store, leader_id, followers, now=T0)
    community.create(store, leader_id, "Levels to watch", title="Weekly", now=T0)
    transports = notifications.transports_for(settings)
    notifications.deliver_due(store, transports, now=T0)  # the leader's approval mail, before the clock runs
    timings: dict[str, float] = {}

    def fan_out() -> None:
        began = time.perf_counter()
        reached = notifications.run_fanouts(store, now=T0)
        timings["fanout"] = time.perf_counter() - began
        began = time.perf_counter()
        sent = 0
        while (done := notifications.deliver_due(store, transports, now=T0, limit=2000)["sent"]) > 0:
            sent += done
        timings["mail"] = time.perf_counter() - began
        assert (reached, sent) == (FOLLOWERS, FOLLOWERS)

    benchmark.pedantic(fan_out, rounds=1, iterations=1)
    services.close()
    fanout, mail = timings["fanout"], timings["mail"]
    print(
        f"\npost to {FOLLOWERS} followers: fan-out (records + outbox rows) {fanout:.2f} s "
        f"= {FOLLOWERS / fanout:,.0f} followers/s; mail delivery (.eml files) {mail:.2f} s "
        f"= {FOLLOWERS / mail:,.0f} mails/s"
    )
    benchmark.extra_info.update(fanout_s=round(timings["fanout"], 3), mail_s=round(timings["mail"], 3))
