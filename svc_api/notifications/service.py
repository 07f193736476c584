"""Personal notifications (unread, then read) and platform announcements.

Example:
    >>> from svc_api.accounts.service import register
    >>> with store.write() as conn:
    ...     sid = register(conn, "n@example.com", "password1", ip="::1", ttl=60, now=0).svc_id
    ...     nid = notify(conn, sid, "Done", "Your backtest finished", "backtest_complete", now=100)
    ...     page, more = list_notifications(conn, sid, limit=50)
    >>> [n["title"] for n in page], more
    (['Done'], False)
"""

from __future__ import annotations

import hashlib
from typing import Any

from sqlalchemy.engine import Connection

from svc_api.core.cursors import keyset_page
from svc_api.core.errors import Invalid, NotFound
from svc_api.core.store import Store
from svc_api.notifications import fanout, outbox, outbox_queries, queries
from svc_api.notifications.chats import Buttons, ChatMessage, plain, set_chat_composer
from svc_api.notifications.fanout import register_audience, run_fanouts, start_fanout
from svc_api.notifications.messenger import (
    account_of_chat,
    chat_of_account,
    link_by_code,
    link_chat,
    new_code,
    unlink_chat,
)
from svc_api.notifications.outbox import deliver_due
from svc_api.notifications.transports import BotApi, expire_mail_files, mail_directory, transports_for


def notify(conn: Connection, svc_id: str, title: str, body: str, event_type: str, *, now: int) -> str:
    """Notify ``svc_id`` on every channel of ``event_type`` they allow (see
    :mod:`svc_api.notifications.channels`): the ``app`` record now, the others through the outbox.
    Returns the record's id (deterministic from content and time).

    Example:
        >>> len(_notification_id("AB12CD", "t", "b", "e", 1))
        24
    """
    base = _notification_id(svc_id, title, body, event_type, now)
    nid, n = base, 0
    while queries.notification_exists(conn, nid):
        n += 1
        nid = f"{base[:20]}{n:04d}"
    outbox.enqueue(conn, [svc_id], title, body, event_type, key=nid, now=now, record_ids={svc_id: nid})
    return nid


def notify_many(
    conn: Connection, svc_ids: list[str], title: str, body: str, event_type: str, *, key: str, now: int
) -> int:
    """Notify each of ``svc_ids`` about one event (``key`` names it: a signal's key) on the channels
    each allows, in the caller's transaction; ids derive from the user, the event and its type, so
    the same event twice adds nothing. How many users were reached.

    Example:
        >>> len(_event_id("AB12CD", "sig_1", "signal_opened"))
        24
    """
    return outbox.enqueue(conn, svc_ids, title, body, event_type, key=key, now=now)


Event = outbox.Event


def notify_events(conn: Connection, events: list[Event], *, now: int) -> list[int]:
    """:func:`notify_many` of many events in a few statements for all (a signal pass notifies
    thousands at once); how many users each reached.

    Example:
        >>> with store.write() as conn:
        ...     notify_events(conn, [Event(["NOPE00"], "t", "b", "signal_opened", "sig_1")], now=1)
        [0]
    """
    return outbox.enqueue_events(conn, events, now=now)


def _event_id(svc_id: str, key: str, event_type: str) -> str:
    return outbox.record_id(svc_id, key, event_type)


def _notification_id(svc_id: str, title: str, body: str, event_type: str, now: int) -> str:
    return hashlib.sha256(f"{svc_id}|{now}|{event_type}|{title}|{body}".encode()).hexdigest()[:24]


def list_notifications(
    conn: Connection, svc_id: str, *, limit: int, after: tuple[int, str] | None = None
) -> tuple[list[dict[str, Any]], bool]:
    """Notifications newest first, keyset-paged after ``(timestamp, id)``; returns (page, has_more).

    Example:
        >>> with store.read() as conn:
        ...     list_notifications(conn, "AB12CD", limit=5)
        ([], False)
    """
    rows, more = keyset_page(lambda n: queries.notifications_after(conn, svc_id, limit=n, after=after), limit)
    page = [
        {
            "id": r.id,
            "title": r.title,
            "body": r.body,
            "event_type": r.event_type,
            "timestamp": int(r.created_at),
            "read": r.read_at is not None,
        }
        for r in rows
    ]
    return page, more


def mark_read(conn: Connection, svc_id: str, notification_id: str, *, now: int) -> dict[str, Any]:
    """Mark one notification of ``svc_id`` read (404 when it is not theirs or does not exist).

    Example:
        >>> with store.write() as conn:
        ...     mark_read(conn, "AB12CD", "nope", now=0)
        Traceback (most recent call last):
        ...
        svc_api.core.errors.NotFound: unknown notification 'nope'
    """
    row = queries.read_state(conn, svc_id, notification_id)
    if row is None:
        raise NotFound(f"unknown notification {notification_id!r}")
    if row.read_at is None:
        queries.set_read(conn, notification_id, now=now)
    return {"notification_id": notification_id, "read": True}


