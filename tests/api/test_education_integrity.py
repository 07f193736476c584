"""Education integrity holes found by attack (issue 31): parallel playback sessions share one wall
clock, unknown event fields are a 400, ``credited_seconds`` is what watched time grew by; reading
progress is bounded by the document's page count and a plausible reading pace; a refund revokes the
certificate and takes the review out of the rating."""

from __future__ import annotations

from typing import Any

from svc_api.education.learning.progress import SECONDS_PER_PAGE
from tests.api.conftest import Api
from tests.api.education_helpers import PUBLICATION, buy, call, leader, publish, read_through, student


def _start(api: Api, token: str, product: str, lesson: str = "l2") -> str:
    started = call(api, "POST", f"/products/{product}/playback-sessions", token, json={"lesson_id": lesson})
    assert started.status_code == 201, started.text
    return str(started.json()["session_id"])


def _events(api: Api, token: str, session: str, seq: int, events: list[dict[str, Any]]) -> Any:
    return call(
        api, "POST", f"/playback-sessions/{session}/events", token, json={"seq": seq, "events": events}
    )


def test_parallel_sessions_of_a_lesson_share_one_wall_clock(capi: Api) -> None:
    api, token = capi, student(capi)
    course = publish(api, leader(api))
    buy(api, token, course)
    sessions = [_start(api, token, course) for _ in range(3)]
    api.clock.advance(5)
    # Each session claims 10 s at rate 2 within the same 5 s of wall time.
    credited = []
    for session in sessions:
        reply = _events(
            api, token, session, 1, [{"type": "rate", "rate": 2.0}, {"type": "heartbeat", "position": 10}]
        )
        assert reply.status_code == 200, reply.text
        credited.append(reply.json()["credited_seconds"])
    # 5 s of wall clock at rate 2 at most, over all three sessions together.
    assert sum(credited) <= 5 * 2.0 + 1e-9, credited
    progress = call(api, "GET", f"/me/enrollments/{course}/progress", token).json()
    lesson = next(item for item in _lessons(progress) if item["lesson_id"] == "l2")
    assert lesson["watched_seconds"] <= 10.0 and not lesson["completed"]
    # Sessions fed in turn each get the wall time since the other's batch: together, the wall clock.
    api.clock.advance(4)
    first = _events(api, token, sessions[0], 2, [{"type": "heartbeat", "position": 14}]).json()
    api.clock.advance(4)
    second = _events(api, token, sessions[1], 2, [{"type": "heartbeat", "position": 18}]).json()
    assert first["credited_seconds"] + second["credited_seconds"] <= 8 * 2.0 + 1e-9


def _lessons(progress: dict[str, Any]) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            if "lesson_id" in node and "completed" in node:
                found.append(node)
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(progress)
    return found


def test_unknown_event_fields_are_a_400_and_credited_seconds_is_the_growth_of_watched_time(capi: Api) -> None:
    api, token = capi, student(capi)
    course = publish(api, leader(api))
    buy(api, token, course)
    session = _start(api, token, course)
    api.clock.advance(10)
    refused = _events(api, token, session, 1, [{"type": "heartbeat", "position": 10, "percent": 100}])
    assert refused.status_code == 400 and "percent" in refused.json()["error"], refused.text
    assert _events(api, token, session, 1, [{"type": "rate", "rate": 1.0, "position": 3}]).status_code == 400
    first = _events(api, token, session, 1, [{"type": "heartbeat", "position": 10}]).json()
    assert first["credited_seconds"] == 10.0
    # The same stretch again (seek back, watch it again): watched time does not change.
    api.clock.advance(10)
    again = _events(
        api, token, session, 2, [{"type": "seek", "position": 0}, {"type": "heartbeat", "position": 10}]
    )
    assert again.status_code == 200, again.text
    assert again.json()["credited_seconds"] == 0.0
    assert again.json()["lesson"]["watched_seconds"] == 10.0


def test_reading_progress_is_bounded_by_the_page_count_and_the_reading_pace(capi: Api) -> None:
    api, token = capi, student(capi)
    course = publish(api, leader(api))  # l3: a 4-page PDF
    buy(api, token, course)
    reading = f"/me/enrollments/{course}/reading-progress"
    too_far = call(api, "PUT", reading, token, json={"lesson_id": "l3", "version": 1, "page": 99})
    assert too_far.status_code == 400 and "between 1 and 4" in too_far.json()["error"], too_far.text
    # The last page at once: the furthest page grows one page at a time, at the reading pace.
    first = call(api, "PUT", reading, token, json={"lesson_id": "l3", "version": 1, "page": 4}).json()
    lesson = next(item for item in first["lessons"] if item["lesson_id"] == "l3")
    assert (lesson["page"], lesson["furthest_page"], lesson["completed"]) == (4, 1, False)
    api.clock.advance(SECONDS_PER_PAGE - 1)
    early = call(api, "PUT", reading, token, json={"lesson_id": "l3", "version": 2, "page": 4}).json()
    assert next(i for i in early["lessons"] if i["lesson_id"] == "l3")["furthest_page"] == 1
    api.clock.advance(3 * SECONDS_PER_PAGE)
    done = call(api, "PUT", reading, token, json={"lesson_id": "l3", "version": 3, "page": 4}).json()
    lesson = next(item for item in done["lessons"] if item["lesson_id"] == "l3")
    assert (lesson["furthest_page"], lesson["completed"]) == (4, True)


def test_a_refund_revokes_the_certificate_and_takes_the_review_out_of_the_rating(capi: Api) -> None:
    api, buyer, other = capi, student(capi), student(capi)
    book = publish(api, leader(api), PUBLICATION)  # p1: a 10-page handbook
    order = buy(api, buyer, book)
    buy(api, other, book)
    assert read_through(api, buyer, book, "p1", 10).json()["status"] == "completed"
    cert = call(
        api, "POST", "/me/certificates", buyer, json={"product_id": book, "holder_name": "Ada"}
    ).json()
    verify = f"/certificates/verify/{cert['verification_token']}"
    assert call(api, "GET", verify).json()["valid"] is True
    call(api, "PUT", f"/products/{book}/reviews/me", buyer, json={"rating": 5})
    call(api, "PUT", f"/products/{book}/reviews/me", other, json={"rating": 3})
    assert call(api, "GET", f"/products/{book}").json()["rating"] == {"average": 4.0, "count": 2}
    assert call(api, "GET", "/me/dashboard", buyer).json()["certificates"] == 1

    refund = call(api, "POST", f"/orders/{order['order_id']}/refund-requests", buyer, json={})
    assert refund.status_code == 201, refund.text
    now = api.clock.now()
    checked = call(api, "GET", verify).json()
    assert (checked["valid"], checked["revoked_at"]) == (False, now)
    assert call(api, "GET", f"/products/{book}").json()["rating"] == {"average": 3.0, "count": 1}
    reviews = call(api, "GET", f"/products/{book}/reviews").json()["items"]
    assert [r["rating"] for r in reviews] == [3]
    dashboard = call(api, "GET", "/me/dashboard", buyer).json()
    assert (dashboard["products"], dashboard["certificates"]) == (0, 0)
    mine = call(api, "GET", "/me/certificates", buyer).json()["items"]
    assert [c["revoked_at"] for c in mine] == [now]
