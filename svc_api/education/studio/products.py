"""An instructor's products in the studio: drafts, their metadata and curriculum under ``If-Match``,
submissions for review, the operator's decision, and unpublishing.

A draft keeps its own fields and lesson tree (``edu_drafts``), versioned for its ``ETag``; nothing a
draft edit does reaches the catalog. A submission freezes the draft as an immutable snapshot; the
operator's approval (``svc admin edu review SUBMISSION approve``) publishes the snapshot as the
product's next revision, a rejection records the reason. One submission may be pending per product.

The body's format rules are its model's (:mod:`.contract`); the rules here need the store or the
settings.

Example:
    >>> sorted(DEFAULTS)
    ['description', 'refundable', 'subtitle', 'topics']
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sqlalchemy.engine import Connection, Row

from svc_api.core.errors import ApiError, Conflict, Forbidden, Invalid, NotFound
from svc_api.education.catalog import service as catalog
from svc_api.education.conventions import etag, new_id
from svc_api.education.studio import queries, sellers
from svc_api.education.studio.contract import (
    EduStudioCurriculumRequest,
    EduStudioProductCreate,
    EduStudioProductPatch,
)

PRODUCT = "product"
DEFAULTS = {"subtitle": "", "description": "", "topics": [], "refundable": True}
"""The fields a new draft has when its body leaves them out."""

Media = Callable[[str], dict[str, Any] | None]
"""``upload_id -> {kind, media_key, duration_seconds | pages}`` of the leader's processed uploads."""


def require_currency(price: tuple[int, str] | None, currency: str) -> None:
    """400 unless a sent price is in the catalog's currency (a setting, so not the body model's rule).

    Example:
        >>> require_currency((9900, "USD"), "USD")
        >>> require_currency((9900, "EUR"), "USD")
        Traceback (most recent call last):
        ...
        svc_api.core.errors.Invalid: price.currency must be the catalog's currency USD
    """
    if price is not None and price[1] != currency:
        raise Invalid(f"price.currency must be the catalog's currency {currency}")


def _owned(conn: Connection, leader_id: str, product_id: str, *, missing: int = 403) -> Row[Any]:
    """The leader's product row; ``missing``: the status for an unknown id (403 or 404)."""
    product = catalog.product_row(conn, product_id)
    if product is None and missing == 404:
        raise NotFound(f"no product {product_id}")
    if product is None or product.leader_id != leader_id:
        raise Forbidden(f"product {product_id} is not one of yours", code="not_owner")
    return product


def _own(conn: Connection, leader_id: str, product_id: str) -> tuple[Row[Any], Row[Any]]:
    """(product row, draft row) of the leader's studio product (403 otherwise)."""
    product = _owned(conn, leader_id, product_id)
    draft = queries.draft(conn, product_id)
    if draft is None:
        raise Forbidden(f"product {product_id} was not made in the studio", code="not_owner")
    return product, draft


def view(product: Row[Any], draft: Row[Any]) -> dict[str, Any]:
    """A studio product: the draft's fields and tree beside the published state."""
    fields = dict(draft.fields)
    return {
        "product_id": product.product_id,
        "state": product.state,
        "published_revision": product.revision,
        "draft": {
            **{k: v for k, v in fields.items() if k not in ("price_minor", "currency")},
            "price": {"amount_minor": fields["price_minor"], "currency": fields["currency"]},
            "curriculum": draft.curriculum,
        },
        "etag": etag(PRODUCT, int(draft.version)),
        "updated_at": draft.updated_at,
    }


def read(conn: Connection, leader_id: str, product_id: str) -> dict[str, Any]:
    """The leader's studio product with its current ``ETag`` (403 not yours or unknown)."""
    sellers.require_instructor(conn, leader_id)
    return view(*_own(conn, leader_id, product_id))


