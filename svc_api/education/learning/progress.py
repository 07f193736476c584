"""Learning rules: enrollments pinned to a curriculum revision, server-measured progress (video
through playback sessions, PDFs and articles through versioned reading checkpoints), resume,
revision adoption, the dashboard and the library.

An enrollment starts the first time an entitled student opens the product, on its newest revision,
and stays there until the student adopts a newer one; progress is kept per lesson id, so lessons
that remain keep theirs. A product is complete when every lesson of the enrollment's revision is.

Example:
    >>> status_of(None, 0, 3)
    'not_started'
"""

from __future__ import annotations

from typing import Any

from sqlalchemy.engine import Connection, Row

from svc_api.core.errors import ApiError, Conflict, Invalid
from svc_api.education.catalog import service as catalog
from svc_api.education.commerce import service as commerce
from svc_api.education.conventions import etag
from svc_api.education.learning import playback, queries

ENROLLMENT = "enrollment"


def status_of(completed_at: int | None, done: int, total: int) -> str:
    """``completed``, ``in_progress`` or ``not_started``."""
    if completed_at is not None:
        return "completed"
    return "in_progress" if done else "not_started"


def enrollment(
    conn: Connection, svc_id: str, product_id: str, *, now: int
) -> tuple[Row[Any], dict[str, Any]]:
    """The student's enrollment and its curriculum (404 unknown product, 403 no entitlement);
    made on first use, on the product's newest revision."""
    product = catalog.published(conn, product_id)
    commerce.require_entitlement(conn, svc_id, product_id)
    row = queries.enrollment(conn, svc_id, product_id)
    if row is None:
        queries.enroll(conn, svc_id, product_id, int(product.revision), now)
        row = queries.enrollment(conn, svc_id, product_id)
    return row, catalog.tree(conn, product_id, int(row.revision))


def _lesson_view(item: dict[str, Any], row: Row[Any] | None) -> dict[str, Any]:
    view: dict[str, Any] = {
        "lesson_id": item["lesson_id"],
        "kind": item["kind"],
        "completed": bool(row is not None and row.completed_at is not None),
    }
    if item["kind"] == "video":
        view |= {
            "duration_seconds": item["duration_seconds"],
            "watched_seconds": round(float(row.watched_seconds), 3) if row else 0.0,
            "position_seconds": float(row.position) if row else 0.0,
        }
    else:
        view |= {
            "pages": item["pages"],
            "furthest_page": int(row.furthest_page) if row else 0,
            "page": int(row.page) if row else 0,
        }
    return view


def progress(conn: Connection, svc_id: str, product_id: str, *, now: int) -> dict[str, Any]:
    """Detailed progress of an enrollment, with its ``etag``."""
    row, tree = enrollment(conn, svc_id, product_id, now=now)
    rows = queries.progress_rows(conn, svc_id, product_id)
    lessons = [_lesson_view(item, rows.get(item["lesson_id"])) for item in catalog.lessons(tree)]
    done = sum(1 for lesson in lessons if lesson["completed"])
    latest = int(catalog.published(conn, product_id).revision)
    return {
        "product_id": product_id,
        "revision": int(row.revision),
        "latest_revision": latest,
        "newer_revision_available": latest > int(row.revision),
        "status": status_of(row.completed_at, done + len(rows), len(lessons)),
        "completed_lessons": done,
        "total_lessons": len(lessons),
        "percent_complete": (100 * done) // len(lessons) if lessons else 0,
        "completed_at": row.completed_at,
        "lessons": lessons,
        "etag": etag(ENROLLMENT, int(row.version)),
    }


def _refresh_completion(conn: Connection, svc_id: str, product_id: str, lesson_id: str, now: int) -> None:
    """Record the last lesson touched, and the enrollment's completion once every lesson of its
    revision is complete."""
    row, tree = enrollment(conn, svc_id, product_id, now=now)
    rows = queries.progress_rows(conn, svc_id, product_id)
    ids = [item["lesson_id"] for item in catalog.lessons(tree)]
    complete = all(rows.get(i) is not None and rows[i].completed_at is not None for i in ids)
    values: dict[str, Any] = {"last_lesson_id": lesson_id}
    if complete and row.completed_at is None:
        values["completed_at"] = now
    queries.touch_enrollment(conn, svc_id, product_id, now, **values)


def resume(conn: Connection, svc_id: str, product_id: str, *, now: int) -> dict[str, Any]:
    """Where to continue: the last lesson touched (the first lesson when none) and its checkpoint."""
    row, tree = enrollment(conn, svc_id, product_id, now=now)
    lessons = catalog.lessons(tree)
    item = catalog.lesson(tree, row.last_lesson_id or "") or lessons[0]
    view = _lesson_view(item, queries.progress_row(conn, svc_id, product_id, item["lesson_id"]))
    return {
        "product_id": product_id,
        "revision": int(row.revision),
        "lesson": view,
        "updated_at": row.updated_at,
    }


