"""Delivery of notifications on every channel: app records, mail (files and SMTP), and the bot API
(a loopback fake), with one-time-code linking, retries with back-off, giving up, and the users'
switches; announcements reach the users whose ``announcement`` switch is on."""

from __future__ import annotations

import email
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from aiosmtpd.controller import Controller

from svc_api.core.clock import ManualClock
from svc_api.notifications import service as notifications
from svc_api.notifications.outbox import MAX_ATTEMPTS, backoff
from svc_api.settings import Settings
from tests.api.community_helpers import admin, make_leader, run_notification_workers
from tests.api.conftest import SIGNALS_T0
from tests.api.fakes.botapi import TOKEN, BotFake, running_bot


@pytest.fixture
def bot() -> Iterator[BotFake]:
    with running_bot() as fake:
        yield fake


def _app(make_api: Any, settings: Settings, **changes: Any) -> Any:
    quiet = settings.replace(
        notify_poll_seconds=0, community_purge_seconds=0, bot_poll_timeout=1.0, **changes
    )
    return make_api(quiet, clock=ManualClock(SIGNALS_T0))


def _says(bot: BotFake, chat_id: int, text: str) -> str:
    """``text`` from ``chat_id`` to the bot (its worker polls the fake); the bot's answer."""
    before = len(bot.texts_to(chat_id))
    bot.user_says(chat_id, text)
    deadline = time.monotonic() + 20
    while len(bot.texts_to(chat_id)) == before:
        assert time.monotonic() < deadline, f"no answer to {text!r}"
        time.sleep(0.05)
    return bot.texts_to(chat_id)[-1]


def _link(api: Any, bot: BotFake, token: str, chat_id: int) -> None:
    code = api.user("messenger_link", token=token).json()["data"]["code"]
    assert "now linked to account" in _says(bot, chat_id, f"/start {code}")


def test_a_linked_chat_gets_posts_through_the_bot_after_retries(
    bot: BotFake, settings: Settings, make_api: Any, cli_env: None
) -> None:
    api = _app(make_api, settings, bot_api_url=bot.url, bot_token=TOKEN)
    leader_id, lt = make_leader(api)
    fan = api.register()
    _link(api, bot, fan["session_token"], 4242)
    assert bot.texts_to(4242)[0].startswith(f"This chat is now linked to account {fan['svc_id']}:")
    info = api.user("account_info", token=fan["session_token"]).json()["data"]
    assert info["connections"]["messenger"] is True
    api.user("community_follow", {"leader_id": leader_id}, token=fan["session_token"])
    api.user("community_post_create", {"content": "Breakout watch"}, token=lt)

    bot.failures_left = 2
    # the mail goes out, the bot message fails and waits 30 s, then 60 s
    assert run_notification_workers(api) == {"sent": 1, "failed": 0, "retrying": 1}
    api.clock.advance(backoff(1) - 1)
    assert run_notification_workers(api) == {"sent": 0, "failed": 0, "retrying": 0}
    api.clock.advance(1)
    assert run_notification_workers(api) == {"sent": 0, "failed": 0, "retrying": 1}
    api.clock.advance(backoff(2))
    assert run_notification_workers(api) == {"sent": 1, "failed": 0, "retrying": 0}
    assert bot.texts_to(4242)[1:] == ["New post from Crypto Lab\n\nBreakout watch"]
    counts = notifications.outbox_counts(api.app.state.services.store, "community_post")
    assert counts == {("bot", "sent"): 1, ("mail", "sent"): 1}


