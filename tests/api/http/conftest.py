"""A tiny Starlette app stacked like the service (correlation, envelope, fake auth, rate limit)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.routing import BaseRoute
from starlette.types import ASGIApp, Receive, Scope, Send

from svc_api.core.correlation import CorrelationIdMiddleware
from svc_api.core.envelope import ErrorEnvelopeMiddleware
from svc_api.core.errors import EXCEPTION_HANDLERS
from svc_api.core.ratelimit import RateLimitMiddleware


@dataclass(frozen=True)
class FakePrincipal:
    """Same fields as `svc_api.core.principal.Principal` (the rate limiter reads them by name)."""

    kind: str
    svc_id: str | None
    plan: str
    first_party: bool
    ip: str


class FakeAuth:
    """Sets ``scope["state"]["principal"]`` from ``X-Test-Svc-Id`` / ``-Plan`` / ``-First-Party``."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            headers = {k.decode().lower(): v.decode() for k, v in scope["headers"]}
            ip = scope["client"][0]
            svc_id = headers.get("x-test-svc-id")
            if svc_id:
                first_party = headers.get("x-test-first-party") == "1"
                principal = FakePrincipal(
                    "session" if first_party else "api_key",
                    svc_id,
                    headers.get("x-test-plan", "free"),
                    first_party,
                    ip,
                )
            else:
                principal = FakePrincipal("guest", None, "guest", False, ip)
            scope.setdefault("state", {})["principal"] = principal
        await self.app(scope, receive, send)


def make_app(
    routes: Sequence[BaseRoute], *, ratelimit: dict[str, Any] | None = None, auth: bool = True
) -> Starlette:
    """The service's middleware order; ``ratelimit=None`` leaves the limiter out."""
    middleware = [Middleware(CorrelationIdMiddleware), Middleware(ErrorEnvelopeMiddleware)]
    if auth:
        middleware.append(Middleware(FakeAuth))
    if ratelimit is not None:
        middleware.append(Middleware(RateLimitMiddleware, **ratelimit))
    return Starlette(routes=list(routes), middleware=middleware, exception_handlers=EXCEPTION_HANDLERS)


@asynccontextmanager
async def client_for(
    app: ASGIApp, ip: str = "10.0.0.1", *, raise_app_exceptions: bool = True
) -> AsyncIterator[httpx.AsyncClient]:
    transport = httpx.ASGITransport(app=app, client=(ip, 40000), raise_app_exceptions=raise_app_exceptions)
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
        yield client


@pytest.fixture
def build_app() -> Callable[..., Starlette]:
    """``build_app(routes, ratelimit=None, auth=True)``: the middleware stack around ``routes``."""
    return make_app


@pytest.fixture
def connect() -> Callable[..., Any]:
    """``async with connect(app, ip="10.0.0.1") as client``: an httpx client over ASGI."""
    return client_for
