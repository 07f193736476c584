"""The application factory: ``create_app()`` builds the Starlette app from the settings.

``uvicorn --factory svc_api.app:create_app`` and ``svc serve`` both run it. Middleware, outermost
first: correlation ID, CORS, error envelope, authentication, rate limit, authentication gate
(raises a rejected credential after it was counted), idempotency, routes.

Example:
    >>> import asyncio, httpx
    >>> app = create_app(Settings(database_url="sqlite:///:memory:", secret_key=b"k" * 32))
    >>> async def health():
    ...     async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t") as c:
    ...         return (await c.get("/health")).json()
    >>> asyncio.run(health())
    {'status': 'ok', 'store': 'ok'}
"""

from __future__ import annotations

import contextlib
import functools
import gc
from collections.abc import AsyncIterator
from typing import Any

import anyio.to_thread
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.middleware import Middleware
from starlette.types import Scope

from svc_api.auth.middleware import AuthGate, AuthMiddleware
from svc_api.core.bodylimit import BodyLimitMiddleware
from svc_api.core.clock import Clock
from svc_api.core.correlation import CorrelationIdMiddleware
from svc_api.core.cors import cors_middleware
from svc_api.core.direct import DirectEndpoints
from svc_api.core.dispatch import Operation
from svc_api.core.envelope import ErrorEnvelopeMiddleware
from svc_api.core.errors import EXCEPTION_HANDLERS
from svc_api.core.idempotency import IdempotencyMiddleware
from svc_api.core.ratelimit import RateLimitMiddleware, RateLimitPolicy
from svc_api.core.security import SecurityHeadersMiddleware
from svc_api.core.services import Services
from svc_api.education.uploads.multipart import PART_PREFIX
from svc_api.education.uploads.policy import POLICY
from svc_api.limits.service import OverrideCache
from svc_api.migrations import migrate
from svc_api.routing import family_endpoints, operation_for, routes, selector_of
from svc_api.seeds import plant
from svc_api.settings import Settings
from svc_api.workers import REGISTRY


def _takes_idempotency_key(scope: Scope) -> bool:
    op = _operation(scope["path"], scope.get("query_string", b""))
    return op is not None and op.idempotent


def _plain_operation(scope: Scope) -> bool:
    """A known dispatch-family operation without an idempotency key: its credential check and
    rate-limit count may run in the handler's thread (see :mod:`svc_api.auth.middleware`)."""
    op = _operation(scope["path"], scope.get("query_string", b""))
    return op is not None and not op.idempotent


def _per_ip_limit(scope: Scope) -> int | None:
    """The per-IP limit of an operation that has one (login), instead of the caller's."""
    op = _operation(scope["path"], scope.get("query_string", b""))
    return None if op is None else op.per_ip_limit


# Education routes are plain REST, not dispatch operations: their costly ones by method and path.
_EDUCATION_GROUPS = {("POST", "/education/v1/checkouts"): "checkout"}


def _limit_group(scope: Scope) -> str | None:
    """The rate-limit endpoint group of a costly request (a launch, a key, a checkout), or None."""
    op = _operation(scope["path"], scope.get("query_string", b""))
    if op is not None:
        return op.limit_group
    return _EDUCATION_GROUPS.get((scope.get("method", ""), scope["path"].rstrip("/")))


@functools.lru_cache(maxsize=4096)
def _operation(path: str, query_string: bytes) -> Operation | None:
    """The operation a path and query dispatch to: clients repeat the same few, so it is remembered."""
    selector = selector_of(path)
    if selector is None:
        return None
    query = query_string.decode("latin-1")
    value = next((v for k, _, v in (part.partition("=") for part in query.split("&")) if k == selector), None)
    return operation_for(path, value)


def create_app(settings: Settings | None = None, *, clock: Clock | None = None) -> Starlette:
    """The service app (settings from the environment when not given; ``clock`` for tests that move
    time by hand, wall time otherwise).

    Example:
        >>> app = create_app(Settings(database_url="sqlite:///:memory:", secret_key=b"k" * 32))
        >>> app.state.services.settings.session_ttl_seconds
        2592000
    """
    settings = settings if settings is not None else Settings.from_env()
    services = Services(settings, migrate=migrate, clock=clock)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        # The limiter belongs to this event loop, so the size applies to this app's requests only.
        anyio.to_thread.current_default_thread_limiter().total_tokens = settings.request_threads
        if await run_in_threadpool(services.try_open) and settings.seed_samples:
            await run_in_threadpool(plant, services)
        if settings.run_workers:
            services.workers = await run_in_threadpool(REGISTRY.start, services)
        # What start-up loaded (the engine, SQLAlchemy, routes: ~190,000 objects) never becomes
        # garbage; left in the collector's oldest generation, each full collection walks it all and
        # stops the event loop for 60-70 ms, the p99 of a loaded server. Frozen, it is not walked;
        # what requests allocate is collected as before. Unfrozen at shutdown so an app started and
        # stopped many times in one process (tests) gives its objects back.
        gc.freeze()
        try:
            yield
        finally:
            gc.unfreeze()
            if services.workers is not None:
                await run_in_threadpool(services.workers.stop)
            await _close_middleware(app)
            await run_in_threadpool(services.close)

    app = Starlette(
        routes=routes(),
        middleware=[
            Middleware(CorrelationIdMiddleware),
            # Without allowed origins, CORS would answer nothing to anyone: not a layer on every request.
            *([cors_middleware(settings.cors_origins)] if settings.cors_origins else []),
            Middleware(SecurityHeadersMiddleware),
            Middleware(ErrorEnvelopeMiddleware),
            Middleware(
                BodyLimitMiddleware,
                read_timeout=settings.body_read_timeout,
                # upload parts PUT to the service's signed URLs (local object store) are up to 64 MiB
                larger={PART_PREFIX: POLICY.max_part},
            ),
            Middleware(
                AuthMiddleware,
                services=services,
                # Limits in Redis are counted on the event loop, so the credential must be known first.
                deferrable=_plain_operation if not settings.redis_url else None,
            ),
            Middleware(
                RateLimitMiddleware,
                storage_url=settings.redis_url,
                policy=RateLimitPolicy.from_settings(settings),
                key_prefix=settings.rate_limit_prefix,
                per_ip=_per_ip_limit,
                group=_limit_group,
                overrides=OverrideCache(lambda: services.store).get,
                clock=services.clock,
            ),
            Middleware(AuthGate),
            Middleware(IdempotencyMiddleware, services=services, applies=_takes_idempotency_key),
            Middleware(DirectEndpoints, endpoints=family_endpoints(), handlers=EXCEPTION_HANDLERS),
        ],
        exception_handlers=dict(EXCEPTION_HANDLERS),
        lifespan=lifespan,
    )
    app.state.services = services
    return app


async def _close_middleware(app: Starlette) -> None:
    """Close clients held by middleware (the Redis connection of the rate limiter)."""
    layer: Any = app.middleware_stack
    while layer is not None:
        close = getattr(layer, "aclose", None)
        if close is not None:
            await close()
        layer = getattr(layer, "app", None)
