"""Rate limits through HTTP: plan limits, first-party 2x, guests by IP, headers, 429, Redis, fail closed."""

from __future__ import annotations

import asyncio
import math
import time
import uuid

import limits
import pytest
import redis
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from svc_api.core.clock import ManualClock
from svc_api.core.errors import ApiError
from svc_api.core.ratecounters import MemoryCounter as _MemoryCounter
from svc_api.core.ratelimit import RateLimitMiddleware, RateLimitPolicy

pytestmark = pytest.mark.anyio
REDIS_URL = "redis://127.0.0.1:6379/0"
calls = {"n": 0}


async def ok(request: Request) -> JSONResponse:
    calls["n"] += 1
    return JSONResponse({"ok": True})


async def refuse(request: Request) -> JSONResponse:
    raise ApiError(402, "insufficient_credits", code="insufficient_credits")


async def crash(request: Request) -> JSONResponse:
    raise RuntimeError("bug")


ROUTES = [Route("/ok", ok), Route("/refuse", refuse), Route("/crash", crash)]


def account(svc_id: str, plan: str, *, first_party: bool = False) -> dict[str, str]:
    return {"X-Test-Svc-Id": svc_id, "X-Test-Plan": plan, "X-Test-First-Party": "1" if first_party else "0"}


async def burn(client, n: int, headers: dict[str, str] | None = None) -> list:
    return [await client.get("/ok", headers=headers or {}) for _ in range(n)]


async def test_free_plan_allows_30_then_429_with_headers(build_app, connect):
    app = build_app(ROUTES, ratelimit={})
    async with connect(app) as client:
        before = time.time()
        responses = await burn(client, 31, account("FREE01", "free"))
    assert [r.status_code for r in responses] == [200] * 30 + [429]
    assert [int(r.headers["x-ratelimit-remaining"]) for r in responses] == [*range(29, -1, -1), 0]
    assert {r.headers["x-ratelimit-limit"] for r in responses} == {"30"}
    reset = int(responses[0].headers["x-ratelimit-reset"])
    assert math.ceil(before + 60) <= reset <= math.ceil(time.time() + 60)
    last = responses[-1]
    body = last.json()
    assert body["error"] == "too_many_requests" and body["reason"] == "rate_limit_exceeded"
    assert 1 <= body["retry_after"] <= 60
    assert last.headers["retry-after"] == str(body["retry_after"])
    assert last.headers["x-ratelimit-reset"] == str(reset)
    assert last.headers["x-correlation-id"].startswith("svc-")


@pytest.mark.parametrize(
    ("plan", "first_party", "limit"),
    [
        ("free", False, 30),
        ("starter", False, 30),
        ("plus", False, 60),
        ("pro", False, 120),
        ("investor", False, 240),
        ("free", True, 60),
        ("pro", True, 240),
        ("investor", True, 480),
        ("mystery", False, 30),
    ],
)
async def test_limit_header_by_plan_and_first_party(build_app, connect, plan, first_party, limit):
    async with connect(build_app(ROUTES, ratelimit={})) as client:
        r = await client.get("/ok", headers=account("PLAN01", plan, first_party=first_party))
    assert r.headers["x-ratelimit-limit"] == str(limit)
    assert r.headers["x-ratelimit-remaining"] == str(limit - 1)


async def test_first_party_session_gets_twice_the_requests(build_app, connect):
    async with connect(build_app(ROUTES, ratelimit={})) as client:
        responses = await burn(client, 61, account("APPU01", "free", first_party=True))
    assert [r.status_code for r in responses] == [200] * 60 + [429]


async def test_guests_limited_by_ip_at_20(build_app, connect):
    app = build_app(ROUTES, ratelimit={})
    async with connect(app, ip="192.0.2.1") as first, connect(app, ip="192.0.2.2") as second:
        a = await burn(first, 21)
        b = await burn(second, 1)
    assert [r.status_code for r in a] == [200] * 20 + [429]
    assert a[0].headers["x-ratelimit-limit"] == "20"
    assert (b[0].status_code, b[0].headers["x-ratelimit-remaining"]) == (200, "19")


