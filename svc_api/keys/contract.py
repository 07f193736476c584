"""The request and reply models of the developer API key operations (``/user``).

Example:
    >>> KeyGenerate.model_validate({"label": "bot"}).permissions
    ['read']
"""

from __future__ import annotations

from typing import Annotated, Literal

from svc_api.core.contract import Check, ErrorDoc, Fields, Shape
from svc_api.core.errors import Invalid
from svc_api.keys.service import SCOPES, label_of, scopes_of


def _key_id(value: object, name: str) -> str:
    if not isinstance(value, str) or not value:
        raise Invalid(f"{name} is required")
    return value


class KeyGenerate(Fields):
    """``api_key_generate``: the caller's one key, with a label and its scopes."""

    label: Annotated[str, Check(label_of, {"type": "string", "minLength": 1, "maxLength": 64}, required=True)]
    permissions: Annotated[
        list[str],
        Check(
            scopes_of,
            {
                "type": "array",
                "items": {"type": "string", "enum": list(SCOPES)},
                "default": ["read"],
                "description": "The key's scopes (`read` when absent or empty).",
            },
        ),
    ]


class KeyRevoke(Fields):
    """``api_key_revoke``: the caller's key, for good."""

    api_key_id: Annotated[str, Check(_key_id, {"type": "string", "minLength": 1}, required=True)]
    """The ``api_key`` of the caller's key."""


class ApiKeyCreated(Shape):
    """The new key and its secret."""

    api_key: str
    api_secret: str
    """Shown once only."""


class ApiKeyRecord(Shape):
    """The caller's key (never its secret)."""

    api_key: str
    label: str
    permissions: list[str]
    created_at: int
    """Unix seconds."""


class ApiKeyStatus(Shape):
    """Whether the caller has a key, and which."""

    has_key: bool
    key: ApiKeyRecord | None
    max_keys: Literal[1]


class ApiKeyDeleted(Shape):
    """The key is revoked."""

    deleted: Literal[True]


GENERATE_ERRORS = (
    ErrorDoc(
        400, "invalid_request", "a label not 1-64 characters, an unknown permission, or a key exists already"
    ),
)
REVOKE_ERRORS = (ErrorDoc(403, "forbidden", "no active key of the caller has this `api_key_id`"),)