def adopt_revision(
    conn: Connection, svc_id: str, product_id: str, if_match: Any, *, now: int
) -> dict[str, Any]:
    """Move the enrollment to the product's newest revision. ``if_match(current_etag)`` raises the
    412/428; 409 when nothing newer is published; the version compare-and-set makes the loser of
    two concurrent adoptions under one ETag a 412."""
    row, _ = enrollment(conn, svc_id, product_id, now=now)
    if_match(etag(ENROLLMENT, int(row.version)))
    latest = int(catalog.published(conn, product_id).revision)
    if latest <= int(row.revision):
        raise Conflict(
            f"revision {row.revision} is the newest; there is nothing to adopt", code="nothing_newer"
        )
    if not queries.adopt(conn, svc_id, product_id, int(row.version), latest, now):
        raise ApiError(
            412, "precondition_failed", extra={"message": "the enrollment changed meanwhile: read it again"}
        )
    rows = queries.progress_rows(conn, svc_id, product_id)
    if rows:
        _refresh_completion(conn, svc_id, product_id, next(iter(rows)), now)
    return progress(conn, svc_id, product_id, now=now)


def not_a_reading_lesson(lesson_id: object) -> Invalid:
    """The 400 of a ``lesson_id`` that is not a pdf or article lesson of the enrollment's revision
    (a non-string is refused by the route's model with the same words).

    Example:
        >>> not_a_reading_lesson(5).message
        'lesson_id must name a pdf or article lesson of your revision, got 5'
    """
    return Invalid(f"lesson_id must name a pdf or article lesson of your revision, got {lesson_id!r}")


def _reading_lesson(tree: dict[str, Any], lesson_id: str) -> dict[str, Any]:
    item = catalog.lesson(tree, lesson_id)
    if item is None or item["kind"] == "video":
        raise not_a_reading_lesson(lesson_id)
    return item


SECONDS_PER_PAGE = 10
"""The fastest plausible reading pace (ours): the furthest page grows by at most one page per this
many seconds since it last grew (the first checkpoint credits one page)."""


