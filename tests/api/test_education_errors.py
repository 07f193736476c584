"""Every error status of every student and public education route, each with its cause, on
SQLite and PostgreSQL. Bodies read ``{error: <message>, code}``."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from svc_api.education.catalog import service as catalog
from tests.api.conftest import Api
from tests.api.education_helpers import (
    BASE,
    PUBLICATION,
    VIDEO_COURSE,
    buy,
    call,
    key,
    leader,
    publish,
    read_through,
    student,
)


@pytest.fixture
def world(capi: Api) -> SimpleNamespace:
    """A leader with a course and a book; a student who bought the course; another student."""
    teacher = leader(capi)
    course, book = publish(capi, teacher), publish(capi, teacher, PUBLICATION)
    owner, other = student(capi), student(capi)
    order = buy(capi, owner, course)
    return SimpleNamespace(
        api=capi, teacher=teacher, course=course, book=book, owner=owner, other=other, order=order
    )


def _code(reply: Any, status: int, code: str) -> None:
    assert reply.status_code == status, reply.text
    body = reply.json()
    assert body["code"] == code and isinstance(body["error"], str) and body["error"], body


@pytest.mark.parametrize(
    ("params", "code"),
    [
        ({"kind": "webinar"}, "invalid_request"),
        ({"topic": ["a", "b", "c", "d", "e", "f"]}, "invalid_request"),
        ({"topic": "no-such-topic"}, "invalid_request"),
        ({"q": "x" * 121}, "invalid_request"),
        ({"max_price": "12.50"}, "invalid_request"),
        ({"language": "english"}, "invalid_request"),
        ({"sort": "cheapest"}, "invalid_request"),
        ({"colour": "red"}, "invalid_request"),
        ({"cursor": "not-a-cursor"}, "invalid_cursor"),
        ({"limit": "0"}, "invalid_page_size"),
    ],
)
def test_catalog_refuses_a_bad_filter_with_400(
    world: SimpleNamespace, params: dict[str, Any], code: str
) -> None:
    _code(call(world.api, "GET", "/catalog", params=params), 400, code)


def test_catalog_cursor_is_bound_to_its_filters_and_pages_to_the_end(world: SimpleNamespace) -> None:
    api = world.api
    first = call(api, "GET", "/catalog", params={"limit": 1}).json()
    assert len(first["items"]) == 1 and first["next_cursor"]
    second = call(api, "GET", "/catalog", params={"limit": 1, "cursor": first["next_cursor"]}).json()
    assert second["next_cursor"] is None
    assert {first["items"][0]["product_id"], second["items"][0]["product_id"]} == {world.course, world.book}
    moved = call(
        api, "GET", "/catalog", params={"limit": 1, "kind": "course", "cursor": first["next_cursor"]}
    )
    _code(moved, 400, "invalid_cursor")


def test_public_reads_of_unknown_things_are_404(world: SimpleNamespace) -> None:
    api = world.api
    for path in (
        "/products/pr_nope",
        "/products/pr_nope/curriculum",
        "/products/pr_nope/reviews",
        "/leaders/NOPE00/products",
        "/certificates/verify/unknown-token",
    ):
        _code(call(api, "GET", path), 404, "not_found")
    assert (
        call(api, "GET", f"/leaders/{world.teacher}/products").json()["items"][0]["leader"]["leader_id"]
        == world.teacher
    )


def test_topic_search_needs_two_to_120_characters(world: SimpleNamespace) -> None:
    _code(call(world.api, "GET", "/topics", params={"q": "r"}), 400, "invalid_request")
    _code(call(world.api, "GET", "/topics", params={"q": "r" * 121}), 400, "invalid_request")
    assert [
        t["topic_id"] for t in call(world.api, "GET", "/topics", params={"q": "risk"}).json()["items"]
    ] == ["risk"]


def test_student_routes_need_a_session(world: SimpleNamespace) -> None:
    api, c, o = world.api, world.course, world.order["order_id"]
    for method, path in [
        ("POST", "/checkouts"),
        ("GET", f"/orders/{o}"),
        ("GET", "/me/dashboard"),
        ("GET", "/me/library"),
        ("GET", f"/me/enrollments/{c}/resume"),
        ("GET", f"/me/enrollments/{c}/progress"),
        ("POST", f"/me/enrollments/{c}/revision-adoptions"),
        ("POST", f"/products/{c}/playback-sessions"),
        ("POST", "/playback-sessions/ps_x/events"),
        ("DELETE", "/playback-sessions/ps_x"),
        ("PUT", f"/me/enrollments/{c}/reading-progress"),
        ("PUT", f"/products/{c}/reviews/me"),
        ("DELETE", f"/products/{c}/reviews/me"),
        ("POST", f"/products/{c}/questions"),
        ("PATCH", "/questions/qs_x"),
        ("POST", f"/orders/{o}/refund-requests"),
        ("GET", f"/orders/{o}/refund-requests/rf_x"),
        ("POST", "/me/certificates"),
        ("GET", "/me/certificates"),
    ]:
        _code(call(api, method, path, json={}), 401, "unauthenticated")
    expired = call(api, "GET", "/me/dashboard", "x" * 40)
    assert expired.status_code == 401 and expired.json()["code"] == "session_expired"


def test_changes_need_an_idempotency_key_used_for_one_request_only(world: SimpleNamespace) -> None:
    api = world.api
    _code(
        call(api, "POST", "/checkouts", world.other, json={"product_id": world.book}, idem=None),
        400,
        "idempotency_key_required",
    )
    _code(
        call(api, "POST", "/checkouts", world.other, json={"product_id": world.book}, idem="short"),
        400,
        "invalid_idempotency_key",
    )
    idem = key()
    assert (
        call(api, "POST", "/checkouts", world.other, json={"product_id": world.book}, idem=idem).status_code
        == 201
    )
    _code(
        call(api, "POST", "/checkouts", world.other, json={"bundle_id": "bn_x"}, idem=idem),
        409,
        "idempotency_key_reused",
    )


def test_checkout_errors(world: SimpleNamespace, make_api: Any, settings: Any) -> None:
    api = world.api
    _code(
        call(api, "POST", "/checkouts", world.owner, json={"product_id": world.course}), 409, "already_owned"
    )
    first = call(api, "POST", "/checkouts", world.other, json={"product_id": world.book})
    again = call(api, "POST", "/checkouts", world.other, json={"product_id": world.book})
    _code(again, 409, "checkout_open")
    assert again.json()["order_id"] == first.json()["order_id"]
    _code(call(api, "POST", "/checkouts", world.other, json={}), 400, "invalid_request")
    _code(
        call(api, "POST", "/checkouts", world.other, json={"product_id": world.course, "coupon": "X"}),
        400,
        "invalid_request",
    )
    decimal = {"product_id": world.course, "expected_price": {"amount_minor": 49.5, "currency": "USD"}}
    _code(call(api, "POST", "/checkouts", world.other, json=decimal), 400, "invalid_request")
    stale = {"product_id": world.course, "expected_price": {"amount_minor": 3900, "currency": "USD"}}
    _code(call(api, "POST", "/checkouts", world.other, json=stale), 422, "price_changed")
    _code(
        call(api, "POST", "/checkouts", world.other, json={"product_id": "pr_nope"}), 422, "not_purchasable"
    )
    own = student(api)
    with api.app.state.services.store.write() as conn:
        catalog.set_state(conn, world.course, "unpublished", now=api.clock.now())
    _code(call(api, "POST", "/checkouts", own, json={"product_id": world.course}), 422, "not_purchasable")
    closed = make_api(settings.replace(edu_checkout_open=0))
    token = student(closed)
    assert call(closed, "GET", "/commerce/capabilities").json()["checkout_open"] is False
    _code(call(closed, "POST", "/checkouts", token, json={"product_id": world.book}), 422, "checkout_closed")


def test_orders_and_refund_status_belong_to_their_buyer(world: SimpleNamespace) -> None:
    api, order_id = world.api, world.order["order_id"]
    _code(call(api, "GET", f"/orders/{order_id}", world.other), 403, "not_owner")
    _code(call(api, "GET", "/orders/or_nope", world.other), 404, "not_found")
    refund = call(api, "POST", f"/orders/{order_id}/refund-requests", world.owner, json={}).json()
    path = f"/orders/{order_id}/refund-requests/{refund['refund_request_id']}"
    _code(call(api, "GET", path, world.other), 403, "not_owner")
    _code(call(api, "GET", f"/orders/{order_id}/refund-requests/rf_nope", world.owner), 404, "not_found")


def test_refund_errors(world: SimpleNamespace) -> None:
    api, order_id = world.api, world.order["order_id"]
    path = f"/orders/{order_id}/refund-requests"
    _code(call(api, "POST", path, world.other, json={}), 403, "not_owner")
    _code(call(api, "POST", path, world.owner, json={"reason": 7}), 400, "invalid_request")
    pending = call(api, "POST", "/checkouts", world.owner, json={"product_id": world.book}).json()
    _code(
        call(api, "POST", f"/orders/{pending['order_id']}/refund-requests", world.owner, json={}),
        422,
        "not_refundable",
    )
    api.clock.advance(15 * 86_400 + 1)
    _code(call(api, "POST", path, world.owner, json={}), 422, "outside_refund_window")
    late = student(api)
    order = buy(api, late, world.course)
    assert call(api, "POST", f"/orders/{order['order_id']}/refund-requests", late, json={}).status_code == 201
    _code(
        call(api, "POST", f"/orders/{order['order_id']}/refund-requests", late, json={}),
        409,
        "already_requested",
    )


def test_learning_needs_an_entitlement_and_a_known_product(world: SimpleNamespace) -> None:
    api, c = world.api, world.course
    for method, path, body in [
        ("GET", f"/me/enrollments/{c}/resume", None),
        ("GET", f"/me/enrollments/{c}/progress", None),
        ("POST", f"/me/enrollments/{c}/revision-adoptions", {}),
        ("PUT", f"/me/enrollments/{c}/reading-progress", {"lesson_id": "l3", "version": 1, "page": 1}),
        ("POST", f"/products/{c}/playback-sessions", {"lesson_id": "l2"}),
        ("PUT", f"/products/{c}/reviews/me", {"rating": 5}),
        ("DELETE", f"/products/{c}/reviews/me", None),
        ("POST", f"/products/{c}/questions", {"title": "Why?", "body": "Tell me"}),
    ]:
        _code(call(api, method, path, world.other, json=body), 403, "no_entitlement")
    for path in ("/me/enrollments/pr_nope/resume", "/me/enrollments/pr_nope/progress"):
        _code(call(api, "GET", path, world.owner), 404, "not_found")
    preview = call(api, "POST", f"/products/{c}/playback-sessions", world.other, json={"lesson_id": "l1"})
    assert preview.status_code == 201 and preview.json()["tracked"] is False


def test_revision_adoption_errors(world: SimpleNamespace) -> None:
    api, c, owner = world.api, world.course, world.owner
    tag = call(api, "GET", f"/me/enrollments/{c}/progress", owner).headers["etag"]
    adopt = f"/me/enrollments/{c}/revision-adoptions"
    _code(call(api, "POST", adopt, owner, json={}, headers={"If-Match": tag}), 409, "nothing_newer")
    with api.app.state.services.store.write() as conn:
        catalog.publish_revision(conn, c, VIDEO_COURSE["curriculum"], now=api.clock.now())
    _code(call(api, "POST", adopt, owner, json={}), 428, "precondition_required")
    _code(
        call(api, "POST", adopt, owner, json={}, headers={"If-Match": '"enrollment-9"'}),
        412,
        "precondition_failed",
    )
    moved = call(api, "POST", adopt, owner, json={}, headers={"If-Match": tag})
    assert (
        moved.status_code == 200
        and moved.json()["revision"] == 2
        and moved.headers["etag"] == '"enrollment-2"'
    )
    _code(call(api, "POST", adopt, owner, json={}, headers={"If-Match": tag}), 412, "precondition_failed")


def test_playback_errors(world: SimpleNamespace) -> None:
    api, c, owner = world.api, world.course, world.owner
    start = f"/products/{c}/playback-sessions"
    _code(call(api, "POST", start, owner, json={"lesson_id": "l3"}), 400, "invalid_request")
    sessions = [
        call(api, "POST", start, owner, json={"lesson_id": "l2"}).json()["session_id"] for _ in range(3)
    ]
    _code(call(api, "POST", start, owner, json={"lesson_id": "l2"}), 409, "too_many_sessions")
    sid = sessions[0]
    events = f"/playback-sessions/{sid}/events"
    _code(
        call(api, "POST", events, world.other, json={"seq": 1, "events": [{"type": "pause", "position": 1}]}),
        403,
        "not_owner",
    )
    for bad in (
        {"seq": 0, "events": []},
        {"seq": 1, "events": [{"type": "jump"}]},
        {"seq": 1, "events": [{"type": "rate", "rate": 16}]},
        {"seq": 1, "events": "x"},
    ):
        _code(call(api, "POST", events, owner, json=bad), 400, "invalid_request")
    beat = [{"type": "heartbeat", "position": 5}]
    _code(call(api, "POST", events, owner, json={"seq": 2, "events": beat}), 409, "out_of_order")
    assert call(api, "POST", events, owner, json={"seq": 1, "events": beat}).status_code == 200
    _code(call(api, "POST", events, owner, json={"seq": 1, "events": beat}), 409, "duplicate")
    _code(call(api, "DELETE", f"/playback-sessions/{sid}", world.other), 403, "not_owner")
    closed = [call(api, "DELETE", f"/playback-sessions/{sid}", owner).json() for _ in range(2)]
    assert closed[0] == closed[1] and closed[0]["position_seconds"] == 5.0
    _code(call(api, "POST", events, owner, json={"seq": 2, "events": beat}), 409, "session_closed")


def test_reading_review_question_and_certificate_errors(world: SimpleNamespace) -> None:
    api, c, owner = world.api, world.course, world.owner
    reading = f"/me/enrollments/{c}/reading-progress"
    _code(
        call(api, "PUT", reading, owner, json={"lesson_id": "l1", "version": 1, "page": 1}),
        400,
        "invalid_request",
    )
    _code(
        call(api, "PUT", reading, owner, json={"lesson_id": "l3", "version": 1.5, "page": 1}),
        400,
        "invalid_request",
    )
    assert read_through(api, owner, c, "l3", 3, first_version=3).json()["applied"] is True  # versions 3-5
    stale = call(api, "PUT", reading, owner, json={"lesson_id": "l3", "version": 4, "page": 1}).json()
    assert stale["applied"] is False and stale["lessons"][2]["furthest_page"] == 3
    _code(call(api, "PUT", f"/products/{c}/reviews/me", owner, json={"rating": 6}), 400, "invalid_request")
    _code(call(api, "DELETE", f"/products/{c}/reviews/me", owner), 404, "not_found")
    _code(call(api, "POST", f"/products/{c}/questions", owner, json={"title": "?"}), 400, "invalid_request")
    asked = call(
        api, "POST", f"/products/{c}/questions", owner, json={"title": "Why?", "body": "Tell"}
    ).json()
    qpath = f"/questions/{asked['question_id']}"
    _code(call(api, "PATCH", qpath, world.other, json={"state": "resolved"}), 403, "not_owner")
    _code(call(api, "PATCH", "/questions/qs_nope", owner, json={"state": "resolved"}), 404, "not_found")
    _code(call(api, "PATCH", qpath, owner, json={"state": "open"}), 409, "invalid_transition")
    _code(call(api, "PATCH", qpath, owner, json={"state": "answered"}), 400, "invalid_request")
    cert = {"product_id": c, "holder_name": "Ada"}
    _code(call(api, "POST", "/me/certificates", owner, json={"product_id": c}), 400, "invalid_request")
    _code(call(api, "POST", "/me/certificates", owner, json=cert), 403, "not_completed")
    with api.app.state.services.store.write() as conn:  # completion as the server measures it
        conn.exec_driver_sql(f"UPDATE edu_enrollments SET completed_at = 1 WHERE product_id = '{c}'")
    assert call(api, "POST", "/me/certificates", owner, json=cert).status_code == 201
    _code(call(api, "POST", "/me/certificates", owner, json=cert), 409, "already_issued")


def test_every_route_answers_429_with_retry_after_past_the_limit(
    make_api: Any, settings: Any, monkeypatch: Any
) -> None:
    monkeypatch.setenv("RATE_LIMIT_SCALE", "1")
    monkeypatch.setenv("RATE_LIMIT_GUEST", "3")
    api = make_api(settings)
    replies = [api.get(f"{BASE}/catalog") for _ in range(4)]
    assert [r.status_code for r in replies] == [200, 200, 200, 429]
    assert replies[-1].json()["code"] == "too_many_requests" and int(replies[-1].headers["retry-after"]) >= 1


def test_the_refund_window_ends_exactly_fifteen_days_after_payment(world: SimpleNamespace) -> None:
    """At ``paid_at + 15 days`` a refund is still granted; one second later it is 422."""
    api = world.api
    on_time, late = student(api), student(api)
    orders = [buy(api, on_time, world.course), buy(api, late, world.course)]
    assert orders[0]["paid_at"] == orders[1]["paid_at"] == api.clock.now()  # the clock stands still
    ends = orders[0]["refundable_until"]
    assert ends == orders[0]["paid_at"] + 15 * 86_400
    api.clock.advance(ends - api.clock.now())
    granted = call(api, "POST", f"/orders/{orders[0]['order_id']}/refund-requests", on_time, json={})
    assert granted.status_code == 201, granted.text
    api.clock.advance(1)
    refused = call(api, "POST", f"/orders/{orders[1]['order_id']}/refund-requests", late, json={})
    _code(refused, 422, "outside_refund_window")