def mark_all_read(conn: Connection, svc_id: str, *, now: int) -> dict[str, int]:
    """Mark every unread notification of ``svc_id`` read; returns how many changed.

    Example:
        >>> with store.write() as conn:
        ...     mark_all_read(conn, "AB12CD", now=0)
        {'marked_read': 0}
    """
    return {"marked_read": queries.set_all_read(conn, svc_id, now=now)}


def announce(conn: Connection, title: str, body: str, *, type_: str = "announcement", now: int) -> int:
    """Publish a platform announcement (read by ``platform_notifications``) and deliver it to every
    user whose ``announcement`` switch is on, through a fan-out; returns its id.

    Example:
        >>> with store.write() as conn:
        ...     announce(conn, "Maintenance", "Sunday 02:00 UTC", now=1)
        1
    """
    if not title.strip() or not body.strip():
        raise Invalid("title and body must not be empty")
    announcement_id = queries.insert_announcement(conn, title=title, body=body, type_=type_, now=now)
    fanout.start_fanout(
        conn,
        "everyone",
        "",
        "announcement",
        key=f"announcement-{announcement_id}",
        title=title,
        body=body,
        now=now,
    )
    return announcement_id


def platform_announcements(conn: Connection, *, limit: int) -> list[dict[str, Any]]:
    """The newest ``limit`` announcements as ``{title, body, type, timestamp}``.

    Example:
        >>> with store.read() as conn:
        ...     platform_announcements(conn, limit=20)
        []
    """
    rows = queries.announcements(conn, limit=limit)
    return [{"title": r.title, "body": r.body, "type": r.type, "timestamp": int(r.created_at)} for r in rows]


# ---- use cases of the routes (each in its own transaction) ----------------------------------------


def notifications_page(
    store: Store, svc_id: str, *, limit: int, after: tuple[int, str] | None = None
) -> tuple[list[dict[str, Any]], bool]:
    """:func:`list_notifications` in a read transaction.

    Example:
        >>> notifications_page(store, "AB12CD", limit=5)
        ([], False)
    """
    with store.read() as conn:
        return list_notifications(conn, svc_id, limit=limit, after=after)


def mark_one_read(store: Store, svc_id: str, notification_id: str, *, now: int) -> dict[str, Any]:
    """:func:`mark_read` in a write transaction.

    Example:
        >>> mark_one_read(store, "AB12CD", "nope", now=0)
        Traceback (most recent call last):
        ...
        svc_api.core.errors.NotFound: unknown notification 'nope'
    """
    with store.write() as conn:
        return mark_read(conn, svc_id, notification_id, now=now)


def mark_every_read(store: Store, svc_id: str, *, now: int) -> dict[str, int]:
    """:func:`mark_all_read` in a write transaction.

    Example:
        >>> mark_every_read(store, "AB12CD", now=0)
        {'marked_read': 0}
    """
    with store.write() as conn:
        return mark_all_read(conn, svc_id, now=now)


def latest_announcements(store: Store, *, limit: int) -> list[dict[str, Any]]:
    """:func:`platform_announcements` in a read transaction.

    Example:
        >>> latest_announcements(store, limit=20)
        []
    """
    with store.read() as conn:
        return platform_announcements(conn, limit=limit)


def outbox_counts(store: Store, event_type: str | None = None) -> dict[tuple[str, str], int]:
    """(channel, status) -> outbox rows, of one event type or all (operators and tests).

    Example:
        >>> outbox_counts(store)
        {}
    """
    with store.read() as conn:
        return outbox_queries.outbox_counts(conn, event_type)


__all__ = [
    "BotApi",
    "Buttons",
    "ChatMessage",
    "account_of_chat",
    "announce",
    "chat_of_account",
    "deliver_due",
    "latest_announcements",
    "link_by_code",
    "link_chat",
    "list_notifications",
    "mark_all_read",
    "mark_every_read",
    "mark_one_read",
    "mark_read",
    "new_code",
    "notifications_page",
    "notify",
    "notify_many",
    "outbox_counts",
    "plain",
    "platform_announcements",
    "register_audience",
    "run_fanouts",
    "set_chat_composer",
    "start_fanout",
    "transports_for",
    "unlink_chat",
]


def expire_mail(settings: Any, *, days: float, now: float) -> int:
    """Remove the embedded mail files older than ``days`` (0: keep them); the number removed.

    Example:
        >>> from types import SimpleNamespace
        >>> expire_mail(SimpleNamespace(var_dir="/nonexistent"), days=14, now=10**9)
        0
    """
    if days <= 0:
        return 0
    return expire_mail_files(mail_directory(settings), older_than=now - days * 86_400)
