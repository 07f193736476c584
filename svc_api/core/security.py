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
                given = message.get("headers", ())
                headers = [(k, v) for k, v in given if not private or k.lower() != b"cache-control"]
                headers.append(_NOSNIFF)
                if private:
                    headers.append(_NO_STORE)
                message["headers"] = headers
            await send(message)

        await self.app(scope, receive, send_wrapper)


__all__ = ["SecurityHeadersMiddleware"]
