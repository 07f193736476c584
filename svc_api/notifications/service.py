"""Personal notifications (unread, then read) and platform announcements.

Example:
    >>> from svc_api.core.store import Store
    >>> from svc_api.migrations import migrate
    >>> from svc_api.accounts.identity import register
    >>> store = Store("sqlite:///:memory:"); _ = migrate(store)
    >>> with store.write() as conn:
    ...     sid = register(conn, "n@example.com", "password1", ip="::1", ttl=60).svc_id
    ...     nid = notify(conn, sid, "Done", "Your backtest finished", "backtest_complete", now=100)
    ...     page, more = list_notifications(conn, sid, limit=50)
    >>> [n["title"] for n in page], more
    (['Done'], False)
"""

from __future__ import annotations

import hashlib
import time
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from svc_api.core.errors import Invalid, NotFound
from svc_api.notifications.tables import notifications, platform_notifications


def notify(
    conn: Connection, svc_id: str, title: str, body: str, event_type: str, *, now: int | None = None
) -> str:
    """Record a notification for ``svc_id``; returns its id (deterministic from content and time).

    Example:
        >>> len(_notification_id("AB12CD", "t", "b", "e", 1))
        24
    """
    now = int(time.time()) if now is None else now
    base = _notification_id(svc_id, title, body, event_type, now)
    nid, n = base, 0
    while conn.execute(sa.select(notifications.c.id).where(notifications.c.id == nid)).first():
        n += 1
        nid = f"{base[:20]}{n:04d}"
    conn.execute(
        notifications.insert().values(
            id=nid, svc_id=svc_id, title=title, body=body, event_type=event_type, created_at=now
        )
    )
    return nid


def _notification_id(svc_id: str, title: str, body: str, event_type: str, now: int) -> str:
    return hashlib.sha256(f"{svc_id}|{now}|{event_type}|{title}|{body}".encode()).hexdigest()[:24]


def list_notifications(
    conn: Connection, svc_id: str, *, limit: int, after: tuple[int, str] | None = None
) -> tuple[list[dict[str, Any]], bool]:
    """Notifications newest first, keyset-paged after ``(timestamp, id)``; returns (page, has_more).

    Example:
        >>> from svc_api.core.store import Store
        >>> from svc_api.migrations import migrate
        >>> store = Store("sqlite:///:memory:"); _ = migrate(store)
        >>> with store.read() as conn:
        ...     list_notifications(conn, "AB12CD", limit=5)
        ([], False)
    """
    n = notifications.c
    query = sa.select(notifications).where(n.svc_id == svc_id)
    if after is not None:
        at, nid = after
        query = query.where(sa.or_(n.created_at < at, sa.and_(n.created_at == at, n.id < nid)))
    rows = conn.execute(query.order_by(n.created_at.desc(), n.id.desc()).limit(limit + 1)).all()
    page = [
        {
            "id": r.id,
            "title": r.title,
            "body": r.body,
            "event_type": r.event_type,
            "timestamp": int(r.created_at),
            "read": r.read_at is not None,
        }
        for r in rows[:limit]
    ]
    return page, len(rows) > limit


def mark_read(
    conn: Connection, svc_id: str, notification_id: str, *, now: int | None = None
) -> dict[str, Any]:
    """Mark one notification of ``svc_id`` read (404 when it is not theirs or does not exist).

    Example:
        >>> from svc_api.core.store import Store
        >>> from svc_api.migrations import migrate
        >>> store = Store("sqlite:///:memory:"); _ = migrate(store)
        >>> with store.write() as conn:
        ...     mark_read(conn, "AB12CD", "nope")
        Traceback (most recent call last):
        ...
        svc_api.core.errors.NotFound: unknown notification 'nope'
    """
    now = int(time.time()) if now is None else now
    n = notifications.c
    row = conn.execute(sa.select(n.read_at).where(n.id == notification_id, n.svc_id == svc_id)).first()
    if row is None:
        raise NotFound(f"unknown notification {notification_id!r}")
    if row.read_at is None:
        conn.execute(notifications.update().where(n.id == notification_id).values(read_at=now))
    return {"notification_id": notification_id, "read": True}


def mark_all_read(conn: Connection, svc_id: str, *, now: int | None = None) -> dict[str, int]:
    """Mark every unread notification of ``svc_id`` read; returns how many changed.

    Example:
        >>> from svc_api.core.store import Store
        >>> from svc_api.migrations import migrate
        >>> store = Store("sqlite:///:memory:"); _ = migrate(store)
        >>> with store.write() as conn:
        ...     mark_all_read(conn, "AB12CD")
        {'marked_read': 0}
    """
    now = int(time.time()) if now is None else now
    n = notifications.c
    result = conn.execute(
        notifications.update().where(n.svc_id == svc_id, n.read_at.is_(None)).values(read_at=now)
    )
    return {"marked_read": int(result.rowcount)}


def announce(
    conn: Connection, title: str, body: str, *, type_: str = "announcement", now: int | None = None
) -> int:
    """Publish a platform announcement; returns its id.

    Example:
        >>> from svc_api.core.store import Store
        >>> from svc_api.migrations import migrate
        >>> store = Store("sqlite:///:memory:"); _ = migrate(store)
        >>> with store.write() as conn:
        ...     announce(conn, "Maintenance", "Sunday 02:00 UTC", now=1)
        1
    """
    if not title.strip() or not body.strip():
        raise Invalid("title and body must not be empty")
    now = int(time.time()) if now is None else now
    result = conn.execute(
        platform_notifications.insert().values(title=title, body=body, type=type_, created_at=now)
    )
    return int(result.inserted_primary_key[0])


def platform_announcements(conn: Connection, *, limit: int) -> list[dict[str, Any]]:
    """The newest ``limit`` announcements as ``{title, body, type, timestamp}``.

    Example:
        >>> from svc_api.core.store import Store
        >>> from svc_api.migrations import migrate
        >>> store = Store("sqlite:///:memory:"); _ = migrate(store)
        >>> with store.read() as conn:
        ...     platform_announcements(conn, limit=20)
        []
    """
    p = platform_notifications.c
    rows = conn.execute(
        sa.select(platform_notifications).order_by(p.created_at.desc(), p.id.desc()).limit(limit)
    )
    return [{"title": r.title, "body": r.body, "type": r.type, "timestamp": int(r.created_at)} for r in rows]
