"""The one error hierarchy (`ServiceError` and its kinds) and its renderers (the middleware that
renders failures escaping everything else: :mod:`svc_api.core.envelope`).

Every error leaves the service as ``{error, code?, reason?, retry_after?, ...extra}``; a
``retry_after`` also sets the ``Retry-After`` header. Anything that is not an `ApiError` becomes a
bare ``500 {error: "internal_error"}``: the traceback goes to the log (with the correlation id),
never to the client.

Inner middleware that promised headers on *every* response (the rate limiter) leaves them in
``scope["state"]["sticky_headers"]``; the envelope copies them onto the error response it renders,
because an exception unwinds past the ``send`` wrapper that would otherwise have added them.
"""

from __future__ import annotations

import errno
import logging
import math
import re
from collections.abc import Mapping
from http import HTTPStatus
from typing import Any

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.types import Scope

__all__ = [
    "EXCEPTION_HANDLERS",
    "STICKY_HEADERS",
    "ApiError",
    "Conflict",
    "DomainError",
    "Forbidden",
    "InsufficientCredits",
    "Invalid",
    "NotFound",
    "ServiceError",
    "StorageFull",
    "Unauthenticated",
    "Unavailable",
    "api_error_handler",
    "http_exception_handler",
]

logger = logging.getLogger("svc_api.http")

#: Key in ``scope["state"]`` of a ``dict[str, str]`` of headers every response must carry.
STICKY_HEADERS = "sticky_headers"

MAX_MESSAGE = 300
"""Characters of an error message kept; a longer one (quoting a huge rejected value) is cut."""
_RESERVED = frozenset({"error", "code", "reason", "retry_after"})
_NO_BODY = frozenset({204, 304})


class ServiceError(Exception):
    """Base of every failure the service answers with: the class carries its status and body.

    A subclass names its ``status``, ``error`` and (optionally) ``code`` and ``reason``; raising it
    anywhere below the error middleware renders ``{error, code?, reason?, retry_after?, message?,
    ...extra}``, with ``Retry-After`` when ``retry_after`` is set. No route converts errors.

    >>> class Gone(ServiceError):
    ...     status, error = 410, "gone"
    >>> Gone("the export expired").body()
    {'error': 'gone', 'message': 'the export expired'}
    """

    status: int = 400
    error: str = "invalid_request"
    code: str | None = None
    reason: str | None = None

    def __init__(
        self,
        message: str | None = None,
        *,
        code: str | None = None,
        reason: str | None = None,
        retry_after: float | None = None,
        extra: Mapping[str, Any] | None = None,
    ) -> None:
        clash = _RESERVED.intersection(extra or {})
        if clash:
            raise ValueError(f"error extra must not redefine {sorted(clash)}")
        if message is not None and len(message) > MAX_MESSAGE:
            # A rejected value is quoted in its message: never echo a megabyte back.
            message = message[:MAX_MESSAGE] + "... (truncated)"
        super().__init__(message if message is not None else f"{self.status} {self.error}")
        self.message = message
        if code is not None:
            self.code = code
        if reason is not None:
            self.reason = reason
        # Whole seconds, rounded up: a client that waits the advertised time must not be early.
        self.retry_after = None if retry_after is None else max(0, math.ceil(retry_after))
        self.extra: dict[str, Any] = dict(extra or {})
        quoted = self.extra.get("message")
        if isinstance(quoted, str) and len(quoted) > MAX_MESSAGE:
            self.extra["message"] = quoted[:MAX_MESSAGE] + "... (truncated)"

    def body(self) -> dict[str, Any]:
        """The JSON body: ``error`` first, optional markers only when set, then the message and ``extra``.

        >>> Invalid("limit must be 1-100").body()
        {'error': 'invalid_request', 'message': 'limit must be 1-100'}
        """
        out: dict[str, Any] = {"error": self.error}
        for name in ("code", "reason", "retry_after"):
            value = getattr(self, name)
            if value is not None:
                out[name] = value
        if self.message is not None:
            out["message"] = self.message
        out.update(self.extra)
        return out

    def headers(self) -> dict[str, str]:
        """Headers the error implies (``Retry-After``).

        >>> ApiError(400, "bad").headers()
        {}
        """
        return {} if self.retry_after is None else {"Retry-After": str(self.retry_after)}

    def response(self, *, descriptive: bool = False) -> Response:
        """The rendered Starlette response (``descriptive``: the education routes' shape, see
        :func:`descriptive_body`).

        >>> ApiError(402, "insufficient_credits", code="insufficient_credits").response().status_code
        402
        """
        body = descriptive_body(self.body()) if descriptive else self.body()
        return JSONResponse(body, status_code=self.status, headers=self.headers())


