"""A fresh install starts with the bundled samples, marked as such; a store with data keeps it."""

from __future__ import annotations

from typing import Any

import pytest

from svc_api.settings import Settings


def test_start_up_fills_an_empty_store_with_the_marked_samples_once(
    make_api: Any, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SVC_SEED_SAMPLES", "1")  # make_api turns it off for the other tests
    seeded = settings
    api = make_api(seeded)
    token = api.register()["session_token"]
    news = api.user("economic_news", {"limit": 50}, token=token).json()["data"]["news"]
    assert (len(news), {n["source"] for n in news}) == (15, {"sample"})
    calendar = api.user("economic_calendar", {"horizon_days": 90, "limit": 50}, token=token).json()["data"]
    assert calendar["calendar"] and {c["source"] for c in calendar["calendar"]} == {"sample"}
    again = make_api(seeded)  # a second start-up adds nothing
    assert len(again.user("economic_news", {"limit": 50}, token=token).json()["data"]["news"]) == 15


def test_start_up_loads_the_marked_sample_education_catalog_with_playable_media(
    make_api: Any, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SVC_SEED_SAMPLES", "1")
    api = make_api(settings)
    items = api.get("/education/v1/catalog").json()["items"]
    assert (len(items), {item["sample"] for item in items}) == (3, {True})
    free = next(item for item in items if item["price"]["amount_minor"] == 0)
    token = api.register()["session_token"]
    auth = {"Authorization": f"Bearer {token}"}
    order = api.post(
        "/education/v1/checkouts",
        json={"product_id": free["product_id"]},
        headers={**auth, "Idempotency-Key": "seed-free-book-0001"},
    )
    assert (order.status_code, order.json()["state"]) == (201, "paid")
    course = next(item for item in items if item["title"] == "Price action from zero")
    path = f"/education/v1/products/{course['product_id']}/playback-sessions"
    session = api.post(
        path, json={"lesson_id": "pa-1"}, headers={**auth, "Idempotency-Key": "seed-preview-00001"}
    )
    media = api.get(session.json()["credentials"]["media_url"])
    assert media.status_code == 200 and media.content == b"sample media of lesson pa-1\n"
    tampered = api.get(session.json()["credentials"]["media_url"][:-4] + "0000")
    assert tampered.status_code == 403 and tampered.json()["code"] == "invalid_media_url"
    assert len(make_api(settings).get("/education/v1/catalog").json()["items"]) == 3  # added once
