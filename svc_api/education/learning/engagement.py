"""A student's own review, questions and certificates.

- Reviews: one per student and product (``PUT`` upserts it), rating 1-5 and a comment of at most
  2,000 characters; the product's rating is recomputed in the same transaction.
- Questions: ``open`` -> ``answered`` (by the instructor, issue 18) -> ``resolved`` by the asker,
  who may also resolve an open question or reopen a resolved one; any other move is a 409.
- Certificates: issued once per student and product after the server measured completion, with
  an unguessable verification token that anyone may check.
- A refund takes back what the entitlement earned (:func:`forfeit`): the certificate of a product
  the student no longer owns is revoked (verification says so, with the date; the dashboard stops
  counting it) and their review leaves the product's rating. Bought and completed again, the
  certificate is issued anew.

Example:
    >>> QUESTION_MOVES["resolved"]
    ('open',)
"""

from __future__ import annotations

import secrets
from typing import Any

from sqlalchemy.engine import Connection, Row

from svc_api.core.errors import ApiError, Conflict, Forbidden, Invalid, NotFound
from svc_api.core.store import Store
from svc_api.education.catalog import service as catalog
from svc_api.education.commerce import service as commerce
from svc_api.education.commerce.service import PaymentProvider
from svc_api.education.fields import text_field
from svc_api.education.learning import progress as learning
from svc_api.education.learning import queries

QUESTION_MOVES = {"open": ("resolved",), "answered": ("resolved",), "resolved": ("open",)}


def _review_view(row: Row[Any]) -> dict[str, Any]:
    return {
        "product_id": row.product_id,
        "rating": row.rating,
        "comment": row.comment,
        "created_at": row.created_at,
        "updated_at": row.updated_at,
    }


def put_review(
    conn: Connection, svc_id: str, product_id: str, rating: int, comment: str, *, now: int
) -> dict[str, Any]:
    """Create or replace the student's review (404 unknown product, 403 no entitlement; the fields
    are checked by the route's model)."""
    catalog.published(conn, product_id)
    commerce.require_entitlement(conn, svc_id, product_id)
    queries.put_review(conn, product_id, svc_id, rating, comment, now)
    catalog.refresh_rating(conn, product_id)
    return _review_view(queries.review(conn, product_id, svc_id))


def delete_review(conn: Connection, svc_id: str, product_id: str) -> dict[str, Any]:
    """Delete the student's review (403 no entitlement, 404 none to delete)."""
    catalog.published(conn, product_id)
    commerce.require_entitlement(conn, svc_id, product_id)
    if not queries.delete_review(conn, product_id, svc_id):
        raise NotFound("you have no review of this product")
    catalog.refresh_rating(conn, product_id)
    return {"product_id": product_id, "deleted": True}


def question_view(conn: Connection, row: Row[Any]) -> dict[str, Any]:
    answers = [
        {"answer_id": a.answer_id, "leader_id": a.svc_id, "body": a.body, "created_at": a.created_at}
        for a in queries.answers_of(conn, row.question_id)
    ]
    return {
        "answers": answers,
        "question_id": row.question_id,
        "product_id": row.product_id,
        "lesson_id": row.lesson_id,
        "title": row.title,
        "body": row.body,
        "state": row.state,
        "created_at": row.created_at,
        "updated_at": row.updated_at,
    }


def not_a_lesson(lesson_id: object) -> Invalid:
    """The 400 of a question's ``lesson_id`` that is not a lesson of the student's revision (a
    non-string is refused by the route's model with the same words).

    Example:
        >>> not_a_lesson(7).message
        'lesson_id must name a lesson of this product, got 7'
    """
    return Invalid(f"lesson_id must name a lesson of this product, got {lesson_id!r}")


def ask(
    conn: Connection,
    svc_id: str,
    product_id: str,
    title: str,
    text: str,
    lesson_id: str | None,
    *,
    now: int,
) -> dict[str, Any]:
    """Ask a question (its fields checked by the route's model) on an entitled product, optionally
    about one lesson of the student's revision."""
    _, tree = learning.enrollment(conn, svc_id, product_id, now=now)
    if lesson_id is not None and catalog.lesson(tree, lesson_id) is None:
        raise not_a_lesson(lesson_id)
    question_id = catalog.new_id("qs_")
    queries.insert_question(
        conn,
        question_id=question_id,
        product_id=product_id,
        svc_id=svc_id,
        lesson_id=lesson_id,
        title=title,
        body=text,
        state="open",
        created_at=now,
        updated_at=now,
    )
    return question_view(conn, queries.question(conn, question_id))


def update_question(
    conn: Connection, svc_id: str, question_id: str, state: str, *, now: int
) -> dict[str, Any]:
    """Resolve or reopen one's own question (404 unknown, 403 someone else's, 409 a move its state
    does not allow; ``state`` is ``open`` or ``resolved``, checked by the route's model)."""
    row = queries.question(conn, question_id)
    if row is None:
        raise NotFound(f"no question {question_id}")
    if row.svc_id != svc_id:
        raise Forbidden("only the asker may change a question's state", code="not_owner")
    if state not in QUESTION_MOVES.get(row.state, ()) or not queries.move_question(
        conn, question_id, row.state, state, now
    ):
        raise Conflict(f"a question that is {row.state} cannot become {state}", code="invalid_transition")
    return question_view(conn, queries.question(conn, question_id))


