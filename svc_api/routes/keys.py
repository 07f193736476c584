"""``/user`` developer API key operations (session token only; an API key gets 403).

The key store is the database: when it is unreachable these operations answer 503
``api_key_store_unavailable`` and change nothing.

Example:
    >>> sorted(USER)
    ['api_key_generate', 'api_key_revoke', 'api_key_status']
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any

from svc_api.domains import apikeys
from svc_api.http.errors import ApiError
from svc_api.routes.dispatch import Call, Operation
from svc_api.store.engine import StoreUnavailable


def _key_store(handler: Callable[[Call], Any]) -> Callable[[Call], Any]:
    @wraps(handler)
    def wrapped(call: Call) -> Any:
        try:
            return handler(call)
        except StoreUnavailable as exc:
            raise ApiError(
                503,
                "api_key_store_unavailable",
                code="api_key_store_unavailable",
                retry_after=exc.retry_after,
            ) from None

    return wrapped


@_key_store
def _generate(call: Call) -> dict[str, str]:
    with call.store.write() as conn:
        return apikeys.generate_key(
            conn,
            call.svc_id,
            call.params.get("label"),
            call.params.get("permissions"),
            secret_key=call.services.settings.secret_key,
        )


@_key_store
def _status(call: Call) -> dict[str, Any]:
    with call.store.read() as conn:
        return apikeys.key_status(conn, call.svc_id)


@_key_store
def _revoke(call: Call) -> dict[str, bool]:
    with call.store.write() as conn:
        return apikeys.revoke_key(conn, call.svc_id, call.params.get("api_key_id"))


USER: dict[str, Operation] = {
    "api_key_generate": Operation(_generate, access="session"),
    "api_key_status": Operation(_status),
    "api_key_revoke": Operation(_revoke, access="session"),
}
