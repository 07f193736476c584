"""Request bodies bounded while they stream: a pure ASGI middleware for every route.

A ``Content-Length`` over the limit is answered 413 before a byte of the body is read; a body sent
without one (chunked) is counted chunk by chunk as the app reads it, and the first chunk that goes
over raises the 413, so the server never holds more than the limit of any request. A client that
stops sending its body for ``read_timeout`` seconds gets a 408 instead of holding its connection
and a task forever.

Example:
    >>> import asyncio, httpx
    >>> from starlette.requests import Request
    >>> from starlette.responses import PlainTextResponse
    >>> async def echo(scope, receive, send):
    ...     body = await Request(scope, receive).body()
    ...     await PlainTextResponse(str(len(body)))(scope, receive, send)
    >>> from svc_api.core.envelope import ErrorEnvelopeMiddleware
    >>> app = ErrorEnvelopeMiddleware(BodyLimitMiddleware(echo, max_bytes=10))
    >>> async def post(content):
    ...     async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t") as c:
    ...         return await c.post("/", content=content)
    >>> asyncio.run(post(b"12345")).text, asyncio.run(post(b"x" * 11)).status_code
    ('5', 413)
    >>> async def chunks():
    ...     for _ in range(3):
    ...         yield b"xxxxx"
    >>> asyncio.run(post(chunks())).json()["error"]
    'payload_too_large'
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from svc_api.core.errors import ServiceError

MAX_BODY = 1 << 20
"""The largest request body of any route (bytes)."""


class PayloadTooLarge(ServiceError):
    """The request body is larger than the service accepts (413)."""

    status = 413
    error = "payload_too_large"


class BodyTimeout(ServiceError):
    """The client stopped sending its request body (408)."""

    status = 408
    error = "request_timeout"


class BodyLimitMiddleware:
    """See the module docstring; ``max_bytes`` and ``read_timeout`` (seconds per chunk) are settings;
    ``larger`` maps path prefixes to the limit of their routes (the upload parts PUT to signed URLs).

    Example:
        >>> BodyLimitMiddleware(None, larger={"/up/": 99}).limit_for("/up/1")
        99
    """

    def __init__(
        self,
        app: ASGIApp,
        *,
        max_bytes: int = MAX_BODY,
        read_timeout: float = 15.0,
        larger: Mapping[str, int] | None = None,
    ) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.read_timeout = read_timeout
        self.larger = tuple((larger or {}).items())

    def limit_for(self, path: str) -> int:
        """The body limit of a request to ``path``."""
        for prefix, limit in self.larger:
            if path.startswith(prefix):
                return limit
        return self.max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = self.limit_for(scope.get("path", "")) if self.larger else self.max_bytes
        declared = _content_length(scope)
        if declared is not None and declared > limit:
            raise self._too_large(limit)
        seen = 0
        done = False

        async def bounded() -> Message:
            nonlocal seen, done
            if done:
                return await receive()  # after the body: wait for the disconnect as usual
            try:
                # asyncio's own timeout: a tenth of the cost of a cancel scope, on every request.
                async with asyncio.timeout(self.read_timeout):
                    message = await receive()
            except TimeoutError:
                raise BodyTimeout(
                    f"no part of the request body arrived for {self.read_timeout:g} seconds"
                ) from None
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > limit:
                    raise self._too_large(limit)
                done = not message.get("more_body", False)
            return message

        await self.app(scope, bounded, send)

    def _too_large(self, limit: int) -> PayloadTooLarge:
        return PayloadTooLarge(f"the request body is larger than {limit} bytes")


def _content_length(scope: Scope) -> int | None:
    for name, value in scope.get("headers", ()):
        if name == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None
    return None


__all__ = ["MAX_BODY", "BodyLimitMiddleware", "BodyTimeout", "PayloadTooLarge"]