class ApiError(ServiceError):
    """A one-off error with an explicit status and ``error`` (for the HTTP layer's own answers).

    >>> e = ApiError(429, "too_many_requests", reason="rate_limit_exceeded", retry_after=1.2)
    >>> e.body(), e.headers()
    ({'error': 'too_many_requests', 'reason': 'rate_limit_exceeded', 'retry_after': 2}, {'Retry-After': '2'})
    >>> ApiError(404, "not_found", extra={"message": "no such notification"}).body()
    {'error': 'not_found', 'message': 'no such notification'}
    >>> ApiError(401, "invalid credentials", code="invalid_credentials").body()
    {'error': 'invalid credentials', 'code': 'invalid_credentials'}
    """

    def __init__(
        self,
        status: int,
        error: str,
        *,
        code: str | None = None,
        reason: str | None = None,
        retry_after: float | None = None,
        extra: Mapping[str, Any] | None = None,
    ) -> None:
        if not 400 <= status <= 599:
            raise ValueError(f"ApiError status must be 4xx or 5xx, got {status}")
        self.status = status
        self.error = error
        super().__init__(None, code=code, reason=reason, retry_after=retry_after, extra=extra)
        Exception.__init__(self, f"{status} {error}")


class Invalid(ServiceError):
    """A request field breaks a rule (400)."""

    status = 400


class Unauthenticated(ServiceError):
    """Wrong e-mail or password: a business 401 without ``code`` (it does not sign anyone out)."""

    status = 401
    error = "invalid_login"


class Forbidden(ServiceError):
    """The caller may not do this (403)."""

    status = 403
    error = "forbidden"


class NotFound(ServiceError):
    """No such record for this caller (404).

    >>> NotFound("no such job").status
    404
    """

    status = 404
    error = "not_found"


class Conflict(ServiceError):
    """Duplicate or conflicting state (409)."""

    status = 409
    error = "conflict"


class InsufficientCredits(ServiceError):
    """The balance does not cover the amount (402).

    >>> err = InsufficientCredits("need 5 credits, have 2")
    >>> err.status, err.code, str(err)
    (402, 'insufficient_credits', 'need 5 credits, have 2')
    """

    status = 402
    error = "insufficient_credits"
    code = "insufficient_credits"


class Unavailable(ServiceError):
    """A store or service this request needs is unreachable right now (503 with ``Retry-After``).

    >>> Unavailable(retry_after=5).body()
    {'error': 'service_unavailable', 'reason': 'store_unavailable', 'retry_after': 5}
    """

    status = 503
    error = "service_unavailable"
    reason = "store_unavailable"


class StorageFull(ServiceError):
    """The disk under the service's files (or the object store) is full: 507 with ``Retry-After``.
    Every write is whole or absent (temporary file, then rename), so the same request sent again
    once there is room succeeds. Any ``ENOSPC``/``EDQUOT`` ``OSError`` escaping a handler is this.

    >>> StorageFull().status, StorageFull().body()["retry_after"], StorageFull().message
    (507, 30, "the service's storage is full; send this again later")
    """

    status = 507
    error = "insufficient_storage"

    def __init__(self, message: str = "the service's storage is full; send this again later") -> None:
        super().__init__(message, retry_after=30)


def is_disk_full(exc: BaseException) -> bool:
    """True for the ``OSError`` of a full disk or an exhausted quota.

    >>> import errno
    >>> is_disk_full(OSError(errno.ENOSPC, "No space left on device")), is_disk_full(OSError(2, "x"))
    (True, False)
    """
    return isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT)


DomainError = ServiceError
"""The name the domain services raise under (the same class)."""


