"""Developer API keys: one active key per user, the secret shown once and stored only as an HMAC.

Example:
    >>> from svc_api.accounts.service import register
    >>> with store.write() as conn:
    ...     sid = register(conn, "d@example.com", "password1", ip="::1", ttl=60, now=0).svc_id
    ...     pair = generate_key(conn, sid, "bot", ["read"], secret_key=b"k" * 32, now=0)
    >>> with store.read() as conn:
    ...     who = authenticate_key(conn, pair["api_key"], pair["api_secret"], secret_key=b"k" * 32, now=0)
    >>> who.svc_id == sid
    True
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from svc_api.accounts.service import effective_plan
from svc_api.core.errors import Forbidden, Invalid
from svc_api.core.fields import text
from svc_api.core.store import Store
from svc_api.keys import queries

SCOPES = ("read", "trade")
MAX_KEYS = 1


class InvalidCredentials(Exception):
    """Key unknown, revoked, or the secret does not match."""


@dataclass(frozen=True)
class KeyIdentity:
    """The owner and permissions of an authenticated key.

    Example:
        >>> KeyIdentity("AB12CD", ("read",)).plan
        'free'
    """

    svc_id: str
    permissions: tuple[str, ...]
    plan: str = "free"


def secret_hash(api_key: str, api_secret: str, *, secret_key: bytes) -> str:
    """HMAC-SHA256 of the key's secret under the server secret (bound to the key id).

    Example:
        >>> len(secret_hash("svk_x", "s", secret_key=b"k"))
        64
    """
    return hmac.digest(secret_key, f"{api_key}:{api_secret}".encode(), hashlib.sha256).hex()


def generate_key(
    conn: Connection,
    svc_id: str,
    label: str,
    scopes: list[str],
    *,
    secret_key: bytes,
    now: int,
) -> dict[str, str]:
    """Create the user's key with a checked ``label`` (:func:`label_of`) and ``scopes``
    (:func:`scopes_of`); returns ``{api_key, api_secret}`` (the only time the secret is seen).

    Raises:
        Invalid: a key already exists.

    Example:
        >>> from svc_api.accounts.service import register
        >>> with store.write() as conn:
        ...     sid = register(conn, "g@example.com", "password1", ip="::1", ttl=60, now=0).svc_id
        ...     sorted(generate_key(conn, sid, "bot", ["read"], secret_key=b"k", now=0))
        ['api_key', 'api_secret']
    """
    if queries.active_key(conn, svc_id) is not None:
        raise Invalid("an API key already exists; revoke it before generating a new one")
    api_key = "svk_" + secrets.token_hex(16)
    api_secret = secrets.token_urlsafe(32)
    try:
        with conn.begin_nested():
            queries.insert_key(
                conn,
                api_key=api_key,
                svc_id=svc_id,
                active_owner=svc_id,
                secret_hash=secret_hash(api_key, api_secret, secret_key=secret_key),
                label=label,
                permissions=",".join(scopes),
                created_at=now,
            )
    except sa.exc.IntegrityError:
        raise Invalid("an API key already exists; revoke it before generating a new one") from None
    return {"api_key": api_key, "api_secret": api_secret}


def key_status(conn: Connection, svc_id: str) -> dict[str, Any]:
    """``{has_key, key, max_keys}`` for the user's active key (never the secret).

    Example:
        >>> with store.read() as conn:
        ...     key_status(conn, "AB12CD")
        {'has_key': False, 'key': None, 'max_keys': 1}
    """
    row = queries.active_key(conn, svc_id)
    key = None
    if row is not None:
        key = {
            "api_key": row.api_key,
            "label": row.label,
            "permissions": row.permissions.split(",") if row.permissions else [],
            "created_at": int(row.created_at),
        }
    return {"has_key": key is not None, "key": key, "max_keys": MAX_KEYS}


def revoke_key(conn: Connection, svc_id: str, api_key_id: str, *, now: int) -> dict[str, bool]:
    """Revoke the user's key at once and for good.

    Raises:
        Forbidden: no such active key of this user.

    Example:
        >>> with store.write() as conn:
        ...     revoke_key(conn, "AB12CD", "svk_unknown", now=0)
        Traceback (most recent call last):
        ...
        svc_api.core.errors.Forbidden: API key not found or not owned by the caller
    """
    if queries.revoke(conn, svc_id, api_key_id, now=now) == 0:
        raise Forbidden("API key not found or not owned by the caller")
    return {"deleted": True}


def authenticate_key(
    conn: Connection, api_key: str, api_secret: str, *, secret_key: bytes, now: int
) -> KeyIdentity:
    """The owner of an active key whose secret matches, compared in constant time.

    Raises:
        InvalidCredentials: unknown, revoked or mismatching.

    Example:
        >>> with store.read() as conn:
        ...     authenticate_key(conn, "svk_x", "y", secret_key=b"k", now=0)
        Traceback (most recent call last):
        ...
        svc_api.keys.service.InvalidCredentials: invalid API key or secret
    """
    row = queries.key_with_owner(conn, api_key)
    candidate = secret_hash(api_key, api_secret, secret_key=secret_key)
    if row is None or not hmac.compare_digest(candidate, row.secret_hash):
        raise InvalidCredentials("invalid API key or secret")
    plan = effective_plan(
        row.plan, license_expires_at=row.license_expires_at, demo_expires_at=row.demo_expires_at, now=now
    )
    return KeyIdentity(str(row.svc_id), tuple(p for p in row.permissions.split(",") if p), plan)


def label_of(value: object, name: str = "label") -> str:
    """A key's label: a string of 1-64 characters; else 400.

    Example:
        >>> label_of("")
        Traceback (most recent call last):
        ...
        svc_api.core.errors.Invalid: label must be a string of 1-64 characters
    """
    return text(value, name, hi=64) or ""


def scopes_of(permissions: object, name: str = "permissions") -> list[str]:
    """A key's scopes: an array of ``read``/``trade`` (``read`` when absent or empty); else 400.

    Example:
        >>> scopes_of(["trade", "read"]), scopes_of(None)
        (['read', 'trade'], ['read'])
        >>> scopes_of(["fly"])
        Traceback (most recent call last):
        ...
        svc_api.core.errors.Invalid: unknown permission(s): fly; allowed: read, trade
    """
    if permissions is None:
        return ["read"]
    if not isinstance(permissions, list) or not all(isinstance(p, str) for p in permissions):
        raise Invalid("permissions must be an array of strings")
    unknown = sorted(set(permissions) - set(SCOPES))
    if unknown:
        raise Invalid(f"unknown permission(s): {', '.join(unknown)}; allowed: {', '.join(SCOPES)}")
    return sorted(set(permissions), key=SCOPES.index) or ["read"]


# ---- use cases of the routes (each in its own transaction) ----------------------------------------


def generate(
    store: Store, svc_id: str, label: str, scopes: list[str], *, secret_key: bytes, now: int
) -> dict[str, str]:
    """:func:`generate_key` in a write transaction.

    Example:
        >>> from svc_api.accounts.service import register
        >>> with store.write() as conn:
        ...     sid = register(conn, "h@example.com", "password1", ip="::1", ttl=60, now=0).svc_id
        >>> _ = generate(store, sid, "bot", ["read"], secret_key=b"k", now=0)
        >>> generate(store, sid, "bot", ["read"], secret_key=b"k", now=0)
        Traceback (most recent call last):
        ...
        svc_api.core.errors.Invalid: an API key already exists; revoke it before generating a new one
    """
    with store.write() as conn:
        return generate_key(conn, svc_id, label, scopes, secret_key=secret_key, now=now)


def status(store: Store, svc_id: str) -> dict[str, Any]:
    """:func:`key_status` in a read transaction.

    Example:
        >>> status(store, "AB12CD")["has_key"]
        False
    """
    with store.read() as conn:
        return key_status(conn, svc_id)


def revoke(store: Store, svc_id: str, api_key_id: str, *, now: int) -> dict[str, bool]:
    """:func:`revoke_key` in a write transaction.

    Example:
        >>> revoke(store, "AB12CD", "svk_unknown", now=0)
        Traceback (most recent call last):
        ...
        svc_api.core.errors.Forbidden: API key not found or not owned by the caller
    """
    with store.write() as conn:
        return revoke_key(conn, svc_id, api_key_id, now=now)
