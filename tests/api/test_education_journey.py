"""Issue 17's story through HTTP, as a new student would live it, on SQLite and PostgreSQL."""

from __future__ import annotations

from typing import Any

from tests.api.conftest import Api
from tests.api.education_helpers import PUBLICATION, VIDEO_COURSE, call, key, leader, publish, read_through


def _watch(api: Api, token: str, product_id: str, lesson_id: str, duration: int) -> dict[str, Any]:
    """Play a lesson to its end in 20-second heartbeats, 20 wall-clock seconds apart."""
    started = call(
        api, "POST", f"/products/{product_id}/playback-sessions", token, json={"lesson_id": lesson_id}
    )
    assert started.status_code == 201, started.text
    session = started.json()
    assert session["credentials"]["media_url"].startswith("/education/v1/media/")
    reply: dict[str, Any] = {}
    for seq, position in enumerate(range(20, duration + 20, 20), start=1):
        api.clock.advance(20)
        events = [{"type": "heartbeat", "position": min(position, duration)}]
        answer = call(
            api,
            "POST",
            f"/playback-sessions/{session['session_id']}/events",
            token,
            json={"seq": seq, "events": events},
        )
        assert answer.status_code == 200, answer.text
        reply = answer.json()
    closed = call(api, "DELETE", f"/playback-sessions/{session['session_id']}", token)
    assert closed.status_code == 200 and closed.json()["closed"] is True
    return reply


