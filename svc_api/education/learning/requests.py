"""Learning as the routes call it: each request in one transaction of its own (the dashboard and
library, an enrollment's progress, playback sessions, reviews, questions, certificates). The rules
are in :mod:`.progress`, :mod:`.sessions` and :mod:`.engagement`, which work inside a caller's
transaction.

Example:
    >>> verify_certificate(store, "nope")
    Traceback (most recent call last):
    ...
    svc_api.core.errors.NotFound: no certificate with this verification token
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from svc_api.core.store import Store
from svc_api.education.learning import engagement, sessions
from svc_api.education.learning import progress as learning

Position = dict[str, Any] | None


def dashboard(store: Store, svc_id: str) -> dict[str, Any]:
    """The student's dashboard."""
    with store.read() as conn:
        return learning.dashboard(conn, svc_id)


def library(store: Store, svc_id: str, after: Position, limit: int) -> tuple[list[dict[str, Any]], bool]:
    """A page of the products the student may learn from."""
    with store.read() as conn:
        return learning.library(conn, svc_id, after, limit)


def resume(store: Store, svc_id: str, product_id: str, *, now: int) -> dict[str, Any]:
    """Where the student left off in a product (enrolling them on first use)."""
    with store.write() as conn:
        return learning.resume(conn, svc_id, product_id, now=now)


def progress(store: Store, svc_id: str, product_id: str, *, now: int) -> dict[str, Any]:
    """The student's progress through a product."""
    with store.write() as conn:
        return learning.progress(conn, svc_id, product_id, now=now)


def adopt_revision(
    store: Store, svc_id: str, product_id: str, check: Callable[[str], None], *, now: int
) -> dict[str, Any]:
    """Move the enrollment to the product's latest revision (``check`` the caller's If-Match)."""
    with store.write() as conn:
        return learning.adopt_revision(conn, svc_id, product_id, check, now=now)


def reading_progress(
    store: Store, svc_id: str, product_id: str, lesson_id: str, version: int, page: object, *, now: int
) -> dict[str, Any]:
    """Record how far the student read in a text lesson (``page`` as sent: its range is the lesson's)."""
    with store.write() as conn:
        return learning.reading_progress(conn, svc_id, product_id, lesson_id, version, page, now=now)


def start_playback(
    store: Store,
    objects: Any,
    secret: bytes,
    svc_id: str,
    product_id: str,
    lesson_id: str,
    *,
    now: int,
) -> dict[str, Any]:
    """Open a playback session of a video lesson."""
    with store.write() as conn:
        return sessions.start(conn, objects, secret, svc_id, product_id, lesson_id, now=now)


def playback_events(
    store: Store, svc_id: str, session_id: str, seq: int, events: list[dict[str, Any]], *, now: int
) -> dict[str, Any]:
    """Record batch ``seq`` of playback events."""
    with store.write() as conn:
        return sessions.events(conn, svc_id, session_id, seq, events, now=now)


def close_playback(store: Store, svc_id: str, session_id: str, *, now: int) -> dict[str, Any]:
    """Close a playback session."""
    with store.write() as conn:
        return sessions.close(conn, svc_id, session_id, now=now)


def put_review(
    store: Store, svc_id: str, product_id: str, rating: int, comment: str, *, now: int
) -> dict[str, Any]:
    """Write or replace the student's review of a product."""
    with store.write() as conn:
        return engagement.put_review(conn, svc_id, product_id, rating, comment, now=now)


def delete_review(store: Store, svc_id: str, product_id: str) -> dict[str, Any]:
    """Take the student's review of a product back."""
    with store.write() as conn:
        return engagement.delete_review(conn, svc_id, product_id)


def ask(
    store: Store, svc_id: str, product_id: str, title: str, text: str, lesson_id: str | None, *, now: int
) -> dict[str, Any]:
    """Ask a question about a product."""
    with store.write() as conn:
        return engagement.ask(conn, svc_id, product_id, title, text, lesson_id, now=now)


def update_question(store: Store, svc_id: str, question_id: str, state: str, *, now: int) -> dict[str, Any]:
    """Change a question's state."""
    with store.write() as conn:
        return engagement.update_question(conn, svc_id, question_id, state, now=now)


def issue_certificate(
    store: Store, svc_id: str, product_id: str, holder_name: str, *, now: int
) -> dict[str, Any]:
    """Issue the certificate of a completed product."""
    with store.write() as conn:
        return engagement.issue(conn, svc_id, product_id, holder_name, now=now)


def certificates(store: Store, svc_id: str, after: Position, limit: int) -> tuple[list[dict[str, Any]], bool]:
    """A page of the student's certificates."""
    with store.read() as conn:
        return engagement.certificates(conn, svc_id, after, limit)


def verify_certificate(store: Store, token: str) -> dict[str, Any]:
    """A certificate as anyone holding its verification token sees it (404 unknown)."""
    with store.read() as conn:
        return engagement.verify(conn, token)
