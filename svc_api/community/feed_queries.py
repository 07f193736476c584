"""SQL of the chat and of posts with their likes, comments and reports.

Example:
    >>> with store.read() as conn:
    ...     post(conn, "nope") is None, chat_message(conn, "global", "1#1_AB12CD") is None
    (True, True)
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Row

from svc_api.community.tables import chat, comments, likes, posts, reports
from svc_api.core.prepared import Prepared
from svc_api.core.upsert import inserted

# ---- chat ----------------------------------------------------------------------------------------


def insert_chat(conn: Connection, **values: Any) -> bool:
    """Add a chat message; False when its key exists (the same author in the same second)."""
    return inserted(conn, chat, values, ["channel", "sort_key"])


def chat_message(conn: Connection, channel: str, sort_key: str) -> Row[Any] | None:
    """One message of ``channel``."""
    query = sa.select(chat).where(chat.c.channel == channel, chat.c.sort_key == sort_key)
    return conn.execute(query).first()


def soft_delete_chat(conn: Connection, channel: str, sort_key: str, deleted_by: str) -> None:
    """Mark a message deleted (the row stays)."""
    conn.execute(
        chat.update()
        .where(chat.c.channel == channel, chat.c.sort_key == sort_key, chat.c.deleted_by.is_(None))
        .values(deleted_by=deleted_by)
    )


def chat_before(conn: Connection, channel: str, *, limit: int, before: tuple[int, str] | None) -> list[Any]:
    """Messages of ``channel`` newest first, older than ``(created_at, msg_id)``."""
    params: dict[str, Any] = {"channel": channel, "limit": limit}
    if before is not None:
        params.update(t=before[0], k=before[1])
    return _CHAT[before is not None].all(conn, params)


def _chat_page(before: bool) -> Prepared:
    query = sa.select(chat).where(chat.c.channel == sa.bindparam("channel"))
    if before:
        query = query.where(sa.tuple_(chat.c.created_at, chat.c.msg_id) < sa.tuple_(_T, _K))
    return Prepared(query.order_by(chat.c.created_at.desc(), chat.c.msg_id.desc()).limit(_LIMIT))


_T, _K, _LIMIT = sa.bindparam("t"), sa.bindparam("k"), sa.bindparam("limit")
# The first page and the pages after a position of the chat and of the feed, compiled once: the two
# public reads of the community skip SQLAlchemy's per-call statement building.
_CHAT = {before: _chat_page(before) for before in (False, True)}


# ---- posts ---------------------------------------------------------------------------------------


def insert_post(conn: Connection, **values: Any) -> None:
    """A new post."""
    conn.execute(posts.insert().values(**values))


def post(conn: Connection, post_id: str, *, lock: bool = False) -> Row[Any] | None:
    """One post, hidden or not (``lock``: for the rest of the transaction, on PostgreSQL)."""
    query = sa.select(posts).where(posts.c.post_id == post_id)
    return conn.execute(query.with_for_update() if lock else query).first()


def hide_post(conn: Connection, post_id: str, *, now: int, delete_after: int) -> bool:
    """Hide a visible post; False when it was hidden already."""
    result = conn.execute(
        posts.update()
        .where(posts.c.post_id == post_id, posts.c.hidden_at.is_(None))
        .values(hidden_at=now, delete_after=delete_after)
    )
    return result.rowcount == 1


def feed_after(conn: Connection, *, limit: int, after: tuple[int, str] | None) -> list[Any]:
    """Visible posts newest first, after ``(created_at, post_id)``."""
    params: dict[str, Any] = {"limit": limit}
    if after is not None:
        params.update(t=after[0], k=after[1])
    return _FEED[after is not None].all(conn, params)


def _feed_page(after: bool) -> Prepared:
    query = sa.select(posts).where(posts.c.hidden_at.is_(None))
    if after:
        query = query.where(sa.tuple_(posts.c.created_at, posts.c.post_id) < sa.tuple_(_T, _K))
    return Prepared(query.order_by(posts.c.created_at.desc(), posts.c.post_id.desc()).limit(_LIMIT))


_FEED = {after: _feed_page(after) for after in (False, True)}


def add_like(conn: Connection, post_id: str, svc_id: str, now: int) -> bool:
    """Like a post once: False when this user liked it already; the count moves with the row."""
    if not inserted(conn, likes, {"post_id": post_id, "svc_id": svc_id, "created_at": now}):
        return False
    conn.execute(posts.update().where(posts.c.post_id == post_id).values(like_count=posts.c.like_count + 1))
    return True


def add_comment(conn: Connection, **values: Any) -> int:
    """A comment; returns the post's comment count after it."""
    conn.execute(comments.insert().values(**values))
    post_id = values["post_id"]
    conn.execute(
        posts.update().where(posts.c.post_id == post_id).values(comment_count=posts.c.comment_count + 1)
    )
    return int(conn.execute(sa.select(posts.c.comment_count).where(posts.c.post_id == post_id)).scalar_one())


def add_report(conn: Connection, **values: Any) -> bool:
    """A report (one per reporter and target: the id says so); False when it existed."""
    return inserted(conn, reports, values)


def reports_newest(conn: Connection, limit: int) -> list[Row[Any]]:
    """The newest reports, for operators."""
    query = sa.select(reports).order_by(reports.c.created_at.desc(), reports.c.report_id).limit(limit)
    return list(conn.execute(query))


def purge_posts(conn: Connection, now: int, limit: int) -> int:
    """Remove hidden posts past their ``delete_after`` with their likes, comments and reports."""
    due = list(
        conn.execute(
            sa.select(posts.c.post_id)
            .where(posts.c.delete_after <= now)
            .order_by(posts.c.post_id)
            .limit(limit)
        ).scalars()
    )
    if due:
        for table in (likes, comments, reports):
            conn.execute(table.delete().where(table.c.post_id.in_(due)))
        conn.execute(posts.delete().where(posts.c.post_id.in_(due)))
    return len(due)
