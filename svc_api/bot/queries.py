"""Every SQL statement of the messenger bot.

Example:
    >>> with store.write() as conn:
    ...     claim_update(conn, 7, now=1), claim_update(conn, 7, now=2)
    (True, False)
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Row

from svc_api.bot.tables import callbacks, deletions, login_codes, orders, preferences, updates
from svc_api.core.upsert import inserted

# ---- updates: each update_id acts once ------------------------------------------------------------


def claim_update(conn: Connection, update_id: int, *, now: int) -> bool:
    """Record a polled update as handled; False when it was seen before (a replay)."""
    values = {"update_id": update_id, "received_at": now, "done_at": now}
    return inserted(conn, updates, values)


def queue_update(conn: Connection, update_id: int, payload: str, *, now: int) -> bool:
    """Keep a webhook update for the worker; False when that update_id was received before."""
    values = {"update_id": update_id, "payload": payload, "received_at": now}
    return inserted(conn, updates, values)


def take_queued(conn: Connection, *, now: int, limit: int) -> list[Row[Any]]:
    """Claim the oldest waiting webhook updates (each is taken by one worker once)."""
    u = updates.c
    rows = list(
        conn.execute(
            sa.select(u.update_id, u.payload)
            .where(u.done_at.is_(None))
            .order_by(u.update_id)
            .limit(limit)
            .with_for_update(skip_locked=True)
        )
    )
    if rows:
        ids = [r.update_id for r in rows]
        conn.execute(updates.update().where(u.update_id.in_(ids)).values(done_at=now, payload=None))
    return rows


def forget_updates(conn: Connection, *, before: int) -> int:
    """Drop handled updates received before ``before`` (the Bot API keeps an update 24 h at most)."""
    u = updates.c
    done = conn.execute(updates.delete().where(u.done_at.is_not(None), u.received_at < before))
    return int(done.rowcount or 0)


# ---- callback tokens -----------------------------------------------------------------------------


def add_callback(conn: Connection, **values: Any) -> None:
    """One opaque callback token."""
    conn.execute(callbacks.insert().values(**values))


def callback(conn: Connection, token: str) -> Row[Any] | None:
    """The callback of ``token``."""
    return conn.execute(sa.select(callbacks).where(callbacks.c.token == token)).first()


def drop_callbacks(conn: Connection, *, chat_id: str | None = None, before: int | None = None) -> None:
    """Forget the tokens of a chat (unlinked) or those expired before ``before``."""
    if chat_id is not None:
        conn.execute(callbacks.delete().where(callbacks.c.chat_id == chat_id))
    if before is not None:
        conn.execute(callbacks.delete().where(callbacks.c.expires_at < before))


# ---- preferences ---------------------------------------------------------------------------------


def preferences_of(conn: Connection, svc_ids: list[str]) -> dict[str, Row[Any]]:
    """The stored preferences of each of ``svc_ids`` that has some."""
    query = sa.select(preferences).where(preferences.c.svc_id.in_(svc_ids))
    return {str(r.svc_id): r for r in conn.execute(query)}


def set_preferences(conn: Connection, svc_id: str, values: dict[str, Any]) -> None:
    """Change (or create) the preferences of ``svc_id``."""
    done = conn.execute(preferences.update().where(preferences.c.svc_id == svc_id).values(**values))
    if done.rowcount == 0:
        conn.execute(preferences.insert().values(svc_id=svc_id, **values))


# ---- secret messages to delete -------------------------------------------------------------------


def schedule_deletion(conn: Connection, chat_id: str, message_id: int, *, at: int) -> None:
    """Delete that message at ``at``."""
    inserted(conn, deletions, {"chat_id": chat_id, "message_id": message_id, "delete_at": at})


def due_deletions(conn: Connection, *, now: int, limit: int = 100) -> list[Row[Any]]:
    """Messages whose time has come."""
    query = sa.select(deletions).where(deletions.c.delete_at <= now).order_by(deletions.c.delete_at)
    return list(conn.execute(query.limit(limit)))


def deleted(conn: Connection, chat_id: str, message_id: int) -> None:
    """A message is gone."""
    d = deletions.c
    conn.execute(deletions.delete().where(d.chat_id == chat_id, d.message_id == message_id))


# ---- orders followed -----------------------------------------------------------------------------


def follow_order(conn: Connection, **values: Any) -> None:
    """Follow an order still ``processing`` (once per key)."""
    inserted(conn, orders, values)


def open_orders(conn: Connection, *, limit: int = 100) -> list[Row[Any]]:
    """Orders followed and not settled yet, oldest first."""
    query = sa.select(orders).where(orders.c.done_at.is_(None)).order_by(orders.c.created_at)
    return list(conn.execute(query.limit(limit)))


def order_done(conn: Connection, svc_id: str, key: str, *, now: int) -> None:
    """An order followed has settled."""
    o = orders.c
    conn.execute(orders.update().where(o.svc_id == svc_id, o.idempotency_key == key).values(done_at=now))


# ---- app login codes -----------------------------------------------------------------------------


def add_login_code(conn: Connection, **values: Any) -> None:
    """One one-time login code (its hash)."""
    conn.execute(login_codes.insert().values(**values))


def use_login_code(conn: Connection, code_hash: str, *, now: int) -> str | None:
    """Spend an unexpired, unused login code; the account it opens (None otherwise)."""
    c = login_codes.c
    row = conn.execute(
        sa.select(c.svc_id).where(c.code_hash == code_hash, c.used_at.is_(None), c.expires_at > now)
    ).first()
    if row is None:
        return None
    spent = conn.execute(
        login_codes.update().where(c.code_hash == code_hash, c.used_at.is_(None)).values(used_at=now)
    )
    return str(row.svc_id) if spent.rowcount == 1 else None