async def test_no_principal_at_all_is_a_guest_by_client_ip(build_app, connect):
    app = build_app(ROUTES, ratelimit={}, auth=False)
    async with connect(app, ip="198.51.100.7") as client:
        r = await client.get("/ok")
    assert (r.headers["x-ratelimit-limit"], r.headers["x-ratelimit-remaining"]) == ("20", "19")


async def test_accounts_do_not_share_counters(build_app, connect):
    async with connect(build_app(ROUTES, ratelimit={})) as client:
        await burn(client, 30, account("AAAAA1", "free"))
        blocked = await client.get("/ok", headers=account("AAAAA1", "free"))
        other = await client.get("/ok", headers=account("BBBBB2", "free"))
    assert (blocked.status_code, other.status_code) == (429, 200)


async def test_rejected_requests_do_not_reach_the_app(build_app, connect):
    async with connect(build_app(ROUTES, ratelimit={"policy": RateLimitPolicy(guest_limit=2)})) as client:
        calls["n"] = 0
        statuses = [r.status_code for r in await burn(client, 5)]
    assert statuses == [200, 200, 429, 429, 429]
    assert calls["n"] == 2


async def test_headers_also_on_handler_errors_and_500s(build_app, connect, caplog):
    caplog.set_level("CRITICAL", logger="svc_api.http")
    async with connect(build_app(ROUTES, ratelimit={})) as client:
        refused = await client.get("/refuse")
        crashed = await client.get("/crash")
        missing = await client.get("/missing")
    assert (refused.status_code, refused.headers["x-ratelimit-remaining"]) == (402, "19")
    assert (crashed.status_code, crashed.headers["x-ratelimit-remaining"]) == (500, "18")
    assert (missing.status_code, missing.headers["x-ratelimit-remaining"]) == (404, "17")


async def test_moving_window_frees_capacity_after_the_window(build_app, connect):
    policy, clock = RateLimitPolicy(guest_limit=2, window_seconds=1), ManualClock(1_700_000_000)
    async with connect(build_app(ROUTES, ratelimit={"policy": policy, "clock": clock})) as client:
        first = [r.status_code for r in await burn(client, 3)]
        clock.advance(1)
        later = await client.get("/ok")
    assert first == [200, 200, 429]
    assert (later.status_code, later.headers["x-ratelimit-remaining"]) == (200, "1")


async def test_scale_multiplies_limits(build_app, connect):
    policy = RateLimitPolicy.from_env({"RATE_LIMIT_SCALE": "10", "RATE_LIMIT_GUEST": "3"})
    async with connect(build_app(ROUTES, ratelimit={"policy": policy})) as client:
        guest = await client.get("/ok")
        pro = await client.get("/ok", headers=account("PRO001", "pro"))
    assert (guest.headers["x-ratelimit-limit"], pro.headers["x-ratelimit-limit"]) == ("30", "1200")


async def test_memory_counters_forget_idle_callers():
    clock = ManualClock(1_700_000_000)
    counter = _MemoryCounter(clock)
    item = limits.RateLimitItemPerSecond(3, 1)
    for i in range(50):
        await counter.hit(item, "ip", f"10.0.{i}.1")
    assert len(counter._hits) == 50
    clock.advance(1)
    counter._SWEEP_EVERY = 5
    results = [await counter.hit(item, "ip", "10.9.9.9") for _ in range(4)]
    assert [allowed for allowed, _ in results] == [True, True, True, False]
    allowed, stats = await counter.hit(item, "ip", "10.9.9.9")  # 5th call: the sweep runs
    assert (allowed, stats.remaining) == (False, 0)
    assert list(counter._hits) == ["3/1/ip/10.9.9.9"]


