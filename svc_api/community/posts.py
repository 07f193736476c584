"""Posts of leaders, their likes, comments and reports, and the purge of hidden posts.

A post is visible until its author deletes it; then it leaves the feed at once and is kept
:data:`RETENTION` seconds for moderation before the purge removes it with its likes, comments and
reports. Followers hear of a new post through a fan-out (see :mod:`svc_api.notifications.fanout`).

Example:
    >>> RETENTION // 86400
    15
    >>> len(report_id("AB12CD", "post", "p1"))
    24
"""

from __future__ import annotations

import hashlib
import secrets
from typing import Any

from svc_api.community import feed_queries as queries
from svc_api.community import queries as leader_queries
from svc_api.community.chat import message_exists
from svc_api.community.leaders import is_leader
from svc_api.core.errors import Conflict, Forbidden, NotFound
from svc_api.core.store import Store
from svc_api.notifications import service as notifications

RETENTION = 15 * 86400


def report_id(reporter: str, kind: str, target: str) -> str:
    """One report per reporter and target."""
    return hashlib.sha256(f"{reporter}|{kind}|{target}".encode()).hexdigest()[:24]


def create(
    store: Store, svc_id: str, content: str, *, title: str = "", image_url: str = "", now: int
) -> dict[str, str]:
    """A leader's post (its fields checked by the request model); every follower is notified on
    the channels they allow. 403 for non-leaders.

    Example:
        >>> create(store, "AB12CD", "hello", now=1)
        Traceback (most recent call last):
        ...
        svc_api.core.errors.Forbidden: only approved community leaders can post
    """
    post_id = f"p{secrets.token_hex(8)}"
    with store.write() as conn:
        if not is_leader(conn, svc_id):
            raise Forbidden("only approved community leaders can post")
        queries.insert_post(
            conn,
            post_id=post_id,
            author_id=svc_id,
            title=title,
            content=content,
            image_url=image_url,
            created_at=now,
        )
        author = leader_queries.leader(conn, svc_id).display_name
        summary = title or (content[:197] + "..." if len(content) > 200 else content)
        notifications.start_fanout(
            conn,
            "followers",
            svc_id,
            "community_post",
            key=post_id,
            title=f"New post from {author}",
            body=summary,
            now=now,
        )
    return {"post_id": post_id}


def _public(row: Any) -> dict[str, Any]:
    return {
        "post_id": row.post_id,
        "author_id": row.author_id,
        "title": row.title,
        "content": row.content,
        "image_url": row.image_url,
        "like_count": str(row.like_count),
        "comment_count": str(row.comment_count),
        "created_at": str(row.created_at),
    }


def feed(
    store: Store, *, limit: int, after: tuple[int, str] | None
) -> tuple[list[dict[str, Any]], tuple[int, str] | None]:
    """Visible posts newest first; the page and the position after it (None on the last page).

    Example:
        >>> feed(store, limit=20, after=None)
        ([], None)
    """
    with store.read() as conn:
        rows = queries.feed_after(conn, limit=limit + 1, after=after)
    page = rows[:limit]
    last = (int(page[-1].created_at), page[-1].post_id) if len(rows) > limit else None
    return [_public(r) for r in page], last


def _visible(conn: Any, post_id: str) -> Any:
    row = queries.post(conn, post_id)
    if row is None or row.hidden_at is not None:
        raise NotFound(f"no post {post_id}")
    return row


def delete(store: Store, svc_id: str, pid: str, *, now: int) -> dict[str, Any]:
    """Hide the caller's post ``pid`` now and purge it :data:`RETENTION` later: 403 not the author
    or hidden already, 404 unknown."""
    with store.write() as conn:
        row = queries.post(conn, pid, lock=True)
        if row is None:
            raise NotFound(f"no post {pid}")
        if row.author_id != svc_id:
            raise Forbidden("only the author can delete a post")
        if not queries.hide_post(conn, pid, now=now, delete_after=now + RETENTION):
            raise Forbidden("this post is deleted already")
    return {"post_id": pid, "deleted": True, "delete_after": now + RETENTION}


def like(store: Store, svc_id: str, post_id: str, *, now: int) -> dict[str, Any]:
    """Like a visible post once (409 the second time)."""
    with store.write() as conn:
        row = _visible(conn, post_id)
        if not queries.add_like(conn, row.post_id, svc_id, now):
            raise Conflict("you liked this post already")
    return {"post_id": row.post_id, "action": "liked"}


def comment(store: Store, svc_id: str, post_id: str, body: str, *, now: int) -> dict[str, Any]:
    """Comment ``body`` on a visible post: ``{post_id, comment_id, comment_count, created_at}``."""
    comment_id = f"c{secrets.token_hex(8)}"
    with store.write() as conn:
        row = _visible(conn, post_id)
        count = queries.add_comment(
            conn, comment_id=comment_id, post_id=row.post_id, svc_id=svc_id, comment=body, created_at=now
        )
    return {
        "post_id": row.post_id,
        "comment_id": comment_id,
        "comment_count": str(count),
        "created_at": str(now),
    }


def report(
    store: Store,
    svc_id: str,
    *,
    post_id: str | None,
    message_key: str | None,
    channel: str,
    reason: str,
    now: int,
) -> dict[str, str]:
    """Report a post (``post_id``) or a chat message (``message_key`` of ``channel``): exactly one,
    as the request model checks. Reporting the same thing again changes nothing."""
    with store.write() as conn:
        if post_id is not None:
            target = _visible(conn, post_id).post_id
            values = {"report_id": report_id(svc_id, "post", target), "post_id": target}
        else:
            key = str(message_key)
            if not message_exists(conn, channel, key):
                raise NotFound(f"no message {key} in channel {channel}")
            values = {"report_id": report_id(svc_id, channel, key), "channel": channel, "sort_key": key}
        queries.add_report(conn, reporter_id=svc_id, reason=reason, created_at=now, **values)
    return {"action": "reported"}


def reports(store: Store, limit: int = 100) -> list[dict[str, Any]]:
    """The newest reports (for operators).

    Example:
        >>> reports(store)
        []
    """
    with store.read() as conn:
        rows = queries.reports_newest(conn, limit)
    return [
        {
            "report_id": r.report_id,
            "reporter_id": r.reporter_id,
            "post_id": r.post_id,
            "channel": r.channel,
            "message_key": r.sort_key,
            "reason": r.reason,
            "created_at": int(r.created_at),
        }
        for r in rows
    ]


def purge(store: Store, *, now: int, batch: int = 500) -> int:
    """Remove hidden posts whose retention ended, with their likes, comments and reports.

    Example:
        >>> purge(store, now=10**10)
        0
    """
    removed = 0
    while True:
        with store.write() as conn:
            done = queries.purge_posts(conn, now, batch)
        removed += done
        if done < batch:
            return removed
