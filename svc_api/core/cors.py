"""CORS for browser clients: allowed origins from settings, our headers allowed in and exposed out.

The education routes are plain REST: PUT, PATCH and DELETE are allowed, ``Idempotency-Key`` and
``If-Match`` may be sent, ``ETag`` and ``Retry-After`` may be read.
"""

from __future__ import annotations

from collections.abc import Iterable

from starlette.middleware import Middleware
from starlette.middleware.cors import CORSMiddleware

from svc_api.core.correlation import EXPOSE_HEADERS

__all__ = ["ALLOW_HEADERS", "cors_middleware"]

#: Request headers a browser client may send (credentials, JSON, correlation).
ALLOW_HEADERS = (
    "Authorization",
    "Content-Type",
    "Idempotency-Key",
    "If-Match",
    "X-API-Key",
    "X-API-Secret",
    "X-Correlation-ID",
)


def cors_middleware(origins: Iterable[str]) -> Middleware:
    """Starlette `CORSMiddleware` for ``origins`` (``["*"]`` allows any; empty allows none).

    Credentials travel in headers, not cookies, so ``allow_credentials`` stays off and ``*`` is safe.

    >>> m = cors_middleware(["https://app.example.com"])
    >>> m.kwargs["allow_origins"], "X-RateLimit-Reset" in m.kwargs["expose_headers"]
    (['https://app.example.com'], True)
    >>> "ETag" in m.kwargs["expose_headers"], "If-Match" in m.kwargs["allow_headers"]
    (True, True)
    """
    return Middleware(
        CORSMiddleware,
        allow_origins=[o.strip() for o in origins if o.strip()],
        allow_methods=["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"],
        allow_headers=list(ALLOW_HEADERS),
        expose_headers=list(EXPOSE_HEADERS),
        max_age=600,
    )
