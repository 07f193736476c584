"""Playback sessions: started after the entitlement check with expiring, signed media credentials;
fed numbered event batches (each batch number once, in order); closed idempotently.

Rules (ours, documented): a session lasts :data:`SESSION_SECONDS`; an account has at most
:data:`MAX_OPEN` open sessions (409 beyond); a preview lesson plays without entitlement but records
no progress; an unknown or foreign session is a 403 (its existence is not revealed).

Media credentials: on the local object store, ``/education/v1/media/{key}?expires=...&signature=...``
signed with HMAC-SHA256 under a key derived from the service secret and served by the service; on
S3, the store's presigned URL with the same expiry.

Example:
    >>> url = media_url(None, b"k" * 32, "media/lesson.mp4", expires=2_000_000_000)
    >>> url.startswith("/education/v1/media/media/lesson.mp4?expires=2000000000&signature=")
    True
    >>> media_signature_ok(b"k" * 32, "media/lesson.mp4", 2_000_000_000, url.rsplit("=", 1)[1], now=1)
    True
"""

from __future__ import annotations

import hashlib
import hmac
import time
from typing import Any

from sqlalchemy.engine import Connection

from svc_api.core.errors import Conflict, Forbidden, Invalid
from svc_api.core.objectstore import S3ObjectStore
from svc_api.education.catalog import service as catalog
from svc_api.education.commerce import service as commerce
from svc_api.education.learning import playback, queries
from svc_api.education.learning import progress as learning

SESSION_SECONDS = 4 * 3600
MAX_OPEN = 3


def _media_key(secret: bytes) -> bytes:
    return hmac.new(secret, b"edu-media-url", hashlib.sha256).digest()


def _sign(secret: bytes, key: str, expires: int) -> str:
    return hmac.new(_media_key(secret), f"{key}|{expires}".encode(), hashlib.sha256).hexdigest()


def media_url(objects: Any, secret: bytes, key: str, *, expires: int) -> str:
    """An expiring URL of a media object (see the module docstring)."""
    if isinstance(objects, S3ObjectStore):
        # S3 checks a presigned URL's lifetime against its own (wall) clock, not the service's.
        return objects.presign(key, expires_in=max(1, expires - int(time.time())))
    return f"/education/v1/media/{key}?expires={expires}&signature={_sign(secret, key, expires)}"


def media_signature_ok(secret: bytes, key: str, expires: int, signature: str, *, now: int) -> bool:
    """Whether a media URL is the service's own and unexpired."""
    given = signature.encode("utf-8", "replace")
    return now <= expires and hmac.compare_digest(_sign(secret, key, expires).encode(), given)


def start(
    conn: Connection,
    objects: Any,
    secret: bytes,
    svc_id: str,
    product_id: str,
    lesson_id: str,
    *,
    now: int,
) -> dict[str, Any]:
    """Open a playback session for a video lesson (see the module docstring for the rules)."""
    product = catalog.published(conn, product_id)
    owned = product_id in commerce.owned(conn, svc_id, [product_id])
    if owned:
        _, tree = learning.enrollment(conn, svc_id, product_id, now=now)
    else:
        tree = catalog.tree(conn, product_id, int(product.revision))
    item = catalog.lesson(tree, lesson_id)
    if item is None or item["kind"] != "video":
        raise Invalid(f"lesson_id must name a video lesson of this product, got {lesson_id!r}")
    if not owned and not item["preview"]:
        raise Forbidden(f"you have no entitlement to product {product_id}", code="no_entitlement")
    if queries.open_sessions(conn, svc_id, now) >= MAX_OPEN:
        raise Conflict(
            f"at most {MAX_OPEN} playback sessions may be open at once; close one first",
            code="too_many_sessions",
        )
    session_id = catalog.new_id("ps_")
    checkpoint = queries.progress_row(conn, svc_id, product_id, lesson_id) if owned else None
    position = float(checkpoint.position) if checkpoint is not None else 0.0
    expires = now + SESSION_SECONDS
    queries.insert_session(
        conn,
        session_id=session_id,
        svc_id=svc_id,
        product_id=product_id,
        lesson_id=lesson_id,
        duration_seconds=float(item["duration_seconds"]),
        tracked=owned,
        position=position,
        rate=1.0,
        last_at=float(now),
        created_at=now,
        expires_at=expires,
    )
    key = item.get("media_key")
    return {
        "session_id": session_id,
        "product_id": product_id,
        "lesson_id": lesson_id,
        "tracked": owned,
        "next_seq": 1,
        "position_seconds": position,
        "expires_at": expires,
        "credentials": {
            "media_url": media_url(objects, secret, key, expires=expires) if key else None,
            "expires_at": expires,
        },
    }