def test_bad_configuration_is_refused():
    with pytest.raises(ValueError, match="RATE_LIMIT_SCALE"):
        RateLimitPolicy.from_env({"RATE_LIMIT_SCALE": "lots"})
    with pytest.raises(ValueError, match="positive"):
        RateLimitPolicy(scale=0)
    with pytest.raises(ValueError, match="unsupported rate-limit storage"):
        RateLimitMiddleware(ok, storage_url="memcached://x")


# --- Redis --------------------------------------------------------------------------------------------


def _redis_up() -> bool:
    try:
        return bool(redis.Redis.from_url(REDIS_URL, socket_connect_timeout=0.5).ping())
    except redis.RedisError:
        return False


needs_redis = pytest.mark.skipif(not _redis_up(), reason="Redis is not reachable at 127.0.0.1:6379")


@pytest.fixture
def prefix():
    """A fresh key namespace per test; its keys are deleted afterwards."""
    name = f"svc-test-{uuid.uuid4().hex}"
    yield name
    if _redis_up():
        client = redis.Redis.from_url(REDIS_URL)
        for key in client.scan_iter(f"{name}*"):
            client.delete(key)
        client.close()


@pytest.mark.redis
@needs_redis
async def test_redis_backend_enforces_the_limit(build_app, connect, prefix):
    app = build_app(ROUTES, ratelimit={"storage_url": REDIS_URL, "key_prefix": prefix})
    async with connect(app) as client:
        responses = await burn(client, 31, account("REDIS1", "free"))
    assert [r.status_code for r in responses] == [200] * 30 + [429]
    assert [r.headers["x-ratelimit-remaining"] for r in responses[:3]] == ["29", "28", "27"]
    assert responses[-1].json()["reason"] == "rate_limit_exceeded"
    keys = redis.Redis.from_url(REDIS_URL).keys(f"{prefix}*")
    assert len(keys) == 1 and b"REDIS1" in keys[0]


@pytest.mark.redis
@needs_redis
async def test_two_instances_sharing_redis_share_the_limit(build_app, connect, prefix):
    settings = {"storage_url": REDIS_URL, "key_prefix": prefix, "policy": RateLimitPolicy(guest_limit=10)}
    one, two = build_app(ROUTES, ratelimit=settings), build_app(ROUTES, ratelimit=settings)
    async with connect(one, ip="203.0.113.9") as a, connect(two, ip="203.0.113.9") as b:
        statuses = []
        for i in range(12):
            r = await (a if i % 2 == 0 else b).get("/ok")
            statuses.append(r.status_code)
        remaining = r.headers["x-ratelimit-remaining"]
    assert statuses == [200] * 10 + [429, 429]
    assert remaining == "0"


@pytest.mark.redis
@needs_redis
async def test_concurrent_requests_never_exceed_the_limit(build_app, connect, prefix):
    settings = {"storage_url": REDIS_URL, "key_prefix": prefix}
    apps = [build_app(ROUTES, ratelimit=settings) for _ in range(3)]
    async with connect(apps[0]) as a, connect(apps[1]) as b, connect(apps[2]) as c:
        clients = [a, b, c]
        results = await asyncio.gather(
            *(clients[i % 3].get("/ok", headers=account("RACE01", "free")) for i in range(45))
        )
    assert sorted(r.status_code for r in results) == [200] * 30 + [429] * 15


async def test_unreachable_redis_fails_closed_with_503(build_app, connect, caplog):
    caplog.set_level("CRITICAL", logger="svc_api.http")
    app = build_app(ROUTES, ratelimit={"storage_url": "redis://127.0.0.1:1/0", "timeout": 0.5})
    async with connect(app) as client:
        calls["n"] = 0
        started = time.monotonic()
        r = await client.get("/ok", headers=account("DOWN01", "pro"))
        elapsed = time.monotonic() - started
    assert r.status_code == 503
    assert r.json() == {"error": "service_unavailable", "reason": "temporarily_unavailable", "retry_after": 5}
    assert r.headers["retry-after"] == "5"
    assert (r.headers["x-ratelimit-limit"], r.headers["x-ratelimit-remaining"]) == ("120", "0")
    assert int(r.headers["x-ratelimit-reset"]) >= int(time.time()) + 4
    assert r.headers["x-correlation-id"].startswith("svc-")
    assert calls["n"] == 0
    assert elapsed < 5


