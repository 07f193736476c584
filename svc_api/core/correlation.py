"""Correlation ids: echo a valid ``X-Correlation-ID``, otherwise mint ``svc-<uuid4 hex>``.

Before the inner app runs, the id is put in ``scope["state"]["correlation_id"]``
(``request.state.correlation_id`` in a handler) and in a context variable (`current_correlation_id`;
`CorrelationIdFilter` adds it to log records, thread-pool handlers included). It is set on every
response, errors and 500s included, as long as this middleware sits outside the error envelope.
Every response also lists the correlation and rate-limit headers in
``Access-Control-Expose-Headers`` so browser clients can read them.
"""

from __future__ import annotations

import itertools
import logging
import re
import secrets
from contextvars import ContextVar

from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = [
    "CORRELATION_HEADER",
    "EXPOSE_HEADERS",
    "CorrelationIdFilter",
    "CorrelationIdMiddleware",
    "correlation_id_from",
    "current_correlation_id",
    "new_correlation_id",
]

CORRELATION_HEADER = "X-Correlation-ID"
#: Response headers a browser client may read (spec, Common rules 3 and Limits).
EXPOSE_HEADERS = (
    CORRELATION_HEADER,
    "X-RateLimit-Limit",
    "X-RateLimit-Remaining",
    "X-RateLimit-Reset",
    "Retry-After",
    "ETag",
)
_VALID = re.compile(r"[A-Za-z0-9._:\-]{8,128}")
_CURRENT: ContextVar[str] = ContextVar("svc_correlation_id", default="-")
_PROCESS_PREFIX = secrets.token_hex(8)
_SEQUENCE = itertools.count(secrets.randbits(48))
_MASK = (1 << 64) - 1


def new_correlation_id() -> str:
    """A fresh id: ``svc-`` and 32 hex digits, unique across processes and restarts.

    64 random bits drawn once per process, then a counter: ``uuid4`` costs a ``getrandom`` system
    call per request, which showed as a tenth of the server's CPU under load.

    >>> cid = new_correlation_id()
    >>> cid.startswith("svc-"), len(cid), cid != new_correlation_id()
    (True, 36, True)
    """
    return f"svc-{_PROCESS_PREFIX}{next(_SEQUENCE) & _MASK:016x}"


def correlation_id_from(value: str | None) -> str:
    """The client's id when it is 8-128 letters, digits, ``.``, ``_``, ``:``, ``-``; else a new one.

    >>> correlation_id_from("order-42:retry.1")
    'order-42:retry.1'
    >>> correlation_id_from("short").startswith("svc-"), correlation_id_from(None).startswith("svc-")
    (True, True)
    """
    if value is not None and _VALID.fullmatch(value):
        return value
    return new_correlation_id()


_EXPOSE_NAME = b"access-control-expose-headers"
_EXPOSE_VALUE = ", ".join(EXPOSE_HEADERS).encode("latin-1")
_CORRELATION_NAME = CORRELATION_HEADER.lower().encode("latin-1")


def _stamp(raw: list[tuple[bytes, bytes]], cid: bytes) -> list[tuple[bytes, bytes]]:
    """Response headers with our correlation id and every exposed name listed exactly once.

    Works on the raw ASGI list (cheaper than `MutableHeaders` on every response).

    >>> names = _stamp([(b"access-control-expose-headers", b"X-Other, retry-after")], b"abc")[0][1]
    >>> names.split(b", ")[:3], len(names.split(b", "))
    ([b'X-Other', b'retry-after', b'X-Correlation-ID'], 7)
    """
    out = [(k, v) for k, v in raw if k.lower() not in (_CORRELATION_NAME, _EXPOSE_NAME)]
    listed = [v for k, v in raw if k.lower() == _EXPOSE_NAME]
    if listed:
        names = [n.strip() for n in b",".join(listed).decode("latin-1").split(",") if n.strip()]
        known = {n.lower() for n in names}
        names += [h for h in EXPOSE_HEADERS if h.lower() not in known]
        out.append((_EXPOSE_NAME, ", ".join(names).encode("latin-1")))
    else:
        out.append((_EXPOSE_NAME, _EXPOSE_VALUE))
    out.append((_CORRELATION_NAME, cid))
    return out


class CorrelationIdMiddleware:
    """Pure ASGI middleware; put it outermost so it also stamps the error envelope's responses.

    >>> import asyncio, httpx
    >>> from starlette.responses import PlainTextResponse
    >>> async def hello(scope, receive, send):
    ...     await PlainTextResponse(scope["state"]["correlation_id"])(scope, receive, send)
    >>> async def get(headers):
    ...     transport = httpx.ASGITransport(app=CorrelationIdMiddleware(hello))
    ...     async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
    ...         return await client.get("/", headers=headers)
    >>> r = asyncio.run(get({"X-Correlation-ID": "abc-12345"}))
    >>> r.text, r.headers["x-correlation-id"]
    ('abc-12345', 'abc-12345')
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        raw = _header(scope, b"x-correlation-id")
        cid = correlation_id_from(raw)
        scope.setdefault("state", {})["correlation_id"] = cid

        raw_cid = cid.encode("latin-1")

        async def send_wrapper(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = _stamp(list(message.get("headers", ())), raw_cid)
            await send(message)

        token = _CURRENT.set(cid)
        try:
            await self.app(scope, receive, send_wrapper)
        finally:
            _CURRENT.reset(token)


class CorrelationIdFilter(logging.Filter):
    """Logging filter giving every record a ``correlation_id`` attribute (``-`` outside a request).

    The id travels in a context variable, so log lines written by handlers running in the thread
    pool carry it too. Use it in a format: ``"%(asctime)s %(correlation_id)s %(message)s"``.

    >>> record = logging.LogRecord("x", logging.INFO, __file__, 1, "hello", None, None)
    >>> CorrelationIdFilter().filter(record), record.correlation_id
    (True, '-')
    """

    def filter(self, record: logging.LogRecord) -> bool:
        record.correlation_id = _CURRENT.get()
        return True


def current_correlation_id() -> str:
    """The correlation id of the request being handled (``-`` outside a request).

    >>> current_correlation_id()
    '-'
    """
    return _CURRENT.get()


def _header(scope: Scope, name: bytes) -> str | None:
    """First value of a request header, or None; undecodable bytes count as invalid."""
    for key, value in scope.get("headers", ()):
        if key.lower() == name:
            try:
                return value.decode("ascii")
            except UnicodeDecodeError:
                return ""
    return None