DESCRIPTIVE_PREFIX = "/education/"
"""Paths whose errors read ``{error: <descriptive message>, code: <machine name>}`` (the education
API's contract) instead of ``{error: <machine name>, message}``."""


def descriptive_body(body: Mapping[str, Any]) -> dict[str, Any]:
    """``{error: name, message?, ...}`` as ``{error: message, code: name, ...}``: the message a person
    reads first, the stable name beside it for programs.

    >>> descriptive_body({"error": "not_found", "message": "no such product"})
    {'error': 'no such product', 'code': 'not_found'}
    >>> descriptive_body({"error": "too_many_requests", "retry_after": 3})
    {'error': 'too many requests', 'code': 'too_many_requests', 'retry_after': 3}
    """
    rest = {k: v for k, v in body.items() if k not in ("error", "code", "message")}
    name = str(body.get("code") or body.get("error"))
    message = body.get("message") or str(body.get("error", "")).replace("_", " ")
    return {"error": message, "code": name, **rest}


def _descriptive(scope: Scope | None) -> bool:
    return scope is not None and str(scope.get("path", "")).startswith(DESCRIPTIVE_PREFIX)


def rate_limited(retry_after: float, message: str | None = None) -> ApiError:
    """The 429 of every limit that counts a caller's requests (per minute, per chat second, login
    budgets): always ``error: too_many_requests`` with ``reason: rate_limit_exceeded``, so a client
    reads one stable pair; what was exceeded is said in ``message``.

    >>> rate_limited(1, "one chat message per second").body()
    {'error': 'too_many_requests', 'reason': 'rate_limit_exceeded', 'retry_after': 1, \
'message': 'one chat message per second'}
    """
    extra = {} if message is None else {"message": message}
    return ApiError(
        429, "too_many_requests", reason="rate_limit_exceeded", retry_after=retry_after, extra=extra
    )


def session_expired(message: str = "a valid session token is required") -> ApiError:
    """The 401 that signs the user out.

    >>> session_expired().body()["code"]
    'session_expired'
    """
    return ApiError(401, "session_expired", code="session_expired", extra={"message": message})


def _http_error(exc: HTTPException) -> ApiError:
    """Translate Starlette's 404/405 (and any other HTTPException) into the envelope."""
    phrase = HTTPStatus(exc.status_code).phrase
    error = re.sub(r"[^a-z0-9]+", "_", phrase.lower()).strip("_")
    extra = {} if exc.detail == phrase else {"message": str(exc.detail)}
    return ApiError(exc.status_code, error, extra=extra)


async def api_error_handler(request: Request, exc: Exception) -> Response:
    """Starlette exception handler for `ApiError` (register it so routes render in-band).

    >>> import asyncio
    >>> asyncio.run(api_error_handler(None, ApiError(409, "conflict"))).body
    b'{"error":"conflict"}'
    """
    if not isinstance(exc, ServiceError):
        raise exc
    return exc.response(descriptive=_descriptive(getattr(request, "scope", None)))


async def http_exception_handler(request: Request, exc: Exception) -> Response:
    """Starlette exception handler: 404/405 and friends in the service envelope (``Allow`` kept).

    >>> import asyncio
    >>> r = asyncio.run(http_exception_handler(None, HTTPException(405, headers={"Allow": "GET"})))
    >>> r.status_code, r.body, r.headers["allow"]
    (405, b'{"error":"method_not_allowed"}', 'GET')
    """
    if not isinstance(exc, HTTPException):
        raise exc
    return _http_response(exc, descriptive=_descriptive(getattr(request, "scope", None)))


def _http_response(exc: HTTPException, *, descriptive: bool = False) -> Response:
    if exc.status_code in _NO_BODY or exc.status_code < 400:
        return Response(status_code=exc.status_code, headers=exc.headers)
    response = _http_error(exc).response(descriptive=descriptive)
    response.headers.update(exc.headers or {})
    return response


#: Pass as ``Starlette(exception_handlers=EXCEPTION_HANDLERS)``.
EXCEPTION_HANDLERS = {ServiceError: api_error_handler, HTTPException: http_exception_handler}
