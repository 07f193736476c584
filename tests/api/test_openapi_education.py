"""The description of ``/education/v1`` is true, on SQLite and PostgreSQL: a student's journey through
every education operation, each reply checked against its schema, and schemathesis fuzzing every
operation as a guest, as the student, as a stranger, as the instructor and with read-only API keys of
the student and the instructor, over real data (a
published course and a publication, paid orders, a refund, a playback session, a question, a
certificate; the instructor's studio draft on processed uploads, a bundle, an onboarding session),
with no 5xx and no reply outside the schema."""

from __future__ import annotations

import time
from types import SimpleNamespace
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
import schemathesis
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import response_schema_conformance

from svc_api.core.clock import ManualClock
from svc_api.core.objectstore import open_object_store
from svc_api.education.catalog import service as catalog
from svc_api.education.learning.progress import SECONDS_PER_PAGE
from svc_api.education.studio import service as studio
from svc_api.education.uploads import processing
from tests.api.education_helpers import (
    PUBLICATION,
    TOPICS,
    VIDEO_COURSE,
    buy,
    call,
    key,
    leader,
    publish,
    read_through,
    student,
)
from tests.api.upload_helpers import make_pdf, make_video, upload_whole

CHECKS = [not_a_server_error, response_schema_conformance]
EXAMPLES = 12  # per operation and identity: 57 x 6 x 12 cases per store, about 2 min in CI
PREFIX = "/education/v1"


@pytest.fixture
def edu_api(settings: Any, make_api: Any, monkeypatch: pytest.MonkeyPatch) -> Any:
    """A client of an app on the parametrised store whose clock moves only when told (fuzzing sends
    thousands of requests: the per-minute limits are lifted). ``settings`` comes first so that its
    PostgreSQL schema is dropped after the app and its workers stopped, not under them."""
    monkeypatch.setenv("RATE_LIMIT_SCALE", "1000")
    return make_api(settings, clock=ManualClock(int(time.time())))


