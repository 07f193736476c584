"""Bundles and the library, progress across a revision adoption, and the provider's callback
retries, on SQLite and PostgreSQL."""

from __future__ import annotations

import sqlalchemy as sa

from svc_api.education.catalog import service as catalog
from svc_api.education.commerce import service as commerce
from svc_api.education.commerce.provider import SandboxProvider, provider_for
from tests.api.conftest import Api
from tests.api.education_helpers import (
    PUBLICATION,
    VIDEO_COURSE,
    buy,
    call,
    leader,
    publish,
    read_through,
    student,
)


def test_a_bundle_grants_each_product_once_and_the_library_lists_each_product_once(capi: Api) -> None:
    teacher = leader(capi)
    course, book = publish(capi, teacher), publish(capi, teacher, PUBLICATION)
    with capi.app.state.services.store.write() as conn:
        bundle = catalog.create_bundle(
            conn, teacher, "Both", (5000, "USD"), [course, book], now=capi.clock.now()
        )
    token = student(capi)
    buy(capi, token, course)
    capi.clock.advance(10)  # the library lists products in order of their first grant
    order = call(capi, "POST", "/checkouts", token, json={"bundle_id": bundle}).json()
    assert (order["item"], order["amount"]) == (
        {"kind": "bundle", "id": bundle},
        {"amount_minor": 5000, "currency": "USD"},
    )
    capi.post(order["checkout_url"] + "/approve")
    paid = call(capi, "GET", f"/orders/{order['order_id']}", token).json()
    assert (paid["state"], paid["products"]) == ("paid", sorted([course, book]))
    library = call(capi, "GET", "/me/library", token, params={"limit": 1}).json()
    rest = call(capi, "GET", "/me/library", token, params={"cursor": library["next_cursor"]}).json()
    assert [i["product_id"] for i in library["items"] + rest["items"]] == [course, book]
    assert rest["next_cursor"] is None
    again = call(capi, "POST", "/checkouts", token, json={"bundle_id": bundle})
    assert again.status_code == 409 and again.json()["code"] == "already_owned"
    counts = (
        call(capi, "GET", f"/products/{course}").json()["student_count"],
        call(capi, "GET", f"/products/{book}").json()["student_count"],
    )
    assert counts == (1, 1)


def test_adopting_a_revision_keeps_the_progress_of_lessons_that_remain(capi: Api) -> None:
    course, token = publish(capi, leader(capi)), student(capi)
    buy(capi, token, course)
    read = read_through(capi, token, course, "l3", 4)
    tag = read.headers["etag"]
    changed = {
        "sections": [
            {
                "section_id": "s2",
                "title": "Reading",
                "lessons": [
                    {"lesson_id": "l3", "title": "Cheat sheet", "kind": "pdf", "pages": 4, "preview": False}
                ],
            },
            {
                "section_id": "s3",
                "title": "New",
                "lessons": [
                    {
                        "lesson_id": "l4",
                        "title": "Order flow",
                        "kind": "video",
                        "duration_seconds": 60,
                        "preview": False,
                    }
                ],
            },
        ]
    }
    with capi.app.state.services.store.write() as conn:
        catalog.publish_revision(conn, course, changed, now=capi.clock.now())
    before = call(capi, "GET", f"/me/enrollments/{course}/progress", token).json()
    assert (before["revision"], before["newer_revision_available"], before["total_lessons"]) == (1, True, 3)
    adopted = call(
        capi,
        "POST",
        f"/me/enrollments/{course}/revision-adoptions",
        token,
        json={},
        headers={"If-Match": tag},
    )
    assert adopted.status_code == 200, adopted.text
    body = adopted.json()
    assert (body["revision"], body["total_lessons"], body["completed_lessons"], body["percent_complete"]) == (
        2,
        2,
        1,
        50,
    )
    assert [(lesson["lesson_id"], lesson["completed"]) for lesson in body["lessons"]] == [
        ("l3", True),
        ("l4", False),
    ]


def test_a_callback_the_service_refuses_is_retried_with_back_off_until_accepted(capi: Api) -> None:
    services = capi.app.state.services
    course, token = publish(capi, leader(capi)), student(capi)
    order = call(capi, "POST", "/checkouts", token, json={"product_id": course}).json()
    real = provider_for(services.settings)
    now = capi.clock.now()
    with services.store.write() as conn:
        commerce.sandbox_decide(conn, real, order["checkout_url"].rsplit("/", 1)[1], "paid", now=now)
    assert call(capi, "GET", f"/orders/{order['order_id']}", token).json()["state"] == "processing"
    wrong_key = SandboxProvider(b"another-secret-entirely-000000000")
    assert commerce.deliver_due(services.store, wrong_key, now=now) == 0  # refused: bad signature
    with services.store.read() as conn:
        attempts, next_at = conn.execute(sa.text("SELECT attempts, next_at FROM edu_payment_events")).one()
    assert (attempts, next_at) == (1, now + 2)
    assert commerce.deliver_due(services.store, real, now=now + 1) == 0  # not due yet
    assert commerce.deliver_due(services.store, real, now=now + 2) == 1
    assert call(capi, "GET", f"/orders/{order['order_id']}", token).json()["state"] == "paid"
    assert commerce.deliver_due(services.store, real, now=now + 3) == 0  # delivered once


def test_a_declined_payment_fails_the_order_and_grants_nothing(capi: Api) -> None:
    course, token = publish(capi, leader(capi), VIDEO_COURSE), student(capi)
    order = call(capi, "POST", "/checkouts", token, json={"product_id": course}).json()
    assert capi.post(order["checkout_url"] + "/decline").json()["outcome"] == "declined"
    assert call(capi, "GET", f"/orders/{order['order_id']}", token).json()["state"] == "failed"
    assert call(capi, "GET", f"/me/enrollments/{course}/progress", token).status_code == 403
    assert capi.post(order["checkout_url"] + "/approve").status_code == 409  # the page is closed
    capi.clock.advance(1801)
    expired = call(capi, "POST", "/checkouts", token, json={"product_id": course}).json()
    capi.clock.advance(1801)
    assert call(capi, "GET", f"/orders/{expired['order_id']}", token).json()["state"] == "expired"
    assert capi.get(expired["checkout_url"]).status_code == 409


def test_learning_routes_refuse_a_query_parameter_and_check_a_body_before_the_store(capi: Api) -> None:
    """Each route's contract: a query parameter it does not take is a 400 naming it; a body's format
    is checked before any look-up, so a malformed batch of a stranger's session is a 400, not 403."""
    token = student(capi)
    course = publish(capi, leader(capi))
    buy(capi, token, course)
    for method, path in [
        ("GET", "/me/dashboard?colour=red"),
        ("GET", "/me/library?colour=red"),
        ("GET", f"/me/enrollments/{course}/progress?colour=red"),
        ("GET", "/me/certificates?limit=1&limit=2"),
        ("GET", "/certificates/verify/unknown?colour=red"),
    ]:
        refused = call(capi, method, path, token)
        assert refused.status_code == 400 and refused.json()["code"] == "invalid_request", refused.text
    typo = call(capi, "PUT", f"/products/{course}/reviews/me", token, json={"rating": 4, "coment": "x"})
    assert typo.json()["error"] == "unknown field 'coment'; this operation takes rating, comment"
    stranger = call(capi, "POST", "/playback-sessions/ps_nope/events", token, json={"seq": 0, "events": []})
    assert stranger.status_code == 400 and "seq must be" in stranger.json()["error"], stranger.text
