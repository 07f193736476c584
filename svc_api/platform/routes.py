"""Public routes: ``GET /`` (platform config), ``GET /health``, ``GET /openapi.json``, and the
``/tradingdata`` types ``platform_notifications`` and ``changelog``.

Example:
    >>> sorted(TRADINGDATA)
    ['changelog', 'platform_notifications']
"""

from __future__ import annotations

from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from svc_api.core.contract import described
from svc_api.core.dispatch import Call, Operation
from svc_api.core.services import Services
from svc_api.notifications import service as notifications
from svc_api.platform import contract as c
from svc_api.platform import rest
from svc_api.platform import service as platform


async def root(request: Request) -> JSONResponse:
    """``GET /``: the Platform config (coins cached for a minute).

    Example:
        >>> import asyncio, httpx
        >>> from svc_api.app import create_app
        >>> from svc_api.settings import Settings
        >>> settings = Settings(database_url="sqlite://", secret_key=b"k" * 32, data_dir="/nonexistent")
        >>> app = create_app(settings)
        >>> async def get():
        ...     transport = httpx.ASGITransport(app=app)
        ...     async with httpx.AsyncClient(transport=transport, base_url="http://t") as c:
        ...         return (await c.get("/")).json()["supported_coins"]
        >>> asyncio.run(get())
        []
    """
    return JSONResponse(await run_in_threadpool(platform.config, request.app.state.services))


async def health(request: Request) -> JSONResponse:
    """``GET /health``: 200 when the store answers, else 503 with ``reason: store_unavailable``.

    Example:
        >>> import asyncio, httpx
        >>> from svc_api.app import create_app
        >>> from svc_api.settings import Settings
        >>> url = "postgresql+psycopg://u@127.0.0.1:1/x"
        >>> app = create_app(Settings(database_url=url, secret_key=b"k" * 32))
        >>> async def get():
        ...     transport = httpx.ASGITransport(app=app)
        ...     async with httpx.AsyncClient(transport=transport, base_url="http://t") as c:
        ...         return (await c.get("/health")).status_code
        >>> asyncio.run(get())
        503
    """
    services: Services = request.app.state.services
    settings = services.settings

    if await run_in_threadpool(platform.store_ok, services):
        return JSONResponse({"status": "ok", "store": "ok"})
    return JSONResponse(
        {
            "error": "service_unavailable",
            "reason": "store_unavailable",
            "retry_after": settings.store_retry_after,
        },
        status_code=503,
        headers={"Retry-After": str(settings.store_retry_after)},
    )


async def healthz(request: Request) -> JSONResponse:
    """``GET /healthz``: liveness, always 200 while the process serves: the store's state, the
    health of each background worker this process runs (``{}`` when they run in ``svc worker``), and
    the market's (``market``: the clock, the newest candle, the series that lag). ``status`` is
    ``degraded`` while a listed series lags by more than two of its candles.

    Example:
        >>> import asyncio, httpx
        >>> from svc_api.app import create_app
        >>> from svc_api.settings import Settings
        >>> app = create_app(Settings(database_url="sqlite://", secret_key=b"k" * 32))
        >>> async def get():
        ...     transport = httpx.ASGITransport(app=app)
        ...     async with httpx.AsyncClient(transport=transport, base_url="http://t") as c:
        ...         return (await c.get("/healthz")).json()
        >>> asyncio.run(get())
        {'status': 'ok', 'store': 'ok', 'workers': {}, 'market': {'status': 'ok', 'feed': 'off'}}
    """
    services: Services = request.app.state.services
    store_ok = await run_in_threadpool(platform.store_ok, services)
    workers = await run_in_threadpool(platform.workers_health, services)
    market = await run_in_threadpool(platform.market_health, services)
    return JSONResponse(
        {
            "status": market["status"],
            "store": "ok" if store_ok else "unavailable",
            "workers": workers,
            "market": market,
        }
    )


async def readyz(request: Request) -> JSONResponse:
    """``GET /readyz``: readiness, 200 when the store answers, else 503 (take the process out of rotation).

    Example:
        >>> import asyncio, httpx
        >>> from svc_api.app import create_app
        >>> from svc_api.settings import Settings
        >>> url = "postgresql+psycopg://u@127.0.0.1:1/x"
        >>> app = create_app(Settings(database_url=url, secret_key=b"k" * 32))
        >>> async def get():
        ...     transport = httpx.ASGITransport(app=app)
        ...     async with httpx.AsyncClient(transport=transport, base_url="http://t") as c:
        ...         return (await c.get("/readyz")).status_code
        >>> asyncio.run(get())
        503
    """
    return await health(request)


async def openapi(request: Request) -> Response:
    """``GET /openapi.json``: the API description (``svc_api/openapi.yaml``) as JSON.

    Example:
        >>> import asyncio, httpx
        >>> from svc_api.app import create_app
        >>> from svc_api.settings import Settings
        >>> app = create_app(Settings(database_url="sqlite://", secret_key=b"k" * 32))
        >>> async def get():
        ...     transport = httpx.ASGITransport(app=app)
        ...     async with httpx.AsyncClient(transport=transport, base_url="http://t") as c:
        ...         return (await c.get("/openapi.json")).json()["openapi"]
        >>> asyncio.run(get())
        '3.1.0'
    """
    return Response(await run_in_threadpool(platform.openapi_document), media_type="application/json")


def _platform_notifications(call: Call, req: c.PlatformNotificationsQuery) -> dict[str, Any]:
    items = notifications.latest_announcements(call.store, limit=req.limit)
    return {"notifications": items, "count": len(items)}


def _changelog(call: Call, req: c.ChangelogQuery) -> dict[str, Any]:
    return platform.changelog(call.store, limit=req.limit, min_version=req.min_version)


TRADINGDATA: dict[str, Operation] = {
    "platform_notifications": Operation(
        _platform_notifications,
        access="public",
        request=c.PlatformNotificationsQuery,
        reply=c.PlatformNotifications,
        summary="The latest platform announcements, newest first.",
    ),
    "changelog": Operation(
        _changelog,
        access="public",
        request=c.ChangelogQuery,
        reply=c.Changelog,
        summary="The client app's changelog, newest first.",
    ),
}


ROUTES = [
    described("/", root, "GET", rest.ROOT),
    described("/health", health, "GET", rest.HEALTH),
    described("/healthz", healthz, "GET", rest.HEALTHZ),
    described("/readyz", readyz, "GET", rest.READYZ),
    described("/openapi.json", openapi, "GET", rest.OPENAPI),
]
"""The platform's REST routes, each with its contract."""
