"""Rate limits in Redis across real servers: two ``svc serve --workers 2`` processes (four workers)
sharing one Redis share one limit, and a Redis that cannot be reached gives 503 with a reason on
limited routes, never unlimited access."""

from __future__ import annotations

import uuid
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import redis

from tests.api.journey_helpers import Server, server_env

REDIS_URL = "redis://127.0.0.1:6379/0"


def _redis_up() -> bool:
    try:
        return bool(redis.Redis.from_url(REDIS_URL, socket_connect_timeout=0.5).ping())
    except redis.RedisError:
        return False


pytestmark = [
    pytest.mark.redis,
    pytest.mark.slow,
    pytest.mark.skipif(not _redis_up(), reason="Redis is not reachable at 127.0.0.1:6379"),
]


def _env(tmp_path: Path, redis_url: str, prefix: str) -> dict[str, str]:
    env = server_env(f"sqlite:///{tmp_path / 'svc.db'}", tmp_path / "data", tmp_path / "var")
    return env | {
        "REDIS_URL": redis_url,
        "RATE_LIMIT_PREFIX": prefix,
        "RATE_LIMIT_SCALE": "1",
        "RATE_LIMIT_GUEST": "12",
        "TREND_REFRESH_SECONDS": "0",
        "SVC_GENERATION_THREADS": "0",
    }


@pytest.fixture
def prefix() -> Iterator[str]:
    name = f"svc-test-{uuid.uuid4().hex[:8]}"
    yield name
    client = redis.Redis.from_url(REDIS_URL)
    for key in client.scan_iter(f"{name}*"):
        client.delete(key)


def test_two_servers_of_two_workers_share_one_limit(tmp_path: Path, prefix: str) -> None:
    env = _env(tmp_path, REDIS_URL, prefix)
    servers = []
    try:
        for i in range(2):
            server = Server(env, tmp_path / f"server{i}.log", via_svc=True, extra_args=("--workers", "2"))
            servers.append(server.start())
        statuses: Counter[int] = Counter()
        clients = [httpx.Client(base_url=s.url, timeout=10) for s in servers]
        for n in range(40):
            statuses[clients[n % 2].get("/").status_code] += 1
        for client in clients:
            client.close()
    finally:
        for server in servers:
            server.stop()
    # /health of each start-up is counted too (guests by IP, one window): 12 in all, however spread.
    assert statuses[200] + statuses[429] == 40
    assert 1 <= statuses[200] <= 12 and statuses[429] >= 28


def test_unreachable_redis_is_503_with_a_reason(tmp_path: Path, prefix: str) -> None:
    env = _env(tmp_path, "redis://127.0.0.1:1/0", prefix)
    server = Server(env, tmp_path / "server.log", via_svc=True, ready=(503,))  # /health is limited too
    try:
        server.start()
        reply = httpx.get(f"{server.url}/", timeout=10)
        assert reply.status_code == 503
        assert reply.json()["reason"] == "temporarily_unavailable"
        assert int(reply.headers["retry-after"]) > 0
    finally:
        server.stop()
