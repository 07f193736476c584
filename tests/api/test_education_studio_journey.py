"""Issue 18's story through HTTP, as a new instructor would live it, on SQLite and PostgreSQL and on
the local object store and S3 (moto): gates, onboarding, a draft, a real video uploaded in parts with
a lost client, a PDF, the curriculum, submission, the operator's approval, a student who buys, watches
and asks, the answer, sales, the month's payout run with exact figures, and learning after unpublish."""

from __future__ import annotations

import datetime as dt
from types import SimpleNamespace

import httpx
import pytest

from tests.api.community_helpers import admin
from tests.api.education_helpers import buy, call, read_through, student
from tests.api.upload_helpers import (
    leader_desk,
    make_pdf,
    make_video,
    moto_server,
    receipts,
    register,
    send_parts,
    upload_whole,
)

moto_endpoint = pytest.fixture(scope="session")(moto_server)
desk = pytest.fixture(params=["local", "s3"])(leader_desk)

PROFILE = {
    "country": "TR",
    "legal_entity": "individual",
    "tax_id": "12345678901",
    "bank_account": "TR330006100519786457841326",
    "e_document_type": "e_invoice",
}
DRAFT = {
    "kind": "course",
    "title": "Tape reading for beginners",
    "subtitle": "Orders as they print",
    "description": "Reading the time and sales.",
    "language": "en",
    "level": "beginner",
    "price": {"amount_minor": 4900, "currency": "USD"},
    "topics": [],
}


def _video_in_parts_with_a_lost_client(d: SimpleNamespace, video: bytes) -> str:
    """Parts 1 and 2 reach the store, only part 1's receipt the service; a new client reconciles,
    sends the rest and completes. The upload's id."""
    upload = register(d, video)
    upload_id = upload["upload_id"]
    first = send_parts(d, upload, video, [1, 2])
    receipts(d, upload_id, {1: first[1]})
    reconciled = call(d.api, "POST", f"/studio/uploads/{upload_id}/reconcile", d.token, json={}).json()
    assert reconciled["received_parts"] == [[1, 2]]
    rest = send_parts(d, upload, video)
    assert receipts(d, upload_id, rest).json()["missing_parts"] == 0
    done = call(d.api, "POST", f"/studio/uploads/{upload_id}/complete", d.token, json={})
    assert done.status_code == 200 and done.json()["status"] == "processing", done.text
    return str(upload_id)