def http_only(app: Any) -> Any:
    """The app without its lifespan, for schemathesis: it would start the lifespan (a second set of
    workers beside the client's) and keep it for the rest of the process, past the store's end."""

    async def serve(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            raise RuntimeError("no lifespan: the test client runs it")  # read as "not supported"
        await app(scope, receive, send)

    return serve


class Contract:
    """Calls education operations through schemathesis and validates each reply against its schema."""

    def __init__(self, app: Any) -> None:
        self.schema = schemathesis.openapi.from_asgi("/openapi.json", http_only(app))
        self.called: set[str] = set()

    def __call__(
        self,
        label: str,
        status: int,
        token: str | None = None,
        *,
        idem: bool = True,
        path: dict[str, Any] | None = None,
        query: dict[str, Any] | None = None,
        body: Any = None,
        headers: dict[str, str] | None = None,
    ) -> Any:
        method, template = label.split(" ", 1)
        operation = self.schema.find_operation_by_label(f"{method} {PREFIX}{template}")
        assert operation is not None, label
        sent = dict(headers or {})
        if token is not None:
            sent["Authorization"] = f"Bearer {token}"
        if idem and method != "GET":
            sent["Idempotency-Key"] = key()
        fields: dict[str, Any] = {"path_parameters": path or {}, "query": query or {}, "headers": sent}
        if body is not None:
            fields |= {"body": body, "media_type": "application/json"}
        response = operation.Case(**fields).call_and_validate(checks=CHECKS)
        assert response.status_code == status, (label, response.status_code, response.text)
        self.called.add(label)
        kind = response.headers.get("content-type", [""])[0]
        return response.json() if kind.startswith("application/json") else response.content


def watch(api: Any, contract: Contract, token: str, product_id: str, lesson_id: str, seconds: int) -> str:
    """Watch a video lesson to its end through a playback session (20 s per batch); the session id."""
    session = contract(
        "POST /products/{product_id}/playback-sessions",
        201,
        token,
        path={"product_id": product_id},
        body={"lesson_id": lesson_id},
    )
    for seq, position in enumerate(range(20, seconds + 20, 20), start=1):
        api.clock.advance(20)
        batch = {"seq": seq, "events": [{"type": "heartbeat", "position": min(position, seconds)}]}
        contract(
            "POST /playback-sessions/{session_id}/events",
            200,
            token,
            path={"session_id": session["session_id"]},
            body=batch,
        )
    return str(session["session_id"])


@pytest.mark.slow
def test_real_replies_of_every_education_operation_match_the_schema(edu_api):
    api, edu = edu_api, Contract(edu_api.app)
    teacher = leader(api)
    course = publish(api, teacher, VIDEO_COURSE)
    book = publish(api, teacher, PUBLICATION)
    token, stranger = student(api), student(api)
    configured = api.app.state.services.settings
    objects = open_object_store(
        configured.object_store_url, var_dir=configured.var_dir, secret=bytes(configured.secret_key)
    )
    objects.put("media/l1.bin", b"candles")

    filters = {
        "q": "candles",
        "topic": ["candles"],
        "language": "en",
        "kind": "course",
        "level": "beginner",
        "max_price": 5000,
        "duration": "short",
        "sort": "price_low",
        "limit": 5,
    }
    edu("GET /catalog", 200, query=filters)
    edu("GET /catalog", 400, query={"topic": ["a", "b", "c", "d", "e", "f"]})
    edu("GET /products/{product_id}", 200, path={"product_id": course})
    edu("GET /products/{product_id}", 404, path={"product_id": "pr_0000000000000000"})
    edu("GET /products/{product_id}/curriculum", 200, path={"product_id": course})
    edu("GET /topics", 200, query={"q": "risk"})
    edu("GET /topics", 400, query={"q": "r"})
    edu("GET /leaders/{leader_id}/products", 200, path={"leader_id": teacher})
    edu("GET /leaders/{leader_id}/products", 404, path={"leader_id": "NOBODY"})
    edu("GET /commerce/capabilities", 200)
    edu("GET /me/dashboard", 401)

    # buying, and the sandbox provider's page, decision and callback
    edu("POST /checkouts", 400, token, idem=False, body={"product_id": course})
    created = edu(
        "POST /checkouts",
        201,
        token,
        body={"product_id": course, "expected_price": {"amount_minor": 4900, "currency": "USD"}},
    )
    edu("POST /checkouts", 409, token, body={"product_id": course})
    edu(
        "POST /checkouts",
        422,
        token,
        body={"product_id": course, "expected_price": {"amount_minor": 1, "currency": "USD"}},
    )
    sandbox = created["checkout_url"].rsplit("/", 1)[1]
    assert b"Sandbox checkout" in edu("GET /sandbox/checkout/{token}", 200, path={"token": sandbox})
    edu("POST /sandbox/checkout/{token}/{choice}", 200, path={"token": sandbox, "choice": "approve"})
    edu("POST /sandbox/checkout/{token}/{choice}", 409, path={"token": sandbox, "choice": "approve"})
    order = edu("GET /orders/{order_id}", 200, token, path={"order_id": created["order_id"]})
    assert order["state"] == "paid"
    edu("GET /orders/{order_id}", 403, stranger, path={"order_id": created["order_id"]})
    edu("POST /payments/callback", 401, body={"order_id": created["order_id"], "outcome": "paid"})
    edu("POST /checkouts", 409, token, body={"product_id": course})
    book_order = buy(api, token, book)

    # learning: library, dashboard, the course watched and read to completion
    edu("GET /me/library", 200, token)
    edu("GET /products/{product_id}", 200, token, path={"product_id": course})
    edu("GET /me/enrollments/{product_id}/resume", 200, token, path={"product_id": course})
    edu("GET /me/enrollments/{product_id}/resume", 403, stranger, path={"product_id": course})
    for lesson_id, seconds in (("l1", 100), ("l2", 200)):
        session_id = watch(api, edu, token, course, lesson_id, seconds)
        edu("DELETE /playback-sessions/{session_id}", 200, token, path={"session_id": session_id})
        edu(
            "POST /playback-sessions/{session_id}/events",
            409,
            token,
            path={"session_id": session_id},
            body={"seq": 99, "events": [{"type": "rate", "rate": 1.5}]},
        )
    read_through(api, token, course, "l3", 3)  # at the reading pace; the contract checks the last page
    api.clock.advance(SECONDS_PER_PAGE)
    edu(
        "PUT /me/enrollments/{product_id}/reading-progress",
        200,
        token,
        path={"product_id": course},
        body={"lesson_id": "l3", "version": 4, "page": 4},
    )
    progress = edu("GET /me/enrollments/{product_id}/progress", 200, token, path={"product_id": course})
    assert progress["status"] == "completed", progress
    edu("GET /me/dashboard", 200, token)
    adopt = "POST /me/enrollments/{product_id}/revision-adoptions"
    edu(adopt, 428, token, path={"product_id": course})
    edu(adopt, 409, token, path={"product_id": course}, headers={"If-Match": progress["etag"]})
    with api.app.state.services.store.write() as conn:
        catalog.publish_revision(conn, course, VIDEO_COURSE["curriculum"], now=api.clock.now())
    edu(adopt, 412, token, path={"product_id": course}, headers={"If-Match": '"enrollment-999"'})
    edu(adopt, 200, token, path={"product_id": course}, headers={"If-Match": progress["etag"]})
    playing = edu(
        "POST /products/{product_id}/playback-sessions",
        201,
        token,
        path={"product_id": course},
        body={"lesson_id": "l1"},
    )
    media = urlsplit(playing["credentials"]["media_url"])
    signed = {name: values[0] for name, values in parse_qs(media.query).items()}
    media_key = media.path.removeprefix(f"{PREFIX}/media/")
    assert edu("GET /media/{key}", 200, path={"key": media_key}, query=signed) == b"candles"
    edu("GET /media/{key}", 403, path={"key": media_key}, query={**signed, "signature": "0" * 64})

    # engagement: review, question, certificate, refund
    review = "PUT /products/{product_id}/reviews/me"
    edu(review, 200, token, path={"product_id": course}, body={"rating": 5, "comment": "clear"})
    edu(review, 403, stranger, path={"product_id": course}, body={"rating": 1})
    edu("GET /products/{product_id}/reviews", 200, path={"product_id": course})
    edu("DELETE /products/{product_id}/reviews/me", 200, token, path={"product_id": course})
    edu("DELETE /products/{product_id}/reviews/me", 404, token, path={"product_id": course})
    asked = edu(
        "POST /products/{product_id}/questions",
        201,
        token,
        path={"product_id": course},
        body={"title": "Wicks?", "body": "How long is long?", "lesson_id": "l2"},
    )
    question = {"question_id": asked["question_id"]}
    edu("PATCH /questions/{question_id}", 200, token, path=question, body={"state": "resolved"})
    edu("PATCH /questions/{question_id}", 409, token, path=question, body={"state": "resolved"})
    edu("PATCH /questions/{question_id}", 403, stranger, path=question, body={"state": "open"})
    edu("POST /me/certificates", 403, stranger, body={"product_id": course, "holder_name": "Eve"})
    issued = edu("POST /me/certificates", 201, token, body={"product_id": course, "holder_name": "Ada L."})
    edu("POST /me/certificates", 409, token, body={"product_id": course, "holder_name": "Ada L."})
    edu("GET /me/certificates", 200, token, query={"limit": 1})
    edu("GET /me/certificates", 400, token, query={"cursor": "x.y"})
    edu(
        "GET /certificates/verify/{verification_token}",
        200,
        path={"verification_token": issued["verification_token"]},
    )
    edu("GET /certificates/verify/{verification_token}", 404, path={"verification_token": "unknown"})
    refunds = "POST /orders/{order_id}/refund-requests"
    edu(refunds, 403, stranger, path={"order_id": book_order["order_id"]}, body={})
    refund = edu(refunds, 201, token, path={"order_id": book_order["order_id"]}, body={"reason": "duplicate"})
    edu(refunds, 409, token, path={"order_id": book_order["order_id"]}, body={})
    api.clock.advance(16 * 86_400)
    edu(refunds, 422, token, path={"order_id": created["order_id"]}, body={})
    ids = {"order_id": book_order["order_id"], "refund_request_id": refund["refund_request_id"]}
    edu("GET /orders/{order_id}/refund-requests/{refund_request_id}", 200, token, path=ids)
    edu("GET /orders/{order_id}/refund-requests/{refund_request_id}", 403, stranger, path=ids)
    documented = {op.ok().label for op in edu.schema.get_all_operations()}
    education = {label.replace(PREFIX, "", 1) for label in documented if f" {PREFIX}/" in label}
    # The instructor routes (issue 18, landed after this journey) are only fuzzed, below.
    learner = {label for label in education if not label.split(" ")[1].startswith(("/studio/", "/seller/"))}
    assert len(learner) == 31 and sorted(learner - edu.called) == []


def studio_data(api: Any, token: str, teacher: str, real_course: str) -> dict[str, Any]:
    """The instructor's studio: two more published products in a bundle, a draft whose curriculum
    holds a processed video and a processed PDF, and an open onboarding session (the seller gates
    stay missing, so no submission ever freezes the draft). Real values for the instructor's
    fuzzing, over the shared ones."""
    in_bundle = [
        publish(api, teacher, VIDEO_COURSE, title="Bundle video"),
        publish(api, teacher, PUBLICATION, title="Bundle book"),
    ]
    price = {"amount_minor": 5000, "currency": "USD"}
    bundle = call(
        api,
        "POST",
        "/studio/bundles",
        token,
        json={"title": "Both", "price": price, "product_ids": in_bundle},
    )
    draft = call(
        api,
        "POST",
        "/studio/products",
        token,
        json={
            "kind": "course",
            "title": "Tape reading",
            "language": "en",
            "level": "beginner",
            "price": price,
        },
    )
    desk = SimpleNamespace(api=api, token=token)
    uploads = {
        "video": upload_whole(desk, make_video(), "video")["upload_id"],
        "pdf": upload_whole(desk, make_pdf(pages=2, attachment=1024), "pdf")["upload_id"],
    }
    services = api.app.state.services
    processing.run_once(services.store, processing.multipart_of(services), now=api.clock.now())
    product_id = draft.json()["product_id"]
    lessons = [
        {"lesson_id": f"{kind[0]}1", "title": kind, "kind": kind, "upload_id": upload_id}
        for kind, upload_id in uploads.items()
    ]
    tree = {"sections": [{"section_id": "s1", "title": "Tape", "lessons": lessons}]}
    placed = call(
        api,
        "PUT",
        f"/studio/products/{product_id}/curriculum",
        token,
        json=tree,
        headers={"If-Match": draft.headers["etag"]},
    )
    onboarding = call(api, "POST", "/seller/onboarding-sessions", token, json={})
    assert (bundle.status_code, placed.status_code, onboarding.status_code) == (201, 200, 201), placed.text
    return {
        "product_id": [product_id, product_id, real_course],  # the bundle's are never unpublished
        "bundle_id": [bundle.json()["bundle_id"]],
        "upload_id": list(uploads.values()),
        "uploads": uploads,
        "in_bundle": in_bundle,
        "token": [onboarding.json()["onboarding_url"].rsplit("/", 1)[1]],
        "If-Match": ["*", "*", placed.headers["etag"], bundle.headers["etag"]],
    }


def real_data(api: Any) -> dict[str, Any]:
    """A teacher's course (bought, watched, read, certified and reviewed by the student; a newer
    revision to adopt), publication (bought and refunded) and a third product (bought by the student,
    a checkout left open by the stranger); a question, an open playback session and its media; the
    teacher, an instructor, has a studio (:func:`studio_data`). Returns the identities' headers and,
    for each parameter, real values for the fuzzer to plant (the instructor's over the shared)."""
    account = api.register()
    teacher, teaching = str(account["svc_id"]), str(account["session_token"])
    with api.app.state.services.store.write() as conn:
        studio.grant_role(conn, teacher, "leader", now=api.clock.now())
    course, book = publish(api, teacher, VIDEO_COURSE), publish(api, teacher, PUBLICATION)
    other = publish(api, teacher, VIDEO_COURSE, title="Order flow", price_minor=2500)
    token, stranger = student(api), student(api)
    refunded, paid = buy(api, token, book), buy(api, token, other)
    buy(api, token, course)  # never refunded: its order stays out of the fuzzer's reach
    refund = call(api, "POST", f"/orders/{refunded['order_id']}/refund-requests", token, json={})
    pending = call(api, "POST", "/checkouts", stranger, json={"product_id": other}).json()
    for lesson_id, seconds in (("l1", 100), ("l2", 200)):
        session = call(
            api, "POST", f"/products/{course}/playback-sessions", token, json={"lesson_id": lesson_id}
        )
        for seq in range(1, seconds // 20 + 1):
            api.clock.advance(20)
            batch = {"seq": seq, "events": [{"type": "heartbeat", "position": 20 * seq}]}
            call(api, "POST", f"/playback-sessions/{session.json()['session_id']}/events", token, json=batch)
        call(api, "DELETE", f"/playback-sessions/{session.json()['session_id']}", token)
    etag = read_through(api, token, course, "l3", 4).headers["etag"]
    issued = call(api, "POST", "/me/certificates", token, json={"product_id": course, "holder_name": "Ada"})
    call(api, "PUT", f"/products/{course}/reviews/me", token, json={"rating": 4})
    asked = call(api, "POST", f"/products/{course}/questions", token, json={"title": "Why?", "body": "Tell."})
    playing = call(
        api, "POST", f"/products/{course}/playback-sessions", token, json={"lesson_id": "l1"}
    ).json()
    with api.app.state.services.store.write() as conn:  # a newer revision to adopt
        catalog.publish_revision(conn, course, VIDEO_COURSE["curriculum"], now=api.clock.now())
    media = urlsplit(playing["credentials"]["media_url"])
    configured = api.app.state.services.settings
    objects = open_object_store(
        configured.object_store_url, var_dir=configured.var_dir, secret=bytes(configured.secret_key)
    )
    objects.put("media/l1.bin", b"candles")
    assert refund.status_code == 201 and issued.status_code == 201 and asked.status_code == 201
    keys = {}
    for name, holder in (("student_read_key", token), ("instructor_read_key", teaching)):
        made = api.user("api_key_generate", {"label": "fuzz", "permissions": ["read"]}, token=holder)
        assert made.status_code == 200, made.text
        keys[name] = {
            "X-API-Key": made.json()["data"]["api_key"],
            "X-API-Secret": made.json()["data"]["api_secret"],
        }
    return {
        "identities": {
            "guest": {},
            "student": {"Authorization": f"Bearer {token}"},
            "stranger": {"Authorization": f"Bearer {stranger}"},
            "instructor": {"Authorization": f"Bearer {teaching}"},
            # read-only keys: every change refused (403), every read of their own answered
            **keys,
        },
        "instructor": studio_data(api, teaching, teacher, course),
        "currency": "USD",
        "topics": sorted(TOPICS),
        "product_id": [course, book, other],
        "order_id": [paid["order_id"], refunded["order_id"], pending["order_id"]],
        "refund_request_id": [refund.json()["refund_request_id"]],
        "leader_id": [teacher],
        "token": [pending["checkout_url"].rsplit("/", 1)[1]],
        "session_id": [playing["session_id"]],
        "question_id": [asked.json()["question_id"]],
        "verification_token": [issued.json()["verification_token"]],
        "lesson_id": ["l1", "l2", "l3", "p1"],
        "If-Match": ["*", etag],
        "media": (
            media.path.removeprefix(f"{PREFIX}/media/"),
            {k: v[0] for k, v in parse_qs(media.query).items()},
        ),
    }


def plant(case: schemathesis.Case, real: dict[str, Any], data: st.DataObject) -> None:
    """Replace generated ids (path, body, ``If-Match``, a media URL) with real ones."""
    for name in list(case.path_parameters or {}):
        if name in real:
            case.path_parameters[name] = data.draw(st.sampled_from(real[name]))
    if case.path_parameters and "key" in case.path_parameters:
        case.path_parameters["key"], case.query = real["media"][0], dict(real["media"][1])
    if isinstance(case.body, dict):
        if "bundle_id" in case.body:  # no bundle is on sale: buy a product instead
            case.body = {"product_id": ""}
        for name in ("product_id", "lesson_id"):
            if name in case.body:
                case.body[name] = data.draw(st.sampled_from(real[name]))
        if "expected_price" in case.body and data.draw(st.booleans()):
            del case.body["expected_price"]  # a generated price is never the real one: 422
        plant_studio(case.body, real, data)
    if case.headers and "Idempotency-Key" in case.headers:
        case.headers["Idempotency-Key"] = key()  # generated keys are often the same: 409 reused
    if case.headers and "If-Match" in case.headers:
        case.headers["If-Match"] = data.draw(st.sampled_from(real["If-Match"]))


def plant_studio(body: dict[str, Any], real: dict[str, Any], data: st.DataObject) -> None:
    """The instructor's bodies: prices in the catalog's currency, known topics, the bundle's own
    published products, and lessons on processed uploads of their kind with distinct ids."""
    if isinstance(body.get("price"), dict):
        body["price"]["currency"] = real["currency"]
    if isinstance(body.get("topics"), list):
        body["topics"] = data.draw(st.lists(st.sampled_from(real["topics"]), max_size=3))
    if isinstance(body.get("product_ids"), list) and "in_bundle" in real:
        body["product_ids"] = list(real["in_bundle"])
    sections = body.get("sections") if "uploads" in real else None
    lessons = [
        lesson
        for section in sections or []
        if isinstance(section, dict)
        for lesson in section.get("lessons") or []
        if isinstance(lesson, dict)
    ]
    for number, lesson in enumerate(lessons):
        lesson["lesson_id"] = f"l{number}"
        if (
            "upload_id" in lesson
            and isinstance(lesson.get("kind"), str)
            and lesson["kind"] in real["uploads"]
        ):
            lesson["upload_id"] = real["uploads"][lesson["kind"]]


def fuzz(operation: Any, headers: dict[str, str], real: dict[str, Any], seen: dict[str, set[int]]) -> None:
    """``EXAMPLES`` generated cases of one operation, most over real ids; fails on a 5xx or a
    reply outside the schema."""

    @given(case=operation.as_strategy(), data=st.data())
    @hypothesis_settings(
        max_examples=EXAMPLES, deadline=None, database=None, suppress_health_check=list(HealthCheck)
    )
    def run(case: schemathesis.Case, data: st.DataObject) -> None:
        if data.draw(st.sampled_from([True, True, False])):  # two in three over real ids
            plant(case, real, data)
        response = case.call_and_validate(headers=headers, checks=CHECKS)
        seen.setdefault(operation.label.replace(PREFIX, "", 1), set()).add(response.status_code)

    run()


@pytest.mark.slow
def test_schemathesis_finds_no_server_error_and_no_schema_violation_in_education(edu_api):
    real = real_data(edu_api)
    schema = schemathesis.openapi.from_asgi("/openapi.json", http_only(edu_api.app))
    operations = [r.ok() for r in schema.get_all_operations() if r.ok().path.startswith(f"{PREFIX}/")]
    assert len(operations) == 57  # 31 student and public, 16 instructor, 10 upload operations
    seen: dict[str, set[int]] = {}
    for name, headers in real["identities"].items():
        values = {**real, **real["instructor"]} if name.startswith("instructor") else real
        for operation in operations:
            fuzz(operation, headers, values, seen)
    # Every operation was reached, and real data made these succeed (the rest need luckier inputs).
    assert len(seen) == 57
    succeeded = {label for label, statuses in seen.items() if statuses & {200, 201}}
    assert {
        "GET /catalog",
        "GET /products/{product_id}",
        "GET /products/{product_id}/curriculum",
        "GET /topics",
        "GET /leaders/{leader_id}/products",
        "GET /products/{product_id}/reviews",
        "GET /commerce/capabilities",
        "GET /certificates/verify/{verification_token}",
        "GET /orders/{order_id}",
        "GET /me/dashboard",
        "GET /me/library",
        "GET /me/certificates",
        "GET /me/enrollments/{product_id}/resume",
        "GET /me/enrollments/{product_id}/progress",
        "GET /sandbox/checkout/{token}",
        "POST /checkouts",
        "GET /seller/status",
        "POST /studio/products",
        "GET /studio/products/{product_id}",
        "PATCH /studio/products/{product_id}",
        "PUT /studio/products/{product_id}/curriculum",
        "POST /studio/bundles",
        "GET /studio/uploads",
        "GET /studio/analytics/sales",
    } <= succeeded, sorted(seen.items())


# Defects of the education code the fuzzing found, fixed; their tests stay as regressions.


def test_media_url_with_a_non_ascii_signature_is_a_403(edu_api):
    reply = call(edu_api, "GET", "/media/x?expires=99999999999&signature=%C3%A9")
    assert reply.status_code == 403, reply.text


def test_max_price_of_a_superscript_digit_is_a_400(edu_api):
    reply = call(edu_api, "GET", "/catalog?max_price=%C2%B2")
    assert reply.status_code == 400, reply.text


def test_nul_character_in_an_id_or_a_text_is_a_400(edu_api):
    teacher, token = leader(edu_api), student(edu_api)
    course = publish(edu_api, teacher, VIDEO_COURSE)
    buy(edu_api, token, course)
    probes = [
        ("GET", "/products/pr%00", None),
        ("GET", "/topics?q=ab%00", None),
        ("POST", "/checkouts", {"product_id": "pr\x00"}),
        ("PUT", f"/products/{course}/reviews/me", {"rating": 4, "comment": "ok\x00"}),
        ("POST", f"/products/{course}/questions", {"title": "Why\x00", "body": "so"}),
    ]
    statuses = [call(edu_api, method, path, token, json=body).status_code for method, path, body in probes]
    assert statuses == [400] * len(probes)


def test_sandbox_checkout_page_with_a_nul_token_is_not_a_server_error(edu_api):
    page = call(edu_api, "GET", "/sandbox/checkout/tok%00")
    decide = call(edu_api, "POST", "/sandbox/checkout/tok%00/approve")
    assert (page.status_code, decide.status_code) == (404, 404), (page.text, decide.text)


# Defects of the instructor code the fuzzing found, not fixed yet (the code is the lead's): each a
# 500 where a 400 is due. Strict: the day the code answers 400, these pass and the marker must go.


@pytest.fixture
def studio_desk(edu_api: Any) -> SimpleNamespace:
    """An instructor with two published products in a bundle, a draft and an open onboarding page."""
    account = edu_api.register()
    token, svc_id = account["session_token"], account["svc_id"]
    with edu_api.app.state.services.store.write() as conn:
        studio.grant_role(conn, svc_id, "leader", now=edu_api.clock.now())
    price = {"amount_minor": 5000, "currency": "USD"}
    products = [publish(edu_api, svc_id, VIDEO_COURSE), publish(edu_api, svc_id, PUBLICATION)]
    bundle = call(
        edu_api,
        "POST",
        "/studio/bundles",
        token,
        json={"title": "Both", "price": price, "product_ids": products},
    )
    draft = call(
        edu_api,
        "POST",
        "/studio/products",
        token,
        json={
            "kind": "course",
            "title": "Tape",
            "language": "en",
            "level": "beginner",
            "price": price,
        },
    )
    onboarding = call(edu_api, "POST", "/seller/onboarding-sessions", token, json={})
    assert (bundle.status_code, draft.status_code, onboarding.status_code) == (201, 201, 201)
    return SimpleNamespace(
        api=edu_api,
        token=token,
        price=price,
        bundle_id=bundle.json()["bundle_id"],
        product_id=draft.json()["product_id"],
        onboarding_url=onboarding.json()["onboarding_url"],
    )


def test_bundle_product_ids_that_are_not_strings_are_a_400(studio_desk):
    d = studio_desk
    created = call(
        d.api,
        "POST",
        "/studio/bundles",
        d.token,
        json={"title": "Both", "price": d.price, "product_ids": [[], []]},
    )
    changed = call(
        d.api,
        "PATCH",
        f"/studio/bundles/{d.bundle_id}",
        d.token,
        json={"product_ids": [{}, {"a": 1}]},
        headers={"If-Match": "*"},
    )
    assert (created.status_code, changed.status_code) == (400, 400), (created.text, changed.text)


def test_curriculum_whose_lessons_are_a_number_is_a_400(studio_desk):
    d = studio_desk
    tree = {"sections": [{"section_id": "s1", "title": "Tape", "lessons": 5}]}
    reply = call(
        d.api,
        "PUT",
        f"/studio/products/{d.product_id}/curriculum",
        d.token,
        json=tree,
        headers={"If-Match": "*"},
    )
    assert reply.status_code == 400, reply.text


def test_payout_profile_that_is_not_an_object_is_a_400(studio_desk):
    d = studio_desk
    statuses = [
        d.api.post(d.onboarding_url, json={"accept_contract": True, "payout_profile": profile}).status_code
        for profile in (5, [{}])
    ]
    assert statuses == [400, 400]


def test_upload_registration_with_a_list_kind_is_a_400(studio_desk):
    d = studio_desk
    body = {
        "filename": "a.mp4",
        "content_type": "video/mp4",
        "size_bytes": 1000,
        "sha256": "0" * 64,
        "kind": ["video"],
    }
    reply = call(d.api, "POST", "/studio/uploads", d.token, json=body)
    assert reply.status_code == 400, reply.text