def test_a_bot_that_keeps_failing_is_given_up_with_its_error(
    bot: BotFake, settings: Settings, make_api: Any, cli_env: None
) -> None:
    api = _app(make_api, settings, bot_api_url=bot.url, bot_token=TOKEN)
    user = api.register()
    api.user("notification_settings", {"mail": False}, token=user["session_token"])
    _link(api, bot, user["session_token"], 77)
    admin("announce", "Maintenance", "Sunday 02:00 UTC")
    bot.failures_left = 10**6
    outcomes = []
    for attempt in range(1, MAX_ATTEMPTS + 1):
        outcomes.append(run_notification_workers(api))
        api.clock.advance(backoff(attempt))
    assert outcomes[-1] == {"sent": 0, "failed": 1, "retrying": 0}, outcomes
    assert [o["retrying"] for o in outcomes[:-1]] == [1] * (MAX_ATTEMPTS - 1)
    store = api.app.state.services.store
    assert notifications.outbox_counts(store, "announcement") == {("bot", "failed"): 1}
    assert run_notification_workers(api) == {"sent": 0, "failed": 0, "retrying": 0}


def test_codes_work_once_and_expire(bot: BotFake, settings: Settings, make_api: Any) -> None:
    api = _app(make_api, settings, bot_api_url=bot.url, bot_token=TOKEN)
    user = api.register()
    code = api.user("messenger_link", token=user["session_token"]).json()["data"]
    assert (len(code["code"]), code["expires_at"], code["command"]) == (
        8,
        SIGNALS_T0 + 900,
        f"/start {code['code']}",
    )
    api.clock.advance(901)
    refused = "That code is unknown, used or expired: ask the app for a new one (messenger link)."
    assert _says(bot, 5, f"/start {code['code']}") == refused
    assert _says(bot, 6, "/start NOTACODE") == refused
    assert _says(bot, 7, "hello").startswith("Commands:\n/start")  # not a code: the bot's help
    fresh = api.user("messenger_link", token=user["session_token"]).json()["data"]["code"]
    assert "now linked to account " + user["svc_id"] in _says(bot, 8, f"/start {fresh}")
    assert _says(bot, 9, f"/start {fresh}") == refused
    with api.app.state.services.store.read() as conn:
        assert notifications.account_of_chat(conn, "8") == user["svc_id"]
        assert notifications.account_of_chat(conn, "9") is None


def test_messenger_link_needs_a_configured_bot(api: Any) -> None:
    user = api.register()
    reply = api.user("messenger_link", token=user["session_token"])
    assert (reply.status_code, reply.json()["error"]) == (404, "messenger_unavailable")


class _Inbox:
    def __init__(self) -> None:
        self.messages: list[email.message.Message] = []

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        self.messages.append(email.message_from_bytes(envelope.content))
        return "250 OK"


def test_mail_over_smtp_and_switches(settings: Settings, make_api: Any, cli_env: None) -> None:
    inbox = _Inbox()
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    controller = Controller(inbox, hostname="127.0.0.1", port=port)
    controller.start()
    try:
        api = _app(make_api, settings, smtp_url=f"smtp://127.0.0.1:{port}")
        on, no_mail, no_news = api.register(), api.register(), api.register()
        api.user("notification_settings", {"mail": False}, token=no_mail["session_token"])
        api.user("notification_settings", {"announcement": False}, token=no_news["session_token"])
        admin("announce", "New coins", "SOL and AVAX are listed")
        assert run_notification_workers(api)["sent"] == 1
    finally:
        controller.stop()
    assert [(m["To"], m["Subject"]) for m in inbox.messages] == [(on["email"], "New coins")]
    titles = {
        who: [
            n["title"]
            for n in api.user("notifications_list", token=u["session_token"]).json()["data"]["notifications"]
        ]
        for who, u in {"on": on, "no_mail": no_mail, "no_news": no_news}.items()
    }
    assert titles == {"on": ["New coins"], "no_mail": ["New coins"], "no_news": []}
    listed = api.get("/tradingdata", params={"request_type": "platform_notifications"}).json()[
        "notifications"
    ]
    assert [(n["title"], n["type"]) for n in listed] == [("New coins", "announcement")]
    assert not (Path(settings.var_dir) / "mail").exists()  # SMTP, not files
