"""``Idempotency-Key`` on every education POST, PUT, PATCH and DELETE (pure ASGI middleware).

The header takes 16-128 letters, digits, ``.``, ``_``, ``:`` or ``-``. The same table and the same
rules as the rest of the API (:mod:`svc_api.core.idempotency`): claimed under (account, key) with a
fingerprint of method, path, query and body; a replay returns the stored status and body; another
request under the key, or one still running, is a 409.

A guest passes through (the route answers 401 first); a signed-in caller without the header gets
400 ``idempotency_key_required``. The payment provider's own pages and callback, the hosted
onboarding page, media downloads and upload parts PUT to signed URLs are exempt: they are not the
client's operations.

Example:
    >>> needs_key("POST", "/education/v1/checkouts"), needs_key("GET", "/education/v1/catalog")
    (True, False)
    >>> needs_key("POST", "/education/v1/payments/callback")
    False
"""

from __future__ import annotations

import hashlib

from starlette.datastructures import Headers
from starlette.types import ASGIApp, Receive, Scope, Send

from svc_api.core.errors import ApiError
from svc_api.core.idempotency import (
    IdempotencyMiddleware,
    fingerprint,
    read_body,
    replaying,
    send_stored,
    valid_key,
)

_MUTATING = frozenset({"POST", "PUT", "PATCH", "DELETE"})
_EXEMPT = (
    "/education/v1/sandbox/",
    "/education/v1/payments/callback",
    "/education/v1/media/",
    "/education/v1/seller/onboarding/",
    "/education/v1/studio/upload-parts/",
)


def needs_key(method: str, path: str) -> bool:
    """Whether a request must carry ``Idempotency-Key``."""
    return method in _MUTATING and not path.startswith(_EXEMPT)


class HeaderIdempotency(IdempotencyMiddleware):
    """The core middleware's claim, replay and release, keyed by the ``Idempotency-Key`` header.

    Example:
        >>> from starlette.responses import PlainTextResponse
        >>> HeaderIdempotency(PlainTextResponse("ok")).stale_after
        600
    """

    def __init__(self, app: ASGIApp, *, services: object = None, stale_after: int = 600) -> None:
        # Without ``services``, those of the app serving the request (``scope["app"].state``).
        super().__init__(app, services=services, applies=lambda scope: True, stale_after=stale_after)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not needs_key(scope["method"], scope["path"]):
            await self.app(scope, receive, send)
            return
        principal = scope.get("state", {}).get("principal")
        owner = principal.svc_id if principal is not None and principal.identified else None
        if owner is None:
            await self.app(scope, receive, send)
            return
        key = Headers(scope=scope).get("idempotency-key")
        if key is None:
            raise ApiError(
                400,
                "idempotency_key_required",
                extra={"message": "send an Idempotency-Key header (for example a UUID) with every change"},
            )
        if not valid_key(key):
            raise ApiError(
                400,
                "invalid_idempotency_key",
                extra={"message": "Idempotency-Key must be 16-128 letters, digits, '.', '_', ':' or '-'"},
            )
        if self.services is None:
            self.services = scope["app"].state.services
        raw = await read_body(receive)
        digest = {"sha256": hashlib.sha256(raw).hexdigest()}
        print_ = fingerprint(scope["method"], scope["path"], scope.get("query_string", b""), digest)
        stored = await self._claim(owner, key, print_)
        if stored is not None:
            await send_stored(stored, send)
            return
        await self._run(scope, replaying(raw, receive), send, owner, key)
