"""Helpers of the education tests: an education client with keys and tokens, and published sample
products made through the catalog's domain functions (the studio is issue 18)."""

from __future__ import annotations

import uuid
from typing import Any

import httpx

from svc_api.education.catalog import service as catalog

BASE = "/education/v1"

VIDEO_COURSE = {
    "kind": "course",
    "title": "Reading candles like a pro",
    "subtitle": "Price action from the first candle",
    "description": "Wicks, bodies and what they say about supply and demand.",
    "language": "en",
    "level": "beginner",
    "price_minor": 4900,
    "currency": "USD",
    "topics": ["price-action", "candles"],
    "curriculum": {
        "sections": [
            {
                "section_id": "s1",
                "title": "Basics",
                "lessons": [
                    {
                        "lesson_id": "l1",
                        "title": "What a candle is",
                        "kind": "video",
                        "duration_seconds": 100,
                        "preview": True,
                        "media_key": "media/l1.bin",
                    },
                    {
                        "lesson_id": "l2",
                        "title": "Wicks",
                        "kind": "video",
                        "duration_seconds": 200,
                        "preview": False,
                        "media_key": "media/l2.bin",
                    },
                ],
            },
            {
                "section_id": "s2",
                "title": "Reading",
                "lessons": [
                    {"lesson_id": "l3", "title": "Cheat sheet", "kind": "pdf", "pages": 4, "preview": False},
                ],
            },
        ]
    },
}

PUBLICATION = {
    "kind": "publication",
    "title": "Risk management handbook",
    "subtitle": "Position sizing, stops",
    "description": "A short book on sizing positions by risk.",
    "language": "en",
    "level": "intermediate",
    "price_minor": 1500,
    "currency": "USD",
    "topics": ["risk"],
    "curriculum": {
        "sections": [
            {
                "section_id": "b1",
                "title": "Book",
                "lessons": [
                    {"lesson_id": "p1", "title": "The handbook", "kind": "pdf", "pages": 10, "preview": False}
                ],
            }
        ]
    },
}

TR_PROFILE = {
    "country": "TR",
    "legal_entity": "individual",
    "tax_id": "12345678901",
    "bank_account": "TR330006100519786457841326",
    "e_document_type": "e_archive",
}
"""A complete payout profile of a Turkey-based individual seller."""
DE_PROFILE = {
    "country": "DE",
    "legal_entity": "company",
    "tax_id": "1234567890",
    "bank_account": "DE89370400440532013000",
    "swift_bic": "COBADEFFXXX",
    "payout_currency": "EUR",
}
"""A complete payout profile of an international company, paid in EUR."""

TOPICS = {"price-action": "Price action", "candles": "Candlesticks", "risk": "Risk management"}


def key() -> str:
    """A fresh idempotency key."""
    return f"k-{uuid.uuid4()}"


def headers(token: str | None = None, idem: str | None = None, **extra: str) -> dict[str, str]:
    """Authorization and Idempotency-Key headers."""
    out = dict(extra)
    if token is not None:
        out["Authorization"] = f"Bearer {token}"
    if idem is not None:
        out["Idempotency-Key"] = idem
    return out


def call(
    api: Any,
    method: str,
    path: str,
    token: str | None = None,
    *,
    json: Any = None,
    idem: str | None = "auto",
    **kw: Any,
) -> httpx.Response:
    """An education request; changes get a fresh Idempotency-Key unless ``idem`` says otherwise."""
    sent_key = key() if idem == "auto" and method in ("POST", "PUT", "PATCH", "DELETE") else idem
    if idem == "auto" and method == "GET":
        sent_key = None
    extra = kw.pop("headers", {})
    return api.request(method, BASE + path, json=json, headers=headers(token, sent_key, **extra), **kw)


def leader(api: Any) -> str:
    """A registered account that will own products (its svc_id)."""
    return str(api.register()["svc_id"])


def publish(api: Any, leader_id: str, fields: dict[str, Any] = VIDEO_COURSE, **changes: Any) -> str:
    """A published product through the catalog's domain function; its id."""
    store, now = api.app.state.services.store, api.app.state.services.clock.now()
    with store.write() as conn:
        for topic_id, name in TOPICS.items():
            catalog.add_topic(conn, topic_id, name)
        return catalog.publish_product(conn, leader_id, {**fields, **changes}, now=now)


def student(api: Any) -> str:
    """A registered account's session token."""
    return str(api.register()["session_token"])


def buy(api: Any, token: str, product_id: str) -> dict[str, Any]:
    """Check out and pay in the sandbox; the paid order."""
    created = call(api, "POST", "/checkouts", token, json={"product_id": product_id})
    assert created.status_code == 201, created.text
    url = created.json()["checkout_url"]
    assert api.request("POST", url + "/approve").status_code == 200
    order = call(api, "GET", f"/orders/{created.json()['order_id']}", token).json()
    assert order["state"] == "paid", order
    return order


def read_through(
    api: Any, token: str, product_id: str, lesson_id: str, pages: int, *, first_version: int = 1
) -> httpx.Response:
    """Read pages 1..``pages`` of a reading lesson at the fastest plausible pace (the clock moves
    ``SECONDS_PER_PAGE`` before each page); the last checkpoint's reply."""
    from svc_api.education.learning.progress import SECONDS_PER_PAGE

    reply = None
    for page in range(1, pages + 1):
        api.clock.advance(SECONDS_PER_PAGE)
        body = {"lesson_id": lesson_id, "version": first_version + page - 1, "page": page}
        reply = call(api, "PUT", f"/me/enrollments/{product_id}/reading-progress", token, json=body)
        assert reply.status_code == 200, reply.text
    assert reply is not None
    return reply
