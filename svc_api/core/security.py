"""Headers every response carries for safety: ``X-Content-Type-Options: nosniff`` everywhere, and
``Cache-Control: no-store`` on every reply that may hold a secret or personal data (any ``POST``,
and any request that presented a credential), so no proxy or browser cache keeps a session token,
an API secret or an account.

Example:
    >>> import asyncio, httpx
    >>> from starlette.responses import PlainTextResponse
    >>> app = SecurityHeadersMiddleware(PlainTextResponse("ok"))
    >>> async def call(method, **kw):
    ...     async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t") as c:
    ...         return await c.request(method, "/", **kw)
    >>> r = asyncio.run(call("POST"))
    >>> r.headers["x-content-type-options"], r.headers["cache-control"]
    ('nosniff', 'no-store')
    >>> "cache-control" in asyncio.run(call("GET")).headers
    False
    >>> asyncio.run(call("GET", headers={"Authorization": "Bearer x"})).headers["cache-control"]
    'no-store'
"""

from __future__ import annotations

from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

_NOSNIFF = (b"x-content-type-options", b"nosniff")
_NO_STORE = (b"cache-control", b"no-store")
_CREDENTIALS = frozenset({b"authorization", b"x-api-key", b"x-api-secret"})


class SecurityHeadersMiddleware:
    """Pure ASGI; see the module docstring."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers_in = scope.get("headers", ())
        private = scope.get("method") == "POST" or any(n in _CREDENTIALS for n, _ in headers_in)

        async def send_wrapper(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = (
                    _private(message.get("headers", ())) if private else list(message.get("headers", ()))
                )
                headers.append(_NOSNIFF)
                message["headers"] = headers
            await send(message)

        await self.app(scope, receive, send_wrapper)


def _private(given: Any) -> list[tuple[bytes, bytes]]:
    """The headers with ``Cache-Control: no-store``, keeping a route's own one when it already says
    ``no-store`` (such as ``private, no-store``)."""
    own = [(k, v) for k, v in given if k.lower() == b"cache-control" and b"no-store" in bytes(v)]
    kept = [(k, v) for k, v in given if k.lower() != b"cache-control"]
    return [*kept, *(own[:1] or [_NO_STORE])]


__all__ = ["SecurityHeadersMiddleware"]
