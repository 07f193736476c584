"""The bot's routes and their documented errors: ``POST /bot/webhook`` (404 when not configured,
401 without the secret token, 400 for a body that is not an update, a redelivered update kept once)
and ``messenger_login`` (400 without a code, 401 for an unknown, used or expired one)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from svc_api.bot.routes import SECRET_HEADER
from svc_api.bot.service import LOGIN_CODE_TTL, login
from svc_api.notifications import service as notifications
from svc_api.settings import Settings
from tests.api.fakes.botapi import TOKEN, BotFake, running_bot

SECRET = "s3cret-token"


@pytest.fixture
def bot() -> Iterator[BotFake]:
    with running_bot() as fake:
        yield fake


def _webhook_api(bot: BotFake, settings: Settings, make_api: Any) -> Any:
    return make_api(
        settings.replace(
            bot_api_url=bot.url,
            bot_token=TOKEN,
            bot_webhook_url="https://svc.example/bot/webhook",
            bot_webhook_secret=SECRET,
        )
    )


def test_the_webhook_is_404_where_the_bot_polls_or_is_absent(api: Any) -> None:
    reply = api.post("/bot/webhook", json={"update_id": 1}, headers={SECRET_HEADER: SECRET})
    assert (reply.status_code, reply.json()["error"]) == (404, "not_found")


def test_the_webhook_checks_the_secret_token_and_the_body(
    bot: BotFake, settings: Settings, make_api: Any
) -> None:
    api = _webhook_api(bot, settings, make_api)
    for headers in ({}, {SECRET_HEADER: "wrong"}):
        reply = api.post("/bot/webhook", json={"update_id": 5}, headers=headers)
        assert (reply.status_code, reply.json()["error"]) == (401, "invalid_secret_token")
    ok = {SECRET_HEADER: SECRET, "Content-Type": "application/json"}
    for body in (b"not json", b"[1]", b'{"update_id": -1}', b'{"update_id": "7"}', b'{"message": {}}'):
        reply = api.post("/bot/webhook", content=body, headers=ok)
        assert (reply.status_code, reply.json()["error"]) == (400, "invalid_request"), body
    with api.app.state.services.store.read() as conn:
        assert conn.exec_driver_sql("SELECT count(*) FROM bot_updates").scalar() == 0  # nothing kept
    assert api.post("/bot/webhook", json={"update_id": 9}, headers=ok).json() == {
        "ok": True,
        "duplicate": False,
    }
    assert api.post("/bot/webhook", json={"update_id": 9}, headers=ok).json() == {
        "ok": True,
        "duplicate": True,
    }


def test_messenger_login_turns_a_code_into_a_session_once(settings: Settings, make_api: Any) -> None:
    api = make_api(settings)
    user = api.register()
    services = api.app.state.services
    with services.store.write() as conn:
        notifications.link_chat(conn, user["svc_id"], "77", now=api.clock.now())
    code = login(services, "77", now=int(api.clock.now())).text.split("code: ")[1].split()[0]
    missing = api.user("messenger_login", {})
    assert (missing.status_code, missing.json()["error"]) == (400, "invalid_request")
    unknown = api.user("messenger_login", {"code": "ZZZZ2222"})
    assert (unknown.status_code, unknown.json()["error"]) == (401, "invalid_login")
    grant = api.user("messenger_login", {"code": code.lower()}).json()["data"]  # case does not matter
    info = api.user("account_info", token=grant["session_token"]).json()["data"]
    assert info["svc_id"] == user["svc_id"]
    assert api.user("messenger_login", {"code": code}).status_code == 401  # once
    late = login(services, "77", now=int(api.clock.now()) - LOGIN_CODE_TTL).text.split("code: ")[1].split()[0]
    assert api.user("messenger_login", {"code": late}).status_code == 401  # expired