def _own_session(conn: Connection, svc_id: str, session_id: str) -> Any:
    row = queries.session(conn, session_id)
    if row is None or row.svc_id != svc_id:
        raise Forbidden("no such playback session of yours", code="not_owner")
    return row


def events(
    conn: Connection,
    svc_id: str,
    session_id: str,
    seq: int,
    batch_events: list[dict[str, Any]],
    *,
    now: int,
) -> dict[str, Any]:
    """Apply batch ``seq`` of a session (its events checked by the route's model,
    :func:`~svc_api.education.learning.playback.check_events`): 409 when it is not the next number
    (duplicate or out of order) or the session is closed or expired."""
    session = _own_session(conn, svc_id, session_id)
    if session.closed_at is not None or session.expires_at <= now:
        raise Conflict("this playback session is closed or expired; start a new one", code="session_closed")
    if seq != int(session.last_seq) + 1:
        what = "duplicate" if seq <= int(session.last_seq) else "out_of_order"
        raise Conflict(
            f"batch {seq} is {what.replace('_', ' ')}: the next batch is {int(session.last_seq) + 1}",
            code=what,
        )
    before = 0.0
    if session.tracked:
        # The lesson's progress row, locked: batches of the student's sessions of one lesson take
        # turns, so each sees the others' last batch time below (PostgreSQL; SQLite writes in turn).
        queries.ensure_progress(conn, svc_id, session.product_id, session.lesson_id, now)
        row = queries.progress_row(conn, svc_id, session.product_id, session.lesson_id, lock=True)
        before = playback.watched(row.intervals) if row is not None else 0.0
    # The budget runs from the student's latest batch on this lesson in any session, not from this
    # session's: three sessions fed at once share one wall clock instead of tripling it.
    other = queries.last_batch_at(conn, svc_id, session.product_id, session.lesson_id, session_id)
    since = max(float(session.last_at), other if other is not None else float("-inf"))
    batch = playback.account(
        batch_events,
        position=float(session.position),
        rate=float(session.rate),
        elapsed=float(now) - since,
        duration=float(session.duration_seconds),
    )
    if not queries.advance_session(
        conn, session_id, seq, position=batch.position, rate=batch.rate, last_at=float(now)
    ):
        raise Conflict(f"batch {seq} was already applied", code="duplicate")
    lesson = learning.record_watch(conn, session, batch, now=now)
    # What the lesson's watched time grew by (a stretch watched before adds nothing); an untracked
    # preview session records nothing, so it credits nothing.
    credited = round(max(0.0, float(lesson["watched_seconds"]) - before), 3) if session.tracked else 0.0
    return {
        "session_id": session_id,
        "seq": seq,
        "next_seq": seq + 1,
        "credited_seconds": credited,
        "lesson": lesson,
    }


def close(conn: Connection, svc_id: str, session_id: str, *, now: int) -> dict[str, Any]:
    """Close a session (again: the same answer); the last checkpoint stays in the lesson's progress."""
    session = _own_session(conn, svc_id, session_id)
    queries.close_session(conn, session_id, now)
    closed_at = session.closed_at if session.closed_at is not None else now
    return {
        "session_id": session_id,
        "closed": True,
        "closed_at": closed_at,
        "position_seconds": float(session.position),
    }
