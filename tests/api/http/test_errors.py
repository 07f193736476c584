"""The error envelope through HTTP: ApiError, 404/405, 500 without detail, sticky headers."""

from __future__ import annotations

import logging
import re

import pytest
from starlette.requests import Request
from starlette.responses import JSONResponse, StreamingResponse
from starlette.routing import Route

from svc_api.core.envelope import ErrorEnvelopeMiddleware
from svc_api.core.errors import STICKY_HEADERS, ApiError

pytestmark = pytest.mark.anyio
SVC_ID = re.compile(r"svc-[0-9a-f]{32}")


async def insufficient(request: Request) -> JSONResponse:
    raise ApiError(402, "insufficient_credits", code="insufficient_credits", extra={"needed": 3})


async def busy(request: Request) -> JSONResponse:
    raise ApiError(
        429,
        "too_many_requests",
        reason="backtest_concurrency_limit",
        retry_after=7.2,
        extra={"current_running": 2, "max_concurrent": 2},
    )


async def boom(request: Request) -> JSONResponse:
    raise RuntimeError("password=hunter2 in /srv/secret.py")


async def boom_with_sticky(request: Request) -> JSONResponse:
    request.state.sticky_headers = {"X-RateLimit-Limit": "30", "X-RateLimit-Remaining": "4"}
    raise KeyError("detail")


async def broken_stream(request: Request) -> StreamingResponse:
    async def chunks():
        yield b"partial"
        raise RuntimeError("mid-stream")

    return StreamingResponse(chunks())


async def ok(request: Request) -> JSONResponse:
    return JSONResponse({"ok": True})


ROUTES = [
    Route("/insufficient", insufficient),
    Route("/busy", busy),
    Route("/boom", boom),
    Route("/sticky", boom_with_sticky),
    Route("/stream", broken_stream),
    Route("/ok", ok, methods=["GET"]),
]


async def test_api_error_renders_envelope_with_extra(build_app, connect):
    async with connect(build_app(ROUTES, auth=False)) as client:
        r = await client.get("/insufficient")
    assert r.status_code == 402
    assert r.json() == {"error": "insufficient_credits", "code": "insufficient_credits", "needed": 3}
    assert r.headers["content-type"] == "application/json"
    assert "retry-after" not in r.headers


async def test_retry_after_rounds_up_into_body_and_header(build_app, connect):
    async with connect(build_app(ROUTES, auth=False)) as client:
        r = await client.get("/busy")
    assert r.status_code == 429
    assert r.json() == {
        "error": "too_many_requests",
        "reason": "backtest_concurrency_limit",
        "retry_after": 8,
        "current_running": 2,
        "max_concurrent": 2,
    }
    assert r.headers["retry-after"] == "8"


async def test_unknown_path_is_404_envelope(build_app, connect):
    async with connect(build_app(ROUTES, auth=False)) as client:
        r = await client.get("/nope", headers={"X-Correlation-ID": "trace-404-abc"})
    assert (r.status_code, r.json()) == (404, {"error": "not_found"})
    assert r.headers["x-correlation-id"] == "trace-404-abc"


async def test_wrong_method_is_405_envelope_with_allow(build_app, connect):
    async with connect(build_app(ROUTES, auth=False)) as client:
        r = await client.post("/ok")
    assert (r.status_code, r.json()) == (405, {"error": "method_not_allowed"})
    assert set(r.headers["allow"].split(", ")) == {"GET", "HEAD"}


async def test_unhandled_exception_is_bare_500_logged_with_correlation(build_app, connect, caplog):
    caplog.set_level(logging.ERROR, logger="svc_api.http")
    async with connect(build_app(ROUTES, auth=False)) as client:
        r = await client.get("/boom", headers={"X-Correlation-ID": "corr-500-xyz"})
    assert r.status_code == 500
    assert r.json() == {"error": "internal_error"}
    assert "hunter2" not in r.text and "secret" not in r.text
    assert r.headers["x-correlation-id"] == "corr-500-xyz"
    [record] = [rec for rec in caplog.records if rec.name == "svc_api.http"]
    assert "corr-500-xyz" in record.getMessage()
    assert "RuntimeError" in record.getMessage()
    assert record.exc_info is not None and "hunter2" in str(record.exc_info[1])


async def test_generated_correlation_id_on_500(build_app, connect, caplog):
    caplog.set_level(logging.CRITICAL, logger="svc_api.http")
    async with connect(build_app(ROUTES, auth=False)) as client:
        r = await client.get("/boom")
    assert r.status_code == 500
    assert SVC_ID.fullmatch(r.headers["x-correlation-id"])


async def test_500_keeps_sticky_rate_limit_headers(build_app, connect, caplog):
    caplog.set_level(logging.CRITICAL, logger="svc_api.http")
    async with connect(build_app(ROUTES, auth=False)) as client:
        r = await client.get("/sticky")
    assert r.status_code == 500
    assert r.headers["x-ratelimit-limit"] == "30"
    assert r.headers["x-ratelimit-remaining"] == "4"
    assert STICKY_HEADERS == "sticky_headers"


async def test_error_after_response_started_is_reraised_not_doubled(build_app, connect, caplog):
    caplog.set_level(logging.CRITICAL, logger="svc_api.http")
    async with connect(build_app(ROUTES, auth=False)) as client:
        with pytest.raises(RuntimeError, match="mid-stream"):
            await client.get("/stream")


def test_api_error_rejects_non_error_status_and_reserved_extra():
    with pytest.raises(ValueError, match="4xx or 5xx"):
        ApiError(200, "fine")
    with pytest.raises(ValueError, match=r"\['reason'\]"):
        ApiError(400, "bad", extra={"reason": "x"})


async def test_client_disconnect_is_not_a_server_error(caplog):
    caplog.set_level(logging.INFO, logger="svc_api.http")

    async def reads_body(scope, receive, send):
        await Request(scope, receive).body()

    sent: list[dict] = []

    async def disconnected() -> dict:
        return {"type": "http.disconnect"}

    async def send(message: dict) -> None:
        sent.append(message)

    scope = {
        "type": "http",
        "method": "POST",
        "path": "/x",
        "headers": [],
        "state": {"correlation_id": "gone-1234"},
    }
    await ErrorEnvelopeMiddleware(reads_body)(scope, disconnected, send)
    assert sent[0]["status"] == 400
    [record] = [r for r in caplog.records if r.name == "svc_api.http"]
    assert record.levelno == logging.INFO and "gone-1234" in record.getMessage()


async def test_http_exception_below_the_router_keeps_its_status(connect):
    from starlette.exceptions import HTTPException

    async def not_modified(scope, receive, send):
        raise HTTPException(304)

    async def teapot(scope, receive, send):
        raise HTTPException(418, detail="short and stout")

    async with connect(ErrorEnvelopeMiddleware(not_modified)) as client:
        r304 = await client.get("/")
    async with connect(ErrorEnvelopeMiddleware(teapot)) as client:
        r418 = await client.get("/")
    assert (r304.status_code, r304.content) == (304, b"")
    assert r418.status_code == 418
    assert r418.json() == {"error": "i_m_a_teapot", "message": "short and stout"}
