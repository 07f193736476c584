"""The HTTP rules through the real app (`create_app`): limits by credential, headers on every reply,
failed authentication counted per IP, Redis shared and Redis down."""

from __future__ import annotations

import re
import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest
import redis

from svc_api.app import create_app
from svc_api.settings import Settings

pytestmark = pytest.mark.anyio
REDIS_URL = "redis://127.0.0.1:6379/0"
HEADERS = ("x-correlation-id", "x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-reset")


def _redis_up() -> bool:
    try:
        return bool(redis.Redis.from_url(REDIS_URL, socket_connect_timeout=0.5).ping())
    except redis.RedisError:
        return False


@pytest.fixture
def make(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.delenv("RATE_LIMIT_SCALE", raising=False)
    monkeypatch.delenv("RATE_LIMIT_GUEST", raising=False)
    monkeypatch.setenv("TREND_REFRESH_SECONDS", "0")

    def build(redis_url: str | None = None, db: str = "svc.db") -> Any:
        settings = Settings(
            database_url=f"sqlite:///{tmp_path / db}",
            secret_key=b"k" * 32,
            var_dir=tmp_path,
            redis_url=redis_url,
        )
        return create_app(settings)

    return build


def client(app: Any, ip: str = "10.1.1.1") -> httpx.AsyncClient:
    transport = httpx.ASGITransport(app=app, client=(ip, 5000))
    return httpx.AsyncClient(transport=transport, base_url="http://testserver")


async def user(c: httpx.AsyncClient, request_type: str, body: Any = None, **headers: str) -> httpx.Response:
    return await c.post("/user", params={"request_type": request_type}, json=body or {}, headers=headers)


async def account(c: httpx.AsyncClient) -> tuple[dict[str, str], dict[str, str]]:
    """(session headers, API key headers) of a fresh free account."""
    email = f"{uuid.uuid4().hex[:10]}@example.com"
    grant = (await user(c, "register", {"email": email, "password": "long enough pw"})).json()["data"]
    session = {"Authorization": f"Bearer {grant['session_token']}"}
    key = (await user(c, "api_key_generate", {"label": "t"}, **session)).json()["data"]
    return session, {"X-API-Key": key["api_key"], "X-API-Secret": key["api_secret"]}


async def test_limits_by_credential_kind(make):
    async with client(make()) as c:
        session, key = await account(c)
        guest = await c.get("/tradingdata", params={"request_type": "changelog"})
        by_key = await user(c, "account_info", **key)
        by_session = await user(c, "account_info", **session)
    assert guest.headers["x-ratelimit-limit"] == "20"
    assert (by_key.status_code, by_key.headers["x-ratelimit-limit"]) == (200, "30")
    assert (by_session.status_code, by_session.headers["x-ratelimit-limit"]) == (200, "60")


async def test_every_kind_of_reply_carries_the_headers(make, caplog):
    caplog.set_level("CRITICAL")
    async with client(make()) as c:
        replies = {
            200: await c.get("/"),
            401: await user(c, "account_info", **{"X-API-Key": "svk_" + "0" * 32, "X-API-Secret": "nope"}),
            404: await c.get("/no/such/path"),
            405: await user(c, "track_signal"),
        }
    for status, reply in replies.items():
        assert reply.status_code == status
        for name in HEADERS:
            assert name in reply.headers, (status, name)
        assert "X-RateLimit-Reset" in reply.headers["access-control-expose-headers"]


async def test_guest_ip_limit_and_429_shape(make):
    async with client(make(), ip="10.2.2.2") as c:
        replies = [await c.get("/") for _ in range(21)]
    assert [r.status_code for r in replies] == [200] * 20 + [429]
    last = replies[-1]
    assert last.json()["reason"] == "rate_limit_exceeded" and last.json()["retry_after"] >= 1
    assert last.headers["retry-after"] == str(last.json()["retry_after"])
    assert last.headers["x-ratelimit-remaining"] == "0"
    assert re.fullmatch(r"svc-[0-9a-f]{32}", last.headers["x-correlation-id"])


async def test_failed_authentication_counts_against_the_ip(make):
    bad = {"X-API-Key": "svk_" + "1" * 32, "X-API-Secret": "wrong"}
    async with client(make(), ip="10.3.3.3") as c:
        replies = [await user(c, "account_info", **bad) for _ in range(21)]
    assert [r.status_code for r in replies] == [401] * 20 + [429]
    assert replies[0].json()["code"] == "invalid_credentials"
    assert [r.headers["x-ratelimit-remaining"] for r in replies[:3]] == ["19", "18", "17"]


@pytest.mark.redis
@pytest.mark.skipif(not _redis_up(), reason="Redis is not reachable at 127.0.0.1:6379")
async def test_two_apps_on_one_redis_share_the_guest_limit(make):
    ip = f"10.{uuid.uuid4().int % 250}.{uuid.uuid4().int % 250}.9"  # fresh key space per run
    one, two = make(REDIS_URL, "a.db"), make(REDIS_URL, "b.db")
    async with client(one, ip) as a, client(two, ip) as b:
        statuses = [(await (a if i % 2 else b).get("/")).status_code for i in range(21)]
    assert statuses == [200] * 20 + [429]
    leftovers = redis.Redis.from_url(REDIS_URL)
    for key in leftovers.scan_iter(f"*{ip}*"):
        leftovers.delete(key)


async def test_redis_down_refuses_everything_with_503(make, caplog):
    caplog.set_level("CRITICAL")
    async with client(make("redis://127.0.0.1:1/0")) as c:
        replies = [await c.get("/"), await user(c, "login", {"email": "a@b.co", "password": "x" * 10})]
    for reply in replies:
        assert reply.status_code == 503
        assert reply.json() == {
            "error": "service_unavailable",
            "reason": "temporarily_unavailable",
            "retry_after": 5,
        }
        assert reply.headers["retry-after"] == "5"
        assert reply.headers["x-ratelimit-remaining"] == "0"


async def test_cors_from_settings(tmp_path, monkeypatch):
    monkeypatch.delenv("RATE_LIMIT_SCALE", raising=False)
    settings = Settings(
        database_url=f"sqlite:///{tmp_path / 'cors.db'}",
        secret_key=b"k" * 32,
        var_dir=tmp_path,
        cors_origins=("https://app.example.com",),
    )
    async with client(create_app(settings)) as c:
        preflight = await c.options(
            "/user",
            headers={
                "Origin": "https://app.example.com",
                "Access-Control-Request-Method": "POST",
                "Access-Control-Request-Headers": "authorization, content-type, x-correlation-id",
            },
        )
        simple = await c.get("/", headers={"Origin": "https://app.example.com"})
        foreign = await c.get("/", headers={"Origin": "https://elsewhere.example"})
    assert preflight.status_code == 200
    assert preflight.headers["access-control-allow-origin"] == "https://app.example.com"
    assert simple.headers["access-control-allow-origin"] == "https://app.example.com"
    exposed = [h.strip() for h in simple.headers["access-control-expose-headers"].split(",")]
    assert sorted(exposed) == sorted(
        [
            "X-Correlation-ID",
            "X-RateLimit-Limit",
            "X-RateLimit-Remaining",
            "X-RateLimit-Reset",
            "Retry-After",
            "ETag",
        ]
    )
    assert "access-control-allow-origin" not in foreign.headers
