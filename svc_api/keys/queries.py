"""Every SQL statement of the API keys domain, one small function each. They join the caller's
transaction and hold no rules. The example runs each of them.

Example:
    >>> from svc_api.accounts.service import register
    >>> with store.write() as conn:
    ...     sid = register(conn, "k@example.com", "password1", ip="::1", ttl=60, now=0).svc_id
    ...     insert_key(conn, api_key="svk_1", svc_id=sid, active_owner=sid, secret_hash="h", label="bot",
    ...                permissions="read", created_at=1)
    ...     active_key(conn, sid).label, key_with_owner(conn, "svk_1").plan
    ...     revoke(conn, sid, "svk_1", now=2), revoke(conn, sid, "svk_1", now=3)
    ...     active_key(conn, sid), key_with_owner(conn, "svk_1")
    ('bot', 'free')
    (1, 0)
    (None, None)
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Row

from svc_api.accounts.service import ACCOUNTS as accounts
from svc_api.core.prepared import Prepared
from svc_api.keys.tables import api_keys

_k = api_keys.c


def active_key(conn: Connection, svc_id: str) -> Row[Any] | None:
    """The row of the user's active key, or None."""
    return conn.execute(sa.select(api_keys).where(_k.active_owner == svc_id)).first()


def insert_key(conn: Connection, **values: Any) -> None:
    """Store a new active key (the unique ``active_owner`` refuses a second one)."""
    conn.execute(api_keys.insert().values(**values))


def revoke(conn: Connection, svc_id: str, api_key: str, *, now: int) -> int:
    """Revoke the user's active key ``api_key``; returns how many rows changed (0 or 1)."""
    result = conn.execute(
        api_keys.update()
        .where(_k.api_key == api_key, _k.active_owner == svc_id)
        .values(active_owner=None, revoked_at=now)
    )
    return int(result.rowcount)


# Built once: constructing a select costs more than running it, and this runs on every request.
_KEY_LOOKUP = Prepared(
    sa.select(
        _k.svc_id,
        _k.secret_hash,
        _k.permissions,
        accounts.c.plan,
        accounts.c.license_expires_at,
        accounts.c.demo_expires_at,
    )
    .join(accounts, accounts.c.svc_id == _k.svc_id)
    .where(_k.api_key == sa.bindparam("api_key"), _k.revoked_at.is_(None))
)


def key_with_owner(conn: Connection, api_key: str) -> Row[Any] | None:
    """Owner, secret hash, permissions and the owner's plan columns of an unrevoked key."""
    return _KEY_LOOKUP.first(conn, {"api_key": api_key})
