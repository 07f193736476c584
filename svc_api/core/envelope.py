"""The error envelope: pure ASGI middleware that renders whatever escapes the app as the service's
error body (:mod:`svc_api.core.errors`): a `ServiceError` as itself, a full disk as 507
``insufficient_storage``, anything else as a bare ``500 {error: "internal_error"}`` with the
traceback in the log (and the correlation id), never to the client. Headers promised on every
response (``scope["state"]["sticky_headers"]``, the rate limiter's) are copied onto it.

Example:
    >>> ErrorEnvelopeMiddleware.__name__
    'ErrorEnvelopeMiddleware'
"""

from __future__ import annotations

import logging

from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from svc_api.core.errors import (
    STICKY_HEADERS,
    ApiError,
    ServiceError,
    StorageFull,
    _descriptive,
    _http_response,
    is_disk_full,
)

__all__ = ["ErrorEnvelopeMiddleware"]

logger = logging.getLogger("svc_api.http")


class ErrorEnvelopeMiddleware:
    """Pure ASGI middleware: any exception below it becomes a JSON error response.

    `ApiError` renders as itself, Starlette's `HTTPException` in the same envelope, anything else
    as ``500 {error: "internal_error"}`` logged with ``scope["state"]["correlation_id"]``. If the
    response had already started, the exception is logged and re-raised (the server drops the
    connection; a second response cannot be sent).

    >>> import asyncio, httpx
    >>> async def boom(scope, receive, send):
    ...     raise ApiError(418, "teapot")
    >>> async def get():
    ...     transport = httpx.ASGITransport(app=ErrorEnvelopeMiddleware(boom))
    ...     async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
    ...         return await client.get("/")
    >>> r = asyncio.run(get())
    >>> r.status_code, r.json()
    (418, {'error': 'teapot'})
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def send_wrapper(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, receive, send_wrapper)
        except Exception as exc:
            if started:
                logger.exception("error after the response started [%s]", _correlation_id(scope))
                raise
            response = _render(scope, exc)
            response.headers.update(scope.get("state", {}).get(STICKY_HEADERS, {}))
            await response(scope, receive, send)


def _render(scope: Scope, exc: Exception) -> Response:
    descriptive = _descriptive(scope)
    if isinstance(exc, ServiceError):
        return exc.response(descriptive=descriptive)
    if isinstance(exc, HTTPException):
        return _http_response(exc, descriptive=descriptive)
    if is_disk_full(exc):
        logger.error(
            "disk full on %s %s [correlation_id=%s]: %s",
            scope.get("method"),
            scope.get("path"),
            _correlation_id(scope),
            exc,
        )
        return StorageFull().response(descriptive=descriptive)
    if isinstance(exc, ClientDisconnect):
        # The client went away mid-request: not a server fault; nobody will read the reply.
        logger.info(
            "client disconnected on %s %s [correlation_id=%s]",
            scope.get("method"),
            scope.get("path"),
            _correlation_id(scope),
        )
        return ApiError(400, "client_disconnected").response(descriptive=descriptive)
    logger.error(
        "unhandled %s on %s %s [correlation_id=%s]",
        type(exc).__name__,
        scope.get("method"),
        scope.get("path"),
        _correlation_id(scope),
        exc_info=exc,
    )
    return ApiError(500, "internal_error").response(descriptive=descriptive)


def _correlation_id(scope: Scope) -> str:
    return str(scope.get("state", {}).get("correlation_id", "-"))