def answer(
    conn: Connection, leader_id: str, question_id: str, body: dict[str, Any], *, now: int
) -> dict[str, Any]:
    """The instructor answers a question on their own product (404 unknown, 403 another's product,
    409 resolved, 400 bad text); an open question becomes ``answered``."""
    row = queries.question(conn, question_id)
    if row is None:
        raise NotFound(f"no question {question_id}")
    if catalog.product_row(conn, row.product_id).leader_id != leader_id:
        raise Forbidden("you can answer questions on your own products only", code="not_owner")
    text = text_field(body, "body", lo=1, hi=4000)
    if row.state == "resolved":
        raise Conflict("the question is resolved; the student may reopen it", code="invalid_transition")
    queries.insert_answer(
        conn,
        answer_id=catalog.new_id("an_"),
        question_id=question_id,
        svc_id=leader_id,
        body=text,
        created_at=now,
    )
    queries.move_question(conn, question_id, "open", "answered", now)
    return question_view(conn, queries.question(conn, question_id))


def _certificate_view(row: Row[Any]) -> dict[str, Any]:
    return {
        "certificate_id": row.certificate_id,
        "product_id": row.product_id,
        "course_title": row.course_title,
        "holder_name": row.holder_name,
        "issued_at": row.issued_at,
        "revoked_at": row.revoked_at,
        "verification_token": row.token,
        "verification_url": f"/education/v1/certificates/verify/{row.token}",
    }


def issue(conn: Connection, svc_id: str, product_id: str, holder: str, *, now: int) -> dict[str, Any]:
    """Issue the certificate of a completed product to ``holder`` (the fields checked by the route's
    model; 403 not completed or not entitled, 409 issued)."""
    existing = queries.certificate_of(conn, svc_id, product_id)
    if existing is not None and existing.revoked_at is None:
        raise Conflict("your certificate for this product was already issued", code="already_issued")
    owned = product_id in commerce.owned(conn, svc_id, [product_id])
    if not owned or not learning.completed(conn, svc_id, product_id):
        raise ApiError(403, "not_completed", extra={"message": "complete every lesson of the product first"})
    product = catalog.product_row(conn, product_id)
    values = {
        "certificate_id": catalog.new_id("ce_"),
        "svc_id": svc_id,
        "product_id": product_id,
        "token": secrets.token_urlsafe(24),
        "holder_name": holder,
        "course_title": product.title,
        "issued_at": now,
    }
    if existing is not None:  # revoked by a refund, earned again
        fresh = {k: v for k, v in values.items() if k not in ("certificate_id", "svc_id", "product_id")}
        if not queries.reissue_certificate(conn, svc_id, product_id, **fresh):
            raise Conflict("your certificate for this product was already issued", code="already_issued")
    elif not queries.issue_certificate(conn, **values):
        raise Conflict("your certificate for this product was already issued", code="already_issued")
    return _certificate_view(queries.certificate_of(conn, svc_id, product_id))


def certificates(
    conn: Connection, svc_id: str, after: dict[str, Any] | None, limit: int
) -> tuple[list[dict[str, Any]], bool]:
    """The student's certificates, newest first."""
    key = None if after is None else (after["t"], after["id"])
    rows = queries.certificate_page(conn, svc_id, key, limit + 1)
    return [_certificate_view(row) for row in rows[:limit]], len(rows) > limit


def verify(conn: Connection, token: str) -> dict[str, Any]:
    """The public facts of a certificate (404 unknown token)."""
    row = queries.certificate_by_token(conn, token) if len(token) <= 64 else None
    if row is None:
        raise NotFound("no certificate with this verification token")
    return {
        "valid": row.revoked_at is None,
        "course": {"product_id": row.product_id, "title": row.course_title},
        "holder": {"name": row.holder_name},
        "issued_at": row.issued_at,
        "revoked_at": row.revoked_at,
    }


def forfeit(conn: Connection, svc_id: str, order_id: str, *, now: int) -> None:
    """After a refund of ``order_id`` (in its transaction): for each of its products the student no
    longer owns (a bundle or another order may still grant one), revoke the certificate and take
    the review out of the rating."""
    products = commerce.order_product_ids(conn, order_id)
    still = commerce.owned(conn, svc_id, products)
    for product_id in products:
        if product_id in still:
            continue
        queries.revoke_certificate(conn, svc_id, product_id, now)
        if queries.delete_review(conn, product_id, svc_id):
            catalog.refresh_rating(conn, product_id)


def refund_order(
    store: Store, provider: PaymentProvider, svc_id: str, order_id: str, reason: str, *, now: int
) -> dict[str, Any]:
    """Refund a paid order (:func:`svc_api.education.commerce.service.request_refund`) and, in the
    same transaction, :func:`forfeit` what its entitlements earned (learning reads commerce, so
    commerce cannot call learning itself)."""
    with store.write() as conn:
        refund = commerce.request_refund(conn, provider, svc_id, order_id, reason, now=now)
        forfeit(conn, svc_id, order_id, now=now)
    return refund
