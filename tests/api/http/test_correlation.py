"""X-Correlation-ID echo/generation, Access-Control-Expose-Headers and CORS."""

from __future__ import annotations

import logging
import re

import pytest
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from svc_api.core.correlation import (
    CorrelationIdFilter,
    CorrelationIdMiddleware,
    correlation_id_from,
    current_correlation_id,
)
from svc_api.core.cors import cors_middleware
from svc_api.core.envelope import ErrorEnvelopeMiddleware
from svc_api.core.errors import EXCEPTION_HANDLERS

pytestmark = pytest.mark.anyio
GENERATED = re.compile(r"svc-[0-9a-f]{32}")
EXPOSED = [
    "X-Correlation-ID",
    "X-RateLimit-Limit",
    "X-RateLimit-Remaining",
    "X-RateLimit-Reset",
    "Retry-After",
    "ETag",
]


async def whoami(request: Request) -> JSONResponse:
    return JSONResponse({"correlation_id": request.state.correlation_id})


def log_in_thread(request: Request) -> JSONResponse:
    # A sync endpoint: Starlette runs it in the thread pool.
    logging.getLogger("tests.correlation").warning("handled")
    return JSONResponse({"seen": current_correlation_id()})


ROUTES = [Route("/whoami", whoami), Route("/log", log_in_thread)]


@pytest.mark.parametrize("value", ["abcdefgh", "a" * 128, "A1._:-zz", "0123-4567-89ab:retry.2"])
async def test_valid_ids_are_echoed_and_visible_to_handlers(build_app, connect, value):
    async with connect(build_app(ROUTES, auth=False)) as client:
        r = await client.get("/whoami", headers={"X-Correlation-ID": value})
    assert r.headers["x-correlation-id"] == value
    assert r.json() == {"correlation_id": value}


@pytest.mark.parametrize(
    "value", ["", "abcdefg", "a" * 129, "has space1", "semi;colon1", "slash/1234", "ünicode-id"]
)
async def test_invalid_ids_are_replaced(build_app, connect, value):
    async with connect(build_app(ROUTES, auth=False)) as client:
        r = await client.get("/whoami", headers={"X-Correlation-ID": value.encode("utf-8")})
    cid = r.headers["x-correlation-id"]
    assert GENERATED.fullmatch(cid)
    assert r.json() == {"correlation_id": cid}


async def test_missing_id_gets_fresh_value_per_request(build_app, connect):
    async with connect(build_app(ROUTES, auth=False)) as client:
        a = (await client.get("/whoami")).headers["x-correlation-id"]
        b = (await client.get("/whoami")).headers["x-correlation-id"]
    assert GENERATED.fullmatch(a) and GENERATED.fullmatch(b) and a != b


async def test_expose_headers_on_every_response_including_404(build_app, connect):
    async with connect(build_app(ROUTES, auth=False)) as client:
        for path in ("/whoami", "/missing"):
            r = await client.get(path)
            assert r.headers["access-control-expose-headers"].split(", ") == EXPOSED


def cors_app(origins: list[str]) -> Starlette:
    return Starlette(
        routes=ROUTES,
        middleware=[
            Middleware(CorrelationIdMiddleware),
            Middleware(ErrorEnvelopeMiddleware),
            cors_middleware(origins),
        ],
        exception_handlers=EXCEPTION_HANDLERS,
    )


async def test_cors_allowed_origin_simple_request_lists_each_exposed_header_once(connect):
    async with connect(cors_app(["https://app.example.com"])) as client:
        r = await client.get("/whoami", headers={"Origin": "https://app.example.com"})
    assert r.headers["access-control-allow-origin"] == "https://app.example.com"
    exposed = [h.strip().lower() for h in r.headers["access-control-expose-headers"].split(",")]
    assert sorted(exposed) == sorted(h.lower() for h in EXPOSED)


async def test_cors_preflight_allows_credential_headers(connect):
    async with connect(cors_app(["https://app.example.com"])) as client:
        r = await client.options(
            "/whoami",
            headers={
                "Origin": "https://app.example.com",
                "Access-Control-Request-Method": "POST",
                "Access-Control-Request-Headers": "x-api-key, x-api-secret, content-type",
            },
        )
    assert r.status_code == 200
    assert r.headers["access-control-allow-origin"] == "https://app.example.com"
    assert "X-API-Secret" in r.headers["access-control-allow-headers"]
    assert GENERATED.fullmatch(r.headers["x-correlation-id"])


async def test_cors_disallowed_origin_gets_no_allow_origin(connect):
    async with connect(cors_app(["https://app.example.com"])) as client:
        pre = await client.options(
            "/whoami", headers={"Origin": "https://evil.example", "Access-Control-Request-Method": "GET"}
        )
        simple = await client.get("/whoami", headers={"Origin": "https://evil.example"})
    assert pre.status_code == 400
    assert "access-control-allow-origin" not in simple.headers


def test_correlation_id_from_accepts_exact_bounds():
    assert correlation_id_from("x" * 8) == "x" * 8
    assert correlation_id_from("x" * 128) == "x" * 128
    assert GENERATED.fullmatch(correlation_id_from("x" * 7))


async def test_log_records_of_thread_pool_handlers_carry_the_id(build_app, connect, caplog):
    caplog.set_level(logging.WARNING, logger="tests.correlation")
    caplog.handler.addFilter(CorrelationIdFilter())
    async with connect(build_app(ROUTES, auth=False)) as client:
        r = await client.get("/log", headers={"X-Correlation-ID": "thread-pool-id-1"})
        other = await client.get("/log")
    assert r.json() == {"seen": "thread-pool-id-1"}
    assert other.json() == {"seen": other.headers["x-correlation-id"]}
    ids = [rec.correlation_id for rec in caplog.records if rec.name == "tests.correlation"]
    assert ids == ["thread-pool-id-1", other.headers["x-correlation-id"]]
    assert current_correlation_id() == "-"  # reset once the request is done
