"""The community under concurrency and crashes, on SQLite and PostgreSQL: 20 concurrent likes by one
user make one like; users racing for one nickname: one wins; a post to 10,000 followers, with the
fan-out and the delivery workers killed mid-run, reaches each follower exactly once per channel."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from svc_api.accounts.tables import accounts
from svc_api.community import service as community
from svc_api.notifications import outbox
from svc_api.notifications import service as notifications
from svc_api.notifications.tables import messenger_links
from svc_api.notifications.tables import notifications as records
from svc_api.notifications.transports import MailFiles
from svc_api.settings import Settings
from tests.api.community_helpers import APPLICATION, make_leader
from tests.api.conftest import SIGNALS_T0
from tests.api.fakes.botapi import TOKEN, running_bot

FOLLOWERS = 10_000
LINKED = 300


def test_twenty_concurrent_likes_by_one_user_make_one(capi: Any) -> None:
    _, lt = make_leader(capi)
    t = capi.register()["session_token"]
    post_id = capi.user("community_post_create", {"content": "x"}, token=lt).json()["data"]["post_id"]
    with ThreadPoolExecutor(10) as pool:
        codes = sorted(
            pool.map(
                lambda _: capi.user("community_post_like", {"post_id": post_id}, token=t).status_code,
                range(20),
            )
        )
    assert codes == [200] + [409] * 19
    [post] = capi.get("/tradingdata", params={"request_type": "community_posts"}).json()["posts"]
    assert post["like_count"] == "1"


def test_users_racing_for_one_nickname_one_wins(capi: Any) -> None:
    tokens = [capi.register()["session_token"] for _ in range(6)]
    with ThreadPoolExecutor(6) as pool:
        replies = list(pool.map(lambda t: capi.user("community_leader_apply", APPLICATION, token=t), tokens))
    assert sorted(r.status_code for r in replies) == [200] + [409] * 5
    states = [capi.user("community_leader_application_get", token=t).json()["data"]["status"] for t in tokens]
    assert sorted(states) == ["none"] * 5 + ["pending"]


def _followers(store: Any, leader_id: str) -> list[str]:
    ids = [f"F{i:05d}" for i in range(FOLLOWERS)]
    rows = [
        {
            "svc_id": s,
            "email": f"{s.lower()}@example.com",
            "password_hash": "!",
            "password_salt": "!",
            "referral_code": f"R{s}",
            "created_at": SIGNALS_T0,
        }
        for s in ids
    ]
    links = [
        {"svc_id": s, "chat_id": str(9000 + i), "linked_at": SIGNALS_T0} for i, s in enumerate(ids[:LINKED])
    ]
    with store.write() as conn:
        conn.execute(accounts.insert(), rows)
        conn.execute(messenger_links.insert(), links)
    community.add_followers(store, leader_id, ids, now=SIGNALS_T0)
    return ids


def _dies_on(call: int, real: Any) -> Any:
    calls = {"n": 0}

    def run(*args: Any, **kwargs: Any) -> Any:
        calls["n"] += 1
        if calls["n"] == call:
            raise SystemExit("worker killed")
        return real(*args, **kwargs)

    return run


@pytest.mark.slow
def test_a_post_to_10000_followers_survives_killed_workers(
    capi: Any, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    services = capi.app.state.services
    store = services.store
    leader_id, lt = make_leader(capi)
    ids = _followers(store, leader_id)
    capi.user("community_post_create", {"title": "Weekly", "content": "Levels to watch"}, token=lt)

    # the fan-out dies inside its fourth batch (after writing it, before committing)
    monkeypatch.setattr(outbox.queries, "insert_outbox", _dies_on(4, outbox.queries.insert_outbox))
    with pytest.raises(SystemExit):
        notifications.run_fanouts(store, now=capi.clock.now(), batch=1000)
    monkeypatch.undo()
    assert notifications.run_fanouts(store, now=capi.clock.now(), batch=1000) == FOLLOWERS - 3000

    with running_bot() as bot:
        transports = notifications.transports_for(settings.replace(bot_api_url=bot.url, bot_token=TOKEN))
        # the delivery worker dies writing its 2,510th file and again on its 120th bot message
        monkeypatch.setattr(MailFiles, "send", _dies_on(2510, MailFiles.send))
        with pytest.raises(SystemExit):
            while notifications.deliver_due(store, transports, now=capi.clock.now(), limit=1000)["sent"]:
                pass
        monkeypatch.undo()
        bot_send = transports["bot"].send
        monkeypatch.setattr(transports["bot"], "send", _dies_on(120, bot_send))
        capi.clock.advance(outbox.LEASE_SECONDS)  # the dead worker's claims lapse
        with pytest.raises(SystemExit):
            while notifications.deliver_due(store, transports, now=capi.clock.now(), limit=1000)["sent"]:
                pass
        monkeypatch.undo()
        capi.clock.advance(outbox.LEASE_SECONDS)
        while notifications.deliver_due(store, transports, now=capi.clock.now(), limit=1000)["sent"]:
            pass
        texts = [m["chat_id"] for m in bot.sent]

    assert notifications.outbox_counts(store, "community_post") == {
        ("mail", "sent"): FOLLOWERS,
        ("bot", "sent"): LINKED,
    }
    assert sorted(texts) == sorted(str(9000 + i) for i in range(LINKED))  # each linked chat once
    files = list((Path(settings.var_dir) / "mail").glob("*.eml"))
    assert len(files) == FOLLOWERS
    with store.read() as conn:
        per_user = conn.execute(
            sa.select(records.c.svc_id, sa.func.count())
            .where(records.c.event_type == "community_post")
            .group_by(records.c.svc_id)
        ).all()
    assert sorted(per_user) == sorted((s, 1) for s in ids)
