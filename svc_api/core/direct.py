"""The family endpoints served straight from the middleware chain, without Starlette's router.

``POST /user``, ``POST /backtest`` and ``GET /tradingdata`` carry nearly every request. Going through
Starlette's exception middleware, router, route and request-response wrappers cost about a fifth of
the event loop's time per request (measured with py-spy under wrk); this layer answers those three
paths itself, renders service errors with the same handlers the app registers, and passes every
other request (and a family path with another method, which the router answers with 405) on.

Example:
    >>> import asyncio, httpx
    >>> from starlette.responses import JSONResponse, PlainTextResponse
    >>> async def user(request):
    ...     return JSONResponse({"path": request.url.path})
    >>> async def rest(scope, receive, send):
    ...     await PlainTextResponse("router", status_code=404)(scope, receive, send)
    >>> app = DirectEndpoints(rest, endpoints={"/user": ("POST", user)}, handlers={})
    >>> async def call(method, path):
    ...     transport = httpx.ASGITransport(app=app)
    ...     async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
    ...         return (await client.request(method, path)).text
    >>> asyncio.run(call("POST", "/user")), asyncio.run(call("GET", "/user"))
    ('{"path":"/user"}', 'router')
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Receive, Scope, Send

Endpoint = Callable[[Request], Awaitable[Response]]
Handler = Callable[[Request, Exception], Any]


class DirectEndpoints:
    """Pure ASGI middleware, innermost: ``endpoints`` maps a path to ``(method, endpoint)``;
    ``handlers`` maps exception classes to the app's exception handlers (first match along the
    exception's MRO, as Starlette looks them up); anything without a handler propagates."""

    def __init__(
        self, app: ASGIApp, *, endpoints: Mapping[str, tuple[str, Endpoint]], handlers: Mapping[type, Handler]
    ) -> None:
        self.app = app
        self.endpoints = dict(endpoints)
        self.handlers = dict(handlers)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        hit = (
            self.endpoints.get(scope["path"])
            if scope["type"] == "http" and not scope.get("root_path")
            else None
        )
        if hit is None or scope["method"] != hit[0]:
            await self.app(scope, receive, send)
            return
        request = Request(scope, receive, send)
        try:
            response = await hit[1](request)
        except Exception as exc:
            handler = self._handler(exc)
            if handler is None:
                raise
            response = handler(request, exc)
            if inspect.isawaitable(response):
                response = await response
        await response(scope, receive, send)

    def _handler(self, exc: Exception) -> Handler | None:
        for cls in type(exc).__mro__:
            if cls in self.handlers:
                return self.handlers[cls]
        return None