def create(
    conn: Connection, leader_id: str, body: EduStudioProductCreate, *, currency: str, now: int
) -> dict[str, Any]:
    """A new draft (201); 409 when the leader already has a product of that title."""
    sellers.require_instructor(conn, leader_id)
    require_currency(body.price, currency)
    fields = {**DEFAULTS, **body.changes()}
    if queries.title_taken(conn, leader_id, fields["title"]):
        raise Conflict(f"you already have a product titled {fields['title']!r}", code="duplicate_title")
    unknown = set(fields["topics"]) - catalog.known_topics(conn, fields["topics"])
    if unknown:
        raise Invalid(f"unknown topic {sorted(unknown)[0]!r}")
    product_id = catalog.create_draft(conn, leader_id, fields, now=now)
    queries.insert_draft(
        conn,
        product_id=product_id,
        fields=fields,
        curriculum=None,
        version=1,
        curriculum_version=0,
        updated_at=now,
    )
    return view(*_own(conn, leader_id, product_id))


def _under_review(conn: Connection, product_id: str) -> None:
    if queries.pending_submission(conn, product_id) is not None:
        raise Conflict(
            "the product is under review: wait for the decision before editing", code="under_review"
        )


def _write(conn: Connection, draft: Row[Any], now: int, **values: Any) -> None:
    if not queries.update_draft(
        conn, draft.product_id, int(draft.version), version=int(draft.version) + 1, updated_at=now, **values
    ):
        raise ApiError(
            412, "precondition_failed", extra={"message": "the product changed meanwhile: read it again"}
        )


def update(
    conn: Connection,
    leader_id: str,
    product_id: str,
    body: EduStudioProductPatch,
    if_match: Callable[[str], None],
    *,
    currency: str,
    now: int,
) -> dict[str, Any]:
    """Change a draft's metadata under ``If-Match`` (412 stale, 409 under review)."""
    sellers.require_instructor(conn, leader_id)
    _, draft = _own(conn, leader_id, product_id)
    if_match(etag(PRODUCT, int(draft.version)))
    require_currency(body.price, currency)
    changes = body.changes()
    unknown = set(changes.get("topics", ())) - catalog.known_topics(conn, changes.get("topics", []))
    if unknown:
        raise Invalid(f"unknown topic {sorted(unknown)[0]!r}")
    if changes.get("title") not in (None, draft.fields["title"]) and queries.title_taken(
        conn, leader_id, changes["title"]
    ):
        raise Conflict(f"you already have a product titled {changes['title']!r}", code="duplicate_title")
    _under_review(conn, product_id)
    _write(conn, draft, now, fields={**draft.fields, **changes})
    return view(*_own(conn, leader_id, product_id))


def _with_media(tree: Any, media: Media) -> dict[str, Any]:
    """The tree with each video and pdf lesson's media taken from its processed upload (400 when an
    upload is unknown, someone else's, unprocessed, or of another kind)."""
    if not isinstance(tree, dict) or not isinstance(tree.get("sections"), list):
        raise Invalid("curriculum must be an object {sections: [...]}")
    out = {"sections": []}
    for section in tree["sections"]:
        raw = section.get("lessons") if isinstance(section, dict) else None
        if not isinstance(raw, list):
            out["sections"].append(section)  # the tree's own check names what is wrong
            continue
        lessons = [
            _attach(lesson, media)
            if isinstance(lesson, dict) and lesson.get("kind") in ("video", "pdf")
            else lesson
            for lesson in raw
        ]
        out["sections"].append({**section, "lessons": lessons})
    return out


def _attach(lesson: dict[str, Any], media: Media) -> dict[str, Any]:
    upload_id = lesson.get("upload_id")
    found = media(upload_id) if isinstance(upload_id, str) else None
    if found is None or found["kind"] != lesson["kind"]:
        raise Invalid(
            f"lesson {lesson.get('lesson_id')!r} needs the upload_id of a processed {lesson['kind']} "
            "upload of yours"
        )
    extra = (
        {"duration_seconds": found["duration_seconds"]}
        if found["kind"] == "video"
        else {"pages": found["pages"]}
    )
    return {
        **{k: v for k, v in lesson.items() if k != "upload_id"},
        **extra,
        "media_key": found["media_key"],
        "upload_id": upload_id,
    }


