"""Every SQL statement of the rate-limit overrides.

Example:
    >>> with store.read() as conn:
    ...     all_overrides(conn)
    []
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from svc_api.limits.tables import rate_limit_overrides as t


def put(conn: Connection, values: dict[str, Any]) -> None:
    """Insert or replace the override of (svc_id, endpoint)."""
    key = (t.c.svc_id == values["svc_id"]) & (t.c.endpoint == values["endpoint"])
    conn.execute(t.delete().where(key))
    conn.execute(t.insert().values(**values))


def delete(conn: Connection, svc_id: str, endpoint: str | None) -> int:
    """Remove one override of an account (or all of them when ``endpoint`` is None); how many."""
    where = t.c.svc_id == svc_id
    if endpoint is not None:
        where = where & (t.c.endpoint == endpoint)
    return int(conn.execute(t.delete().where(where)).rowcount)


def of_account(conn: Connection, svc_id: str) -> list[Any]:
    return list(conn.execute(sa.select(t).where(t.c.svc_id == svc_id).order_by(t.c.endpoint)))


def all_overrides(conn: Connection) -> list[tuple[str, str, int]]:
    """Every (svc_id, endpoint, per_minute): a small table, read whole by the limiter's cache."""
    rows = conn.execute(sa.select(t.c.svc_id, t.c.endpoint, t.c.per_minute))
    return [(r.svc_id, r.endpoint, int(r.per_minute)) for r in rows]