def test_a_new_student_finds_buys_learns_certifies_reviews_and_refunds(capi: Api) -> None:
    api = capi
    teacher = leader(api)
    course = publish(api, teacher)
    book = publish(api, teacher, PUBLICATION)
    publish(api, teacher, VIDEO_COURSE, title="Advanced order flow", level="advanced", topics=["candles"])

    # a guest filters the catalog and reads the product and its locked curriculum
    found = call(
        api, "GET", "/catalog", params={"q": "candles", "topic": ["price-action"], "level": "beginner"}
    )
    assert found.status_code == 200
    assert [item["product_id"] for item in found.json()["items"]] == [course]
    assert found.json()["next_cursor"] is None and "viewer" not in found.json()["items"][0]
    detail = call(api, "GET", f"/products/{course}").json()
    assert detail["price"] == {"amount_minor": 4900, "currency": "USD"}
    assert (detail["rating"], detail["student_count"], detail["purchasable"]) == (
        {"average": 0.0, "count": 0},
        0,
        True,
    )
    tree = call(api, "GET", f"/products/{course}/curriculum").json()
    lessons = [lesson for section in tree["sections"] for lesson in section["lessons"]]
    assert [(item["lesson_id"], item["locked"]) for item in lessons] == [
        ("l1", False),
        ("l2", True),
        ("l3", True),
    ]
    assert all("media_key" not in item and "media_url" not in item for item in lessons)

    # registers, reads the capabilities, checks out with a key (a retry replays the same answer)
    token = api.register()["session_token"]
    assert call(api, "GET", "/commerce/capabilities", token).json()["checkout_open"] is True
    idem = key()
    created = call(api, "POST", "/checkouts", token, json={"product_id": course}, idem=idem)
    replayed = call(api, "POST", "/checkouts", token, json={"product_id": course}, idem=idem)
    assert created.status_code == replayed.status_code == 201
    assert replayed.json() == created.json() and replayed.headers["idempotent-replay"] == "true"
    order_id = created.json()["order_id"]
    assert created.json()["state"] == "awaiting_payment"

    # pays in the sandbox's hosted page, then polls the order to paid
    page = api.get(created.json()["checkout_url"])
    assert page.status_code == 200 and order_id in page.text
    assert api.post(created.json()["checkout_url"] + "/approve").json() == {
        "order_id": order_id,
        "outcome": "paid",
    }
    order = call(api, "GET", f"/orders/{order_id}", token).json()
    assert (order["state"], order["products"], order["amount"]["amount_minor"]) == ("paid", [course], 4900)

    # library and dashboard, never cached
    library = call(api, "GET", "/me/library", token)
    dashboard = call(api, "GET", "/me/dashboard", token)
    assert library.headers["cache-control"] == dashboard.headers["cache-control"] == "private, no-store"
    assert [(i["product_id"], i["status"]) for i in library.json()["items"]] == [(course, "not_started")]
    assert dashboard.json() | {"last_activity": None} == {
        "products": 1,
        "in_progress": 0,
        "completed": 0,
        "not_started": 1,
        "certificates": 0,
        "last_activity": None,
    }

    # watches both videos through events to completion and reads the PDF
    assert _watch(api, token, course, "l1", 100)["lesson"] | {"position_seconds": 0} == {
        "lesson_id": "l1",
        "tracked": True,
        "watched_seconds": 100.0,
        "duration_seconds": 100.0,
        "position_seconds": 0,
        "completed": True,
    }
    assert _watch(api, token, course, "l2", 200)["lesson"]["completed"] is True
    assert call(api, "GET", "/me/dashboard", token).json()["in_progress"] == 1
    read = read_through(api, token, course, "l3", 4)
    assert read.status_code == 200 and read.json()["percent_complete"] == 100
    progress = call(api, "GET", f"/me/enrollments/{course}/progress", token).json()
    assert (progress["status"], progress["completed_lessons"], progress["total_lessons"]) == (
        "completed",
        3,
        3,
    )
    resume = call(api, "GET", f"/me/enrollments/{course}/resume", token).json()
    assert resume["lesson"]["lesson_id"] == "l3" and resume["lesson"]["page"] == 4

    # gets a certificate and verifies it logged out
    cert = call(
        api, "POST", "/me/certificates", token, json={"product_id": course, "holder_name": "Ada Lovelace"}
    )
    assert cert.status_code == 201 and len(cert.json()["verification_token"]) >= 32
    verified = call(api, "GET", f"/certificates/verify/{cert.json()['verification_token']}")
    assert verified.json() == {
        "valid": True,
        "course": {"product_id": course, "title": VIDEO_COURSE["title"]},
        "holder": {"name": "Ada Lovelace"},
        "issued_at": cert.json()["issued_at"],
        "revoked_at": None,
    }
    assert call(api, "GET", "/me/certificates", token).json()["items"] == [cert.json()]

    # reviews (the product's rating follows) and asks a question
    reviewed = call(
        api, "PUT", f"/products/{course}/reviews/me", token, json={"rating": 4, "comment": "Clear."}
    )
    assert reviewed.status_code == 200
    detail = call(api, "GET", f"/products/{course}", token).json()
    assert (detail["rating"], detail["student_count"], detail["viewer"]) == (
        {"average": 4.0, "count": 1},
        1,
        {"owned": True},
    )
    reviews = call(api, "GET", f"/products/{course}/reviews").json()["items"]
    assert [(r["rating"], r["comment"]) for r in reviews] == [(4, "Clear.")]
    asked = call(
        api, "POST", f"/products/{course}/questions", token, json={"title": "Wicks", "body": "Why long?"}
    )
    assert asked.status_code == 201 and asked.json()["state"] == "open"
    resolved = call(
        api, "PATCH", f"/questions/{asked.json()['question_id']}", token, json={"state": "resolved"}
    )
    assert resolved.json()["state"] == "resolved"

    # buys the book, reads some, refunds it within 15 days and loses access
    book_order = call(api, "POST", "/checkouts", token, json={"product_id": book}).json()
    api.post(book_order["checkout_url"] + "/approve")
    assert call(api, "GET", f"/orders/{book_order['order_id']}", token).json()["state"] == "paid"
    read_through(api, token, book, "p1", 3)
    api.clock.advance(14 * 86_400)
    refund = call(
        api, "POST", f"/orders/{book_order['order_id']}/refund-requests", token, json={"reason": "not for me"}
    )
    assert refund.status_code == 201, refund.text
    assert (refund.json()["state"], refund.json()["amount"]) == (
        "completed",
        {"amount_minor": 1500, "currency": "USD"},
    )
    status = call(
        api,
        "GET",
        f"/orders/{book_order['order_id']}/refund-requests/{refund.json()['refund_request_id']}",
        token,
    )
    assert status.json() == refund.json()
    assert call(api, "GET", f"/me/enrollments/{book}/progress", token).status_code == 403
    assert [i["product_id"] for i in call(api, "GET", "/me/library", token).json()["items"]] == [course]
    assert call(api, "GET", f"/orders/{book_order['order_id']}", token).json()["state"] == "refunded"