class FlakyRedis:
    """A loopback TCP proxy to the real Redis that can be taken down (connections cut, port closed)
    and brought back on the same port."""

    def __init__(self) -> None:
        self.port = 0
        self.server: asyncio.Server | None = None
        self.writers: set[asyncio.StreamWriter] = set()
        self.tasks: set[asyncio.Task[None]] = set()

    async def up(self) -> None:
        self.server = await asyncio.start_server(self._serve, "127.0.0.1", self.port)
        self.port = self.server.sockets[0].getsockname()[1]

    async def down(self) -> None:
        assert self.server is not None
        self.server.close()
        for writer in list(self.writers):
            writer.transport.abort()
        await asyncio.gather(*self.tasks, return_exceptions=True)
        await self.server.wait_closed()

    async def _serve(self, client_r: asyncio.StreamReader, client_w: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self.tasks.add(task)
        redis_r, redis_w = await asyncio.open_connection("127.0.0.1", 6379)
        self.writers |= {client_w, redis_w}

        async def pipe(src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
            try:
                while data := await src.read(65536):
                    dst.write(data)
                    await dst.drain()
            except (ConnectionError, OSError):
                pass
            finally:
                dst.transport.abort()

        await asyncio.gather(pipe(client_r, redis_w), pipe(redis_r, client_w))
        self.writers -= {client_w, redis_w}
        self.tasks.discard(task)


@pytest.mark.redis
@needs_redis
async def test_redis_outage_fails_closed_then_recovers(build_app, connect, prefix, caplog):
    caplog.set_level("CRITICAL", logger="svc_api.http")
    proxy = FlakyRedis()
    await proxy.up()
    url = f"redis://127.0.0.1:{proxy.port}/0"
    app = build_app(ROUTES, ratelimit={"storage_url": url, "key_prefix": prefix, "timeout": 0.5})
    async with connect(app) as client:
        calls["n"] = 0
        before = [(await client.get("/ok")).status_code for _ in range(3)]
        await proxy.down()
        during = [await client.get("/ok") for _ in range(3)]
        reached_app = calls["n"]
        await proxy.up()
        after = await client.get("/ok")
    await proxy.down()
    assert before == [200, 200, 200]
    assert [r.status_code for r in during] == [503, 503, 503]
    assert {r.json()["reason"] for r in during} == {"temporarily_unavailable"}
    assert reached_app == 3  # nothing reached the app while the counters were unreachable
    # Back up: the counter kept its state across the outage (3 counted before, this is the 4th).
    assert (after.status_code, after.headers["x-ratelimit-remaining"]) == (200, "16")


@pytest.mark.redis
@needs_redis
async def test_aclose_releases_the_redis_client_of_the_loop(prefix):
    async def ok_app(scope, receive, send):
        await JSONResponse({"ok": True})(scope, receive, send)

    middleware = RateLimitMiddleware(ok_app, storage_url=REDIS_URL, key_prefix=prefix)
    scope = {"type": "http", "method": "GET", "path": "/", "headers": [], "client": ("10.7.7.7", 1)}
    sent: list[dict] = []

    async def receive() -> dict:
        return {"type": "http.request", "body": b""}

    async def send(message: dict) -> None:
        sent.append(message)

    await middleware(scope, receive, send)
    counter = middleware._counter
    assert sent[0]["status"] == 200 and len(counter._by_loop) == 1
    await middleware.aclose()
    assert len(counter._by_loop) == 0
    await middleware.aclose()  # idempotent
    await middleware(scope, receive, send)  # a later request opens a fresh client
    assert sent[2]["status"] == 200 and len(counter._by_loop) == 1
    await middleware.aclose()