def replace_curriculum(
    conn: Connection,
    leader_id: str,
    product_id: str,
    body: EduStudioCurriculumRequest,
    if_match: Callable[[str], None],
    media: Media,
    *,
    now: int,
) -> dict[str, Any]:
    """Replace the draft's whole lesson tree under ``If-Match``: the tree's rules (400 naming the
    first broken one), each video and pdf lesson on a processed upload of the same leader."""
    sellers.require_instructor(conn, leader_id)
    _, draft = _own(conn, leader_id, product_id)
    if_match(etag(PRODUCT, int(draft.version)))
    checked = catalog.check_curriculum(_with_media(body.tree(), media))
    _under_review(conn, product_id)
    _write(conn, draft, now, curriculum=checked, curriculum_version=int(draft.curriculum_version) + 1)
    return view(*_own(conn, leader_id, product_id))


def submit(conn: Connection, leader_id: str, product_id: str, media: Media, *, now: int) -> dict[str, Any]:
    """Freeze the draft as a snapshot for review (201 receipt): 409 one pending; 422 not ready (no
    curriculum, media no longer processed, or seller gates)."""
    sellers.require_instructor(conn, leader_id)
    _, draft = _own(conn, leader_id, product_id)
    if queries.pending_submission(conn, product_id) is not None:
        raise Conflict("a submission of this product is already waiting for review", code="already_pending")
    if draft.curriculum is None:
        raise ApiError(422, "not_ready", extra={"message": "set the curriculum before submitting"})
    for lesson in catalog.lessons(draft.curriculum):
        if lesson.get("upload_id") and media(lesson["upload_id"]) is None:
            raise ApiError(
                422,
                "not_ready",
                extra={"message": f"the media of lesson {lesson['lesson_id']} is not processed"},
            )
    sellers.require_ready_to_submit(conn, leader_id)
    submission_id = new_id("sb_")
    snapshot = {"fields": draft.fields, "curriculum": draft.curriculum, "draft_version": int(draft.version)}
    queries.insert_submission(
        conn,
        submission_id=submission_id,
        product_id=product_id,
        leader_id=leader_id,
        snapshot=snapshot,
        state="pending",
        created_at=now,
    )
    return {
        "submission_id": submission_id,
        "product_id": product_id,
        "state": "pending",
        "draft_version": int(draft.version),
        "created_at": now,
    }


def decide(
    conn: Connection, submission_id: str, approve: bool, reason: str | None, *, now: int
) -> dict[str, Any]:
    """The operator's review: approval publishes the snapshot as the next revision; 404 unknown,
    409 already decided."""
    row = queries.submission(conn, submission_id)
    if row is None:
        raise NotFound(f"no submission {submission_id}")
    if not queries.decide_submission(conn, submission_id, "approved" if approve else "rejected", reason, now):
        raise Conflict(f"submission {submission_id} was already decided", code="already_decided")
    revision = None
    if approve:
        snapshot = row.snapshot
        revision = catalog.publish_snapshot(
            conn, row.product_id, snapshot["fields"], snapshot["curriculum"], now=now
        )
    return {
        "submission_id": submission_id,
        "product_id": row.product_id,
        "state": "approved" if approve else "rejected",
        "revision": revision,
        "reason": reason,
    }


def pending(conn: Connection, limit: int = 100) -> list[dict[str, Any]]:
    """Submissions waiting for review, oldest first (the operator's queue)."""
    return [
        {
            "submission_id": r.submission_id,
            "product_id": r.product_id,
            "leader_id": r.leader_id,
            "title": r.snapshot["fields"]["title"],
            "created_at": r.created_at,
        }
        for r in queries.pending_submissions(conn, limit)
    ]


def unpublish(conn: Connection, leader_id: str, product_id: str, *, now: int) -> dict[str, Any]:
    """Close new sales (entitlements and progress stay): 404 unknown, 403 not yours, 409 not published."""
    sellers.require_instructor(conn, leader_id)
    product = _owned(conn, leader_id, product_id, missing=404)
    if product.state != "published":
        raise Conflict(f"the product is {product.state}, not published", code="not_published")
    catalog.set_state(conn, product_id, "unpublished", now=now)
    return {"product_id": product_id, "state": "unpublished"}