def paced_furthest(furthest: int, page: int, furthest_at: int | None, now: int) -> int:
    """The furthest page after a checkpoint at ``page``: it never shrinks, and grows no faster than
    :data:`SECONDS_PER_PAGE` allows (a client that reports a far page early gets it as time passes).

    Example:
        >>> paced_furthest(0, 5, None, 100), paced_furthest(1, 5, 100, 125), paced_furthest(3, 2, 100, 900)
        (1, 3, 3)
    """
    if page <= furthest:
        return furthest
    allowance = 1 if furthest_at is None else int((now - furthest_at) // SECONDS_PER_PAGE)
    return min(page, furthest + max(0, allowance))


def positive(value: object, name: str, hi: int) -> int:
    """``value`` if it is an integer from 1 to ``hi`` (400 naming ``name`` otherwise).

    Example:
        >>> positive(3, "page", 4)
        3
        >>> positive(5, "page", 4)
        Traceback (most recent call last):
        ...
        svc_api.core.errors.Invalid: page must be an integer between 1 and 4
    """
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= hi:
        raise Invalid(f"{name} must be an integer between 1 and {hi}")
    return value


def reading_progress(
    conn: Connection,
    svc_id: str,
    product_id: str,
    lesson_id: str,
    version: int,
    sent_page: object,
    *,
    now: int,
) -> dict[str, Any]:
    """Record a reading checkpoint at ``sent_page`` (``lesson_id``'s and ``version``'s format checked
    by the route's model; the page here, as its range is the lesson's): a newer ``version`` moves
    the checkpoint; a page past the document's page count is a 400; the furthest page only ever
    grows, at the reading pace (:func:`paced_furthest`); a stale version changes nothing."""
    _, tree = enrollment(conn, svc_id, product_id, now=now)
    item = _reading_lesson(tree, lesson_id)
    page = positive(sent_page, "page", int(item["pages"]))  # page 99 of a 5-page PDF is a 400
    queries.ensure_progress(conn, svc_id, product_id, item["lesson_id"], now)
    row = queries.progress_row(conn, svc_id, product_id, item["lesson_id"], lock=True)
    applied = version > int(row.reading_version)
    if applied:
        furthest = paced_furthest(int(row.furthest_page), page, row.furthest_at, now)
        grew = furthest > int(row.furthest_page)
        done = (
            row.completed_at
            if row.completed_at is not None
            else (now if furthest >= int(item["pages"]) else None)
        )
        queries.update_progress(
            conn,
            svc_id,
            product_id,
            item["lesson_id"],
            reading_version=version,
            page=page,
            furthest_page=furthest,
            furthest_at=now if grew else row.furthest_at,
            completed_at=done,
            updated_at=now,
        )
        _refresh_completion(conn, svc_id, product_id, item["lesson_id"], now)
    return progress(conn, svc_id, product_id, now=now) | {"applied": applied}


def record_watch(conn: Connection, session: Row[Any], batch: playback.Batch, *, now: int) -> dict[str, Any]:
    """Merge a batch's watched stretches into the lesson's progress (tracked sessions only)."""
    svc_id, product_id, lesson_id = session.svc_id, session.product_id, session.lesson_id
    duration = float(session.duration_seconds)
    if not session.tracked:
        return {"lesson_id": lesson_id, "tracked": False, "position_seconds": batch.position}
    queries.ensure_progress(conn, svc_id, product_id, lesson_id, now)
    row = queries.progress_row(conn, svc_id, product_id, lesson_id)
    merged = playback.merge([*row.intervals, *batch.intervals])
    seconds = playback.watched(merged)
    done = (
        row.completed_at
        if row.completed_at is not None
        else (now if playback.complete(seconds, duration) else None)
    )
    queries.update_progress(
        conn,
        svc_id,
        product_id,
        lesson_id,
        intervals=[list(pair) for pair in merged],
        watched_seconds=seconds,
        position=batch.position,
        completed_at=done,
        updated_at=now,
    )
    _refresh_completion(conn, svc_id, product_id, lesson_id, now)
    return {
        "lesson_id": lesson_id,
        "tracked": True,
        "watched_seconds": round(seconds, 3),
        "duration_seconds": duration,
        "position_seconds": batch.position,
        "completed": done is not None,
    }


def _counts(conn: Connection, svc_id: str, product_id: str, row: Row[Any] | None) -> tuple[str, int]:
    if row is None:
        return "not_started", 0
    tree = catalog.tree(conn, product_id, int(row.revision))
    ids = [item["lesson_id"] for item in catalog.lessons(tree)]
    rows = queries.progress_rows(conn, svc_id, product_id)
    done = sum(1 for i in ids if rows.get(i) is not None and rows[i].completed_at is not None)
    return status_of(row.completed_at, done + len(rows), len(ids)), (100 * done) // len(ids) if ids else 0


def library(
    conn: Connection, svc_id: str, after: dict[str, Any] | None, limit: int
) -> tuple[list[dict[str, Any]], bool]:
    """The student's products, deduplicated, each with its status and server-measured percent."""
    entitled, more = commerce.library_page(conn, svc_id, after, limit)
    ids = [row.product_id for row in entitled]
    products = catalog.products_by_id(conn, ids)
    enrolled = queries.enrollments_of(conn, svc_id, ids)
    items = []
    for row in entitled:
        product = products[row.product_id]
        status, percent = _counts(conn, svc_id, row.product_id, enrolled.get(row.product_id))
        items.append(
            {
                "product_id": row.product_id,
                "kind": product.kind,
                "title": product.title,
                "leader_id": product.leader_id,
                "status": status,
                "percent_complete": percent,
                "granted_at": int(row.granted_at),
            }
        )
    return items, more


def dashboard(conn: Connection, svc_id: str) -> dict[str, Any]:
    """Counts of the student's products by status, certificates, and the last lesson touched."""
    ids = commerce.owned_products(conn, svc_id)
    enrolled = queries.enrollments_of(conn, svc_id, ids)
    counts = {"not_started": 0, "in_progress": 0, "completed": 0}
    for product_id in ids:
        counts[_counts(conn, svc_id, product_id, enrolled.get(product_id))[0]] += 1
    recent = max(
        (row for row in enrolled.values() if row.last_lesson_id), key=lambda r: r.updated_at, default=None
    )
    last = (
        None
        if recent is None
        else {"product_id": recent.product_id, "lesson_id": recent.last_lesson_id, "at": recent.updated_at}
    )
    return {
        "products": len(ids),
        "in_progress": counts["in_progress"],
        "completed": counts["completed"],
        "not_started": counts["not_started"],
        "certificates": queries.count_certificates(conn, svc_id),
        "last_activity": last,
    }


def completed(conn: Connection, svc_id: str, product_id: str) -> bool:
    """Whether the account completed the product (measured by the server)."""
    row = queries.enrollment(conn, svc_id, product_id)
    return row is not None and row.completed_at is not None