def test_a_leader_onboards_uploads_publishes_sells_answers_and_is_paid(
    desk: SimpleNamespace, cli_env: None
) -> None:
    api, token = desk.api, desk.token
    assert api.clock.now() == int(dt.datetime(2026, 10, 1, tzinfo=dt.UTC).timestamp())

    # the gates, then onboarding through the hosted page and the operator's identity check
    gates = call(api, "GET", "/seller/status", token).json()["gates"]
    assert {gate["state"] for gate in gates.values()} == {"missing"}
    session = call(api, "POST", "/seller/onboarding-sessions", token, json={}).json()
    assert (
        api.post(
            session["onboarding_url"], json={"accept_contract": True, "payout_profile": PROFILE}
        ).status_code
        == 200
    )
    admin("edu", "confirm-identity", desk.svc_id)
    assert call(api, "GET", "/seller/status", token).json()["ready_for_payouts"] is True

    # a draft; a real video in parts with a lost client; a PDF; the worker probes both
    draft = call(api, "POST", "/studio/products", token, json=DRAFT)
    product_id, tag = draft.json()["product_id"], draft.headers["etag"]
    video, pdf = make_video(), make_pdf(pages=4)
    video_id = _video_in_parts_with_a_lost_client(desk, video)
    pdf_id = upload_whole(desk, pdf, "pdf")["upload_id"]
    assert desk.run()["processed"] == 2

    # the curriculum on the processed uploads, under If-Match; then the submission
    tree = {
        "sections": [
            {
                "section_id": "s1",
                "title": "Tape",
                "lessons": [
                    {
                        "lesson_id": "v1",
                        "title": "First prints",
                        "kind": "video",
                        "preview": True,
                        "upload_id": video_id,
                    },
                    {
                        "lesson_id": "p1",
                        "title": "Cheat sheet",
                        "kind": "pdf",
                        "preview": False,
                        "upload_id": pdf_id,
                    },
                ],
            }
        ]
    }
    stale = call(
        api,
        "PUT",
        f"/studio/products/{product_id}/curriculum",
        token,
        json=tree,
        headers={"If-Match": '"product-9"'},
    )
    assert stale.status_code == 412
    placed = call(
        api, "PUT", f"/studio/products/{product_id}/curriculum", token, json=tree, headers={"If-Match": tag}
    )
    assert placed.status_code == 200, placed.text
    lessons = placed.json()["draft"]["curriculum"]["sections"][0]["lessons"]
    assert [
        (lesson["lesson_id"], lesson.get("duration_seconds"), lesson.get("pages")) for lesson in lessons
    ] == [("v1", 2, None), ("p1", None, 4)]
    receipt = call(api, "POST", f"/studio/products/{product_id}/submissions", token, json={})
    assert receipt.status_code == 201 and receipt.json()["state"] == "pending", receipt.text
    again = call(api, "POST", f"/studio/products/{product_id}/submissions", token, json={})
    assert again.status_code == 409 and again.json()["code"] == "already_pending"
    assert call(api, "GET", f"/products/{product_id}").status_code == 404  # not published yet

    # the operator approves: the snapshot is revision 1 in the catalog
    [waiting] = admin("edu", "pending")
    assert waiting["submission_id"] == receipt.json()["submission_id"]
    decided = admin("edu", "review", waiting["submission_id"], "approve")
    assert (decided["state"], decided["revision"]) == ("approved", 1)
    page = call(api, "GET", f"/products/{product_id}").json()
    assert (page["title"], page["price"]["amount_minor"], page["duration_seconds"], page["lesson_count"]) == (
        DRAFT["title"],
        4900,
        2,
        2,
    )

    # a later draft edit changes nothing published
    now_tag = call(api, "GET", f"/studio/products/{product_id}", token).headers["etag"]
    call(
        api,
        "PATCH",
        f"/studio/products/{product_id}",
        token,
        json={"title": "Renamed"},
        headers={"If-Match": now_tag},
    )
    assert call(api, "GET", f"/products/{product_id}").json()["title"] == DRAFT["title"]

    # a student buys, plays the video from its signed URL, and asks; the leader answers
    learner = student(api)
    buy(api, learner, product_id)
    started = call(
        api, "POST", f"/products/{product_id}/playback-sessions", learner, json={"lesson_id": "v1"}
    ).json()
    url = started["credentials"]["media_url"]
    media = api.get(url) if url.startswith("/") else httpx.get(url)
    assert media.status_code == 200 and media.content == video
    question = call(
        api,
        "POST",
        f"/products/{product_id}/questions",
        learner,
        json={"title": "Speed", "body": "How fast?"},
    )
    answer = call(
        api,
        "POST",
        f"/studio/questions/{question.json()['question_id']}/answers",
        token,
        json={"body": "Slowly."},
    )
    assert answer.status_code == 201 and answer.json()["state"] == "answered"

    # sales, then the month's payout run: 4900 - 20 % commission (980) - 3 % fee (147) = 3773,
    # 37.73 USD at 41.25 = 1556.36 TRY
    summary = call(api, "GET", "/studio/analytics/sales", token).json()["summary"]
    assert summary == {
        "orders": 1,
        "refunded_orders": 0,
        "gross": {"amount_minor": 4900, "currency": "USD"},
        "refunds": {"amount_minor": 0, "currency": "USD"},
        "net": {"amount_minor": 4900, "currency": "USD"},
    }
    admin("edu", "fx-rate", "USD", "TRY", "41.25")
    report = admin(
        "edu", "payout-run", "--now", str(int(dt.datetime(2026, 11, 25, 12, tzinfo=dt.UTC).timestamp()))
    )
    assert (report["period"], report["payouts"]) == ("2026-10", 1)
    [statement] = call(api, "GET", "/studio/payout-statements", token).json()["items"]
    assert (
        statement["gross"]["amount_minor"],
        statement["deductions"]["total"]["amount_minor"],
        statement["net"]["amount_minor"],
    ) == (4900, 1127, 3773)
    assert statement["payout"]["amount"] == {"amount_minor": 155636, "currency": "TRY"}

    # unpublished: no new sales, and the student still learns
    assert call(api, "POST", f"/studio/products/{product_id}/unpublish", token, json={}).status_code == 200
    assert call(api, "POST", "/checkouts", student(api), json={"product_id": product_id}).status_code == 422
    assert call(api, "GET", f"/me/enrollments/{product_id}/progress", learner).status_code == 200
    read = read_through(api, learner, product_id, "p1", 4)
    assert read.status_code == 200 and read.json()["lessons"][1]["completed"] is True


def test_a_submission_whose_lesson_media_was_withdrawn_is_not_ready(
    desk: SimpleNamespace, cli_env: None
) -> None:
    api, token = desk.api, desk.token
    session = call(api, "POST", "/seller/onboarding-sessions", token, json={}).json()
    api.post(session["onboarding_url"], json={"accept_contract": True, "payout_profile": PROFILE})
    admin("edu", "confirm-identity", desk.svc_id)
    draft = call(api, "POST", "/studio/products", token, json=DRAFT)
    pdf_id = upload_whole(desk, make_pdf(pages=2), "pdf")["upload_id"]
    desk.run()
    tree = {
        "sections": [
            {
                "section_id": "s1",
                "title": "Book",
                "lessons": [
                    {
                        "lesson_id": "p1",
                        "title": "Sheet",
                        "kind": "pdf",
                        "preview": False,
                        "upload_id": pdf_id,
                    }
                ],
            }
        ]
    }
    path = f"/studio/products/{draft.json()['product_id']}"
    placed = call(
        api, "PUT", f"{path}/curriculum", token, json=tree, headers={"If-Match": draft.headers["etag"]}
    )
    assert (
        placed.status_code == 200
        and "upload_id" in placed.json()["draft"]["curriculum"]["sections"][0]["lessons"][0]
    )
    assert call(api, "DELETE", f"/studio/uploads/{pdf_id}", token).status_code == 200
    refused = call(api, "POST", f"{path}/submissions", token, json={})
    assert (refused.status_code, refused.json()["code"]) == (422, "not_ready"), refused.text
