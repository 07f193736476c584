"""``/user`` developer API key operations (session token only; an API key gets 403).

The key store is the database: when it is unreachable these operations answer 503
``api_key_store_unavailable`` and change nothing.

Example:
    >>> sorted(USER)
    ['api_key_generate', 'api_key_revoke', 'api_key_status']
"""

from __future__ import annotations

from typing import Any

from svc_api.core.contract import NoFields
from svc_api.core.dispatch import Call, Operation
from svc_api.core.errors import ApiError
from svc_api.keys import contract as c
from svc_api.keys import service as apikeys


def _key_store_unavailable(retry_after: int | None) -> ApiError:
    code = "api_key_store_unavailable"
    return ApiError(503, code, code=code, retry_after=retry_after)


def _generate(call: Call, req: c.KeyGenerate) -> dict[str, str]:
    secret_key = call.services.settings.secret_key
    return apikeys.generate(
        call.store, call.svc_id, req.label, req.permissions, secret_key=secret_key, now=call.now
    )


def _status(call: Call, req: NoFields) -> dict[str, Any]:
    return apikeys.status(call.store, call.svc_id)


def _revoke(call: Call, req: c.KeyRevoke) -> dict[str, bool]:
    return apikeys.revoke(call.store, call.svc_id, req.api_key_id, now=call.now)


USER: dict[str, Operation] = {
    "api_key_generate": Operation(
        _generate,
        access="session",
        unavailable=_key_store_unavailable,
        limit_group="key_generation",
        request=c.KeyGenerate,
        reply=c.ApiKeyCreated,
        summary="Create the caller's API key (the secret is shown once).",
        errors=c.GENERATE_ERRORS,
    ),
    "api_key_status": Operation(
        _status,
        unavailable=_key_store_unavailable,
        request=NoFields,
        reply=c.ApiKeyStatus,
        summary="The caller's API key, if any (never its secret).",
    ),
    "api_key_revoke": Operation(
        _revoke,
        access="session",
        unavailable=_key_store_unavailable,
        request=c.KeyRevoke,
        reply=c.ApiKeyDeleted,
        summary="Revoke the caller's API key for good.",
        errors=c.REVOKE_ERRORS,
    ),
}
