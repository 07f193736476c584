"""What other domains use of authentication: resolving a caller's credentials outside the HTTP
middleware (a WebSocket handshake).

Example:
    >>> import asyncio
    >>> from starlette.datastructures import Headers
    >>> asyncio.run(principal_of(None, Headers({}), "::1")).kind
    'guest'
"""

from __future__ import annotations

from typing import Any

from starlette.datastructures import Headers

from svc_api.auth.middleware import Authenticator
from svc_api.core.principal import Principal


async def principal_of(services: Any, headers: Headers, ip: str, token: str | None = None) -> Principal:
    """The caller of ``headers`` (an API key pair or ``Authorization: Bearer``), or of a session
    ``token`` given another way (a query parameter); raises the ``ApiError`` of a rejection."""
    if token and "authorization" not in headers and "x-api-key" not in headers:
        headers = Headers({"authorization": f"Bearer {token}"})
    return await Authenticator(services).principal(headers, ip)
