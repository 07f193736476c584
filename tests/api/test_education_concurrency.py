"""Education under concurrency, on SQLite and PostgreSQL: one key gives one order, a callback
delivered twice at once grants once, two refund requests give one refund, and of two adoptions
under one ETag one wins and one gets 412."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

import sqlalchemy as sa

from svc_api.education.catalog import service as catalog
from svc_api.education.commerce import service as commerce
from svc_api.education.commerce.provider import provider_for
from tests.api.conftest import Api
from tests.api.education_helpers import BASE, VIDEO_COURSE, buy, call, key, leader, publish, student


def _at_once(n: int, send: Any) -> list[Any]:
    with ThreadPoolExecutor(n) as pool:
        return list(pool.map(lambda _: send(), range(n)))


def _count(api: Api, sql: str) -> int:
    with api.app.state.services.store.read() as conn:
        return int(conn.execute(sa.text(sql)).scalar_one())


def test_one_checkout_sent_20_times_at_once_with_one_key_makes_one_order(capi: Api) -> None:
    course, token, idem = publish(capi, leader(capi)), student(capi), key()
    replies = _at_once(
        20, lambda: call(capi, "POST", "/checkouts", token, json={"product_id": course}, idem=idem)
    )
    created = [r for r in replies if r.status_code == 201]
    assert {r.status_code for r in replies} <= {201, 409} and created
    assert all(r.json()["code"] == "request_in_progress" for r in replies if r.status_code == 409)
    assert len({r.json()["order_id"] for r in created}) == 1
    assert _count(capi, "SELECT count(*) FROM edu_orders") == 1


def test_a_payment_callback_delivered_twice_at_once_grants_one_entitlement(capi: Api) -> None:
    services = capi.app.state.services
    course, token = publish(capi, leader(capi)), student(capi)
    order = call(capi, "POST", "/checkouts", token, json={"product_id": course}).json()
    session_token = order["checkout_url"].rsplit("/", 1)[1]
    with services.store.write() as conn:
        commerce.sandbox_decide(
            conn, provider_for(services.settings), session_token, "paid", now=capi.clock.now()
        )
        event = conn.execute(sa.text("SELECT payload, signature FROM edu_payment_events")).one()
    headers = {"X-Sandbox-Signature": event.signature, "Content-Type": "application/json"}
    replies = _at_once(
        8, lambda: capi.post(f"{BASE}/payments/callback", content=event.payload, headers=headers)
    )
    assert [r.status_code for r in replies] == [200] * 8
    assert sum(r.json()["applied"] for r in replies) == 1
    assert _count(capi, "SELECT count(*) FROM edu_entitlements") == 1
    assert _count(capi, "SELECT count(*) FROM edu_ledger WHERE kind = 'sale'") == 1
    assert _count(capi, "SELECT student_count FROM edu_products") == 1
    forged = capi.post(
        f"{BASE}/payments/callback", content=event.payload, headers={"X-Sandbox-Signature": "0" * 64}
    )
    assert forged.status_code == 401 and forged.json()["code"] == "invalid_signature"


def test_two_refund_requests_at_once_give_one_refund(capi: Api) -> None:
    course, token = publish(capi, leader(capi)), student(capi)
    order_id = buy(capi, token, course)["order_id"]
    path = f"/orders/{order_id}/refund-requests"
    replies = _at_once(2, lambda: call(capi, "POST", path, token, json={}))
    assert sorted(r.status_code for r in replies) == [201, 409]
    assert _count(capi, "SELECT count(*) FROM edu_refunds") == 1
    assert _count(capi, "SELECT sum(amount_minor) FROM edu_ledger") == 0
    assert _count(capi, "SELECT count(*) FROM edu_entitlements WHERE revoked_at IS NULL") == 0


def test_of_two_adoptions_at_once_under_one_etag_one_succeeds_and_one_gets_412(capi: Api) -> None:
    course, token = publish(capi, leader(capi)), student(capi)
    buy(capi, token, course)
    tag = call(capi, "GET", f"/me/enrollments/{course}/progress", token).headers["etag"]
    with capi.app.state.services.store.write() as conn:
        catalog.publish_revision(conn, course, VIDEO_COURSE["curriculum"], now=capi.clock.now())
    path = f"/me/enrollments/{course}/revision-adoptions"
    replies = _at_once(2, lambda: call(capi, "POST", path, token, json={}, headers={"If-Match": tag}))
    assert sorted(r.status_code for r in replies) == [200, 412]
    assert _count(capi, "SELECT revision FROM edu_enrollments") == 2
