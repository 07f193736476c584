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
