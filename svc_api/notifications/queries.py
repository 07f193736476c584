"""Every SQL statement of the notifications domain, one small function each. They join the caller's
transaction and hold no rules (the service decides what a missing row means). The example runs each of them.

Example:
    >>> from svc_api.accounts.service import register
    >>> with store.write() as conn:
    ...     sid = register(conn, "q@example.com", "password1", ip="::1", ttl=60, now=0).svc_id
    ...     insert_notification(conn, id="n1", svc_id=sid, title="Hi", body="b", event_type="e", created_at=5)
    ...     notification_exists(conn, "n1"), read_state(conn, sid, "n1").read_at, read_state(conn, "X", "n1")
    ...     set_read(conn, "n1", now=6); set_all_read(conn, sid, now=7)
    ...     [(r.id, r.read_at) for r in notifications_after(conn, sid, limit=5, after=None)]
    ...     notifications_after(conn, sid, limit=5, after=(5, "n1"))
    ...     insert_announcement(conn, title="Up", body="b", type_="announcement", now=1)
    ...     [r.title for r in announcements(conn, limit=5)]
    (True, None, None)
    0
    [('n1', 6)]
    []
    1
    ['Up']
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Row

from svc_api.notifications.tables import notifications, platform_notifications

_n = notifications.c
_p = platform_notifications.c


def notification_exists(conn: Connection, notification_id: str) -> bool:
    """True when a notification of any user has this id."""
    return conn.execute(sa.select(_n.id).where(_n.id == notification_id)).first() is not None


def insert_notification(conn: Connection, **values: Any) -> None:
    """Store one personal notification (``id, svc_id, title, body, event_type, created_at``)."""
    conn.execute(notifications.insert().values(**values))


def notifications_after(
    conn: Connection, svc_id: str, *, limit: int, after: tuple[int, str] | None
) -> list[Row[Any]]:
    """Up to ``limit`` notifications of ``svc_id``, newest first, after ``(created_at, id)``."""
    query = sa.select(notifications).where(_n.svc_id == svc_id)
    if after is not None:
        at, nid = after
        query = query.where(sa.or_(_n.created_at < at, sa.and_(_n.created_at == at, _n.id < nid)))
    return list(conn.execute(query.order_by(_n.created_at.desc(), _n.id.desc()).limit(limit)))


def read_state(conn: Connection, svc_id: str, notification_id: str) -> Row[Any] | None:
    """``(read_at,)`` of a notification of ``svc_id``; None when it is not theirs or does not exist."""
    return conn.execute(sa.select(_n.read_at).where(_n.id == notification_id, _n.svc_id == svc_id)).first()


def set_read(conn: Connection, notification_id: str, *, now: int) -> None:
    """Mark one notification read at ``now``."""
    conn.execute(notifications.update().where(_n.id == notification_id).values(read_at=now))


def set_all_read(conn: Connection, svc_id: str, *, now: int) -> int:
    """Mark every unread notification of ``svc_id`` read; returns how many changed."""
    result = conn.execute(
        notifications.update().where(_n.svc_id == svc_id, _n.read_at.is_(None)).values(read_at=now)
    )
    return int(result.rowcount)


def insert_announcement(conn: Connection, *, title: str, body: str, type_: str, now: int) -> int:
    """Store a platform announcement; returns its id."""
    result = conn.execute(
        platform_notifications.insert().values(title=title, body=body, type=type_, created_at=now)
    )
    return int(result.inserted_primary_key[0])


def announcements(conn: Connection, *, limit: int) -> list[Row[Any]]:
    """The newest ``limit`` platform announcements."""
    query = sa.select(platform_notifications).order_by(_p.created_at.desc(), _p.id.desc()).limit(limit)
    return list(conn.execute(query))


def insert_notifications(conn: Connection, rows: list[dict[str, Any]]) -> None:
    """Store many personal notifications at once."""
    if rows:
        conn.execute(notifications.insert(), rows)
