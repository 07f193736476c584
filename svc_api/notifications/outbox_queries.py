"""SQL of the delivery outbox, the fan-outs and the messenger links.

Example:
    >>> with store.write() as conn:
    ...     claim_due(conn, now=10, limit=5, lease=60), open_fanout(conn), chat_ids(conn, ["AB12CD"])
    ([], None, {})
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Row

from svc_api.core.bulk import insert_rows
from svc_api.core.upsert import insert_new
from svc_api.notifications.tables import (
    bot_state,
    fanouts,
    messenger_codes,
    messenger_links,
    notifications,
    outbox,
)

_o = outbox.c


def insert_records(conn: Connection, rows: list[dict[str, Any]]) -> None:
    """Notification records, skipping ids that exist (a fan-out batch run again)."""
    insert_rows(conn, notifications, rows, skip_existing=True)


def insert_outbox(conn: Connection, rows: list[dict[str, Any]]) -> None:
    """Outbox rows, skipping ids that exist."""
    insert_rows(conn, outbox, rows, skip_existing=True)


def claim_due(conn: Connection, *, now: int, limit: int, lease: int) -> list[Row[Any]]:
    """Claim up to ``limit`` pending rows that are due and not claimed by another worker: they are
    this worker's for ``lease`` seconds (after a crash, another worker takes them up)."""
    query = (
        sa.select(outbox)
        .where(_o.status == "pending", _o.next_attempt_at <= now, _o.claimed_until <= now)
        .order_by(_o.next_attempt_at, _o.id)
        .limit(limit)
        .with_for_update(skip_locked=True)
    )
    rows = list(conn.execute(query))
    if rows:
        claim = outbox.update().where(_o.id.in_([r.id for r in rows])).values(claimed_until=now + lease)
        conn.execute(claim)
    return rows


def mark_sent(conn: Connection, ids: list[str], now: int, *, status: str = "sent") -> None:
    """Rows delivered (or, ``skipped``, deliberately not sent)."""
    if ids:
        conn.execute(
            outbox.update().where(_o.id.in_(ids)).values(status=status, sent_at=now, claimed_until=0)
        )


def mark_failed(
    conn: Connection, row_id: str, *, attempts: int, status: str, retry_at: int, error: str
) -> None:
    """A failed attempt: scheduled again at ``retry_at`` or given up (``status`` ``failed``)."""
    conn.execute(
        outbox.update()
        .where(_o.id == row_id)
        .values(
            attempts=attempts,
            status=status,
            next_attempt_at=retry_at,
            last_error=error[:500],
            claimed_until=0,
        )
    )


def outbox_counts(conn: Connection, event_type: str | None = None) -> dict[tuple[str, str], int]:
    """(channel, status) -> rows, of one event type or all."""
    query = sa.select(_o.channel, _o.status, sa.func.count()).group_by(_o.channel, _o.status)
    if event_type is not None:
        query = query.where(_o.event_type == event_type)
    return {(c, s): int(n) for c, s, n in conn.execute(query)}


# ---- fan-outs ------------------------------------------------------------------------------------


def insert_fanout(conn: Connection, **values: Any) -> None:
    """A fan-out (skipped when one of the same id exists)."""
    conn.execute(insert_new(conn, fanouts).values(**values))


def open_fanout(conn: Connection) -> Row[Any] | None:
    """The oldest unfinished fan-out no other worker holds."""
    query = (
        sa.select(fanouts)
        .where(fanouts.c.done_at.is_(None))
        .order_by(fanouts.c.created_at, fanouts.c.id)
        .limit(1)
        .with_for_update(skip_locked=True)
    )
    return conn.execute(query).first()


def advance_fanout(
    conn: Connection, fanout_id: str, *, position: str | None, added: int, done_at: int | None
) -> None:
    """Move a fan-out past ``position`` (and close it when ``done_at`` is set)."""
    conn.execute(
        fanouts.update()
        .where(fanouts.c.id == fanout_id)
        .values(position=position, delivered=fanouts.c.delivered + added, done_at=done_at)
    )


# ---- messenger links -----------------------------------------------------------------------------


def chat_ids(conn: Connection, svc_ids: list[str]) -> dict[str, str]:
    """The linked messenger chat of each of ``svc_ids`` that has one."""
    query = sa.select(messenger_links.c.svc_id, messenger_links.c.chat_id).where(
        messenger_links.c.svc_id.in_(svc_ids)
    )
    return {str(s): str(c) for s, c in conn.execute(query)}


def insert_code(conn: Connection, **values: Any) -> None:
    """A one-time link code."""
    conn.execute(messenger_codes.insert().values(**values))


def use_code(conn: Connection, code: str, now: int) -> str | None:
    """Spend an unexpired, unused code; the account it links (None when it cannot be used)."""
    c = messenger_codes.c
    row = conn.execute(
        sa.select(c.svc_id).where(c.code == code, c.used_at.is_(None), c.expires_at > now)
    ).first()
    if row is None:
        return None
    spent = conn.execute(
        messenger_codes.update().where(c.code == code, c.used_at.is_(None)).values(used_at=now)
    )
    return str(row.svc_id) if spent.rowcount == 1 else None


def link_chat(conn: Connection, svc_id: str, chat_id: str, now: int) -> None:
    """Link (or re-link) the messenger chat of ``svc_id`` (one chat per account, one account per chat)."""
    m = messenger_links.c
    conn.execute(messenger_links.delete().where(sa.or_(m.svc_id == svc_id, m.chat_id == chat_id)))
    conn.execute(messenger_links.insert().values(svc_id=svc_id, chat_id=chat_id, linked_at=now))


def account_of_chat(conn: Connection, chat_id: str) -> str | None:
    """The account linked to ``chat_id``."""
    m = messenger_links.c
    value = conn.execute(sa.select(m.svc_id).where(m.chat_id == chat_id)).scalar()
    return None if value is None else str(value)


def unlink_chat(conn: Connection, chat_id: str) -> str | None:
    """Remove the link of ``chat_id``; the account it was linked to."""
    svc_id = account_of_chat(conn, chat_id)
    if svc_id is not None:
        conn.execute(messenger_links.delete().where(messenger_links.c.chat_id == chat_id))
    return svc_id


def bot_offset(conn: Connection, bot: str) -> int:
    """The next update offset of ``bot`` (0 at first)."""
    value = conn.execute(sa.select(bot_state.c.next_offset).where(bot_state.c.bot == bot)).scalar()
    return int(value or 0)


def set_bot_offset(conn: Connection, bot: str, offset: int) -> None:
    """Remember the next update offset of ``bot``."""
    done = conn.execute(bot_state.update().where(bot_state.c.bot == bot).values(next_offset=offset))
    if done.rowcount == 0:
        conn.execute(bot_state.insert().values(bot=bot, next_offset=offset))
