"""The messenger bot end to end, through a loopback fake of the Bot API that records every call, by
long polling and by webhook, on SQLite and PostgreSQL: a new chat gets an account (and an app login
code), a second chat links an existing account by code, ``/account`` and ``/plans`` answer with the
account's figures, a key generated in the chat authenticates an HTTP call and its message is deleted,
a live signal arrives with buttons, a confirmation pressed three times (and one update redelivered)
places exactly one OCO order on the paper exchange, muting stops deliveries, and an unlinked chat's
buttons no longer act."""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from svc_api.bot.routes import SECRET_HEADER
from svc_api.core.clock import ManualClock
from svc_api.notifications import service as notifications
from svc_api.settings import Settings
from svc_api.signals import service as signals
from tests.api.community_helpers import run_notification_workers
from tests.api.conftest import SIGNALS_T0
from tests.api.exchange_helpers import linked_trader, live_signal
from tests.api.fakes.botapi import TOKEN, BotFake, running_bot

SECRET = "webhook-secret_1"


def wait_for(what: Callable[[], Any], timeout: float = 20.0) -> Any:
    """``what()`` once it is truthy (the bot works in its own thread)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = what()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"not within {timeout} s: {what}")


class Chats:
    """Users talking to the bot: updates go by the fake's getUpdates (polling) or to the service's
    webhook route with the secret header (webhook)."""

    def __init__(self, api: Any, fake: BotFake, webhook: bool) -> None:
        self.api, self.fake, self.webhook = api, fake, webhook

    def deliver(self, update: dict[str, Any]) -> dict[str, Any]:
        """Hand ``update`` to the bot (the webhook route's answer, in webhook mode)."""
        if self.webhook:
            reply = self.api.post("/bot/webhook", json=update, headers={SECRET_HEADER: SECRET})
            assert reply.status_code == 200, reply.text
            return dict(reply.json())
        self.fake.queue(update)
        return {}

    def say(self, chat: int, text: str) -> dict[str, Any]:
        """Send ``text`` from ``chat``; the bot's reply (a new message)."""
        before = len(self.fake.sent_to(chat)) + len(self.fake.deleted(chat))
        self.deliver(self.fake.message_update(chat, text))
        wait_for(lambda: len(self.fake.sent_to(chat)) + len(self.fake.deleted(chat)) > before)
        return self.fake.sent_to(chat)[-1]

    def press(self, chat: int, message_id: int, label: str, times: int = 1) -> list[dict[str, Any]]:
        """Press a button of a message ``times`` times; the updates sent, once all were answered."""
        data = self.fake.buttons(chat, message_id)[label]
        answered = len(self.fake.calls_of("answerCallbackQuery"))
        written = self._written()
        updates = [self.fake.press_update(chat, message_id, data) for _ in range(times)]
        for update in updates:
            self.deliver(update)
        wait_for(lambda: len(self.fake.calls_of("answerCallbackQuery")) >= answered + times)
        wait_for(lambda: self._written() >= written + times)  # the reply follows the answer
        return updates

    def _written(self) -> int:
        return len(self.fake.calls_of("sendMessage")) + len(self.fake.calls_of("editMessageText"))


@pytest.fixture
def fake() -> Iterator[BotFake]:
    with running_bot() as bot:
        yield bot


def _bot_api(make_api: Any, settings: Settings, signals_market: Path, fake: BotFake, webhook: bool) -> Any:
    changes: dict[str, Any] = {
        "data_dir": signals_market,
        "bot_api_url": fake.url,
        "bot_token": TOKEN,
        "bot_poll_timeout": 1.0,
        "bot_tick_seconds": 0.1,
        "bot_secret_ttl": 60.0,
        "notify_poll_seconds": 0,
    }
    if webhook:
        changes |= {"bot_webhook_url": "https://svc.example/bot/webhook", "bot_webhook_secret": SECRET}
    api = make_api(settings.replace(**changes), clock=ManualClock(SIGNALS_T0))
    wait_for(lambda: api.get("/healthz").json()["workers"]["messenger_bot"]["state"] == "running")
    return api


def _housekeeping(api: Any) -> Any:
    return api.app.state.services.workers.run_once("messenger_bot")


@pytest.mark.parametrize("mode", ["polling", "webhook"])
def test_the_bot_end_to_end(
    mode: str,
    fake: BotFake,
    settings: Settings,
    make_api: Any,
    signals_market: Path,
    monkeypatch: pytest.MonkeyPatch,
    cli_env: None,
) -> None:
    monkeypatch.setenv("SIGNAL_POLL_SECONDS", "0")  # the test steps the market and runs the signal worker
    webhook = mode == "webhook"
    api = _bot_api(make_api, settings, signals_market, fake, webhook)
    chats = Chats(api, fake, webhook)
    health = api.get("/healthz").json()["workers"]["messenger_bot"]
    assert (health["state"], health["mode"]) == ("running", mode)
    if webhook:
        assert fake.webhook["url"] == "https://svc.example/bot/webhook"
        assert fake.webhook["secret_token"] == SECRET

    # a new chat gets an account, and a one-time code that logs in to the app
    welcome = chats.say(1001, "/start")
    new_id = re.search(r"Your new account is (\w{6})", welcome["text"]).group(1)
    code = re.search(r"one-time code (\w{8})", welcome["text"]).group(1)
    grant = api.user("messenger_login", {"code": code}).json()["data"]
    info = api.user("account_info", token=grant["session_token"]).json()["data"]
    assert (info["svc_id"], info["plan"], info["connections"]["messenger"]) == (new_id, "free", True)
    assert api.user("messenger_login", {"code": code}).status_code == 401  # once
    assert "linked to account " + new_id in chats.say(1001, "/start")["text"]

    # a second chat links an existing account (a pro trader with a linked paper account) by code
    svc_id, token, _ = linked_trader(api)
    link = api.user("messenger_link", token=token).json()["data"]["code"]
    assert f"now linked to account {svc_id}" in chats.say(2002, f"/start {link}")["text"]
    assert "already linked" in chats.say(2002, f"/start {link}")["text"]

    # /account and /plans answer with the account's figures
    mine = api.user("account_info", token=token).json()["data"]
    page = chats.say(2002, "/account")["text"]
    assert f"Account {svc_id}\nPlan: pro · credits: {mine['svc_credits']:g}\n" in page
    assert f"Active strategies: {mine['active_own_strategies']} of 5" in page
    assert "Connections: exchange, messenger" in page
    plans = chats.say(2002, "/plans")["text"]
    assert (
        "pro: 50/month or 300/year · 120 requests/min · 5 active strategies · 25 coins per strategy" in plans
    )
    assert f"write {svc_id} in the transfer note" in plans

    # a key generated in the chat authenticates an HTTP call; its message is deleted after the TTL
    secret_message = chats.say(2002, "/key generate from-chat")
    key, secret = re.search(r"API key: (\S+)\nSecret: (\S+)", secret_message["text"]).groups()
    assert api.user("account_info", key=(key, secret)).json()["data"]["svc_id"] == svc_id
    assert "API key " + key in chats.say(2002, "/key status")["text"]
    assert "already exists" in chats.say(2002, "/key generate again")["text"]
    api.clock.advance(61)
    _housekeeping(api)
    assert secret_message["message_id"] in fake.deleted(2002)
    assert welcome["message_id"] in fake.deleted(1001)

    # ask mode: a live signal (market clock stepped) arrives with an order button and a mute button
    assert "Mode: ask" in chats.say(2002, "/signals mode ask")["text"]
    signal = live_signal(api, token)
    run_notification_workers(api)
    expected = (
        f"Signal smacross: LONG BTC\nEntry {signal['entry_price']} · take profit {signal['limit_price']}"
        f" · stop {signal['stop_price']}"
    )
    shown = wait_for(lambda: [m for m in fake.sent_to(2002) if m["text"] == expected])[0]
    assert sorted(fake.buttons(2002, shown["message_id"])) == ["Mute 1 h", "Place order…"]
    assert all(
        len(data) <= 64 and svc_id not in data for data in fake.buttons(2002, shown["message_id"]).values()
    )

    # the order button shows the preview; Confirm pressed three times (and one redelivery) places one OCO
    chats.press(2002, shown["message_id"], "Place order…")
    preview = fake.sent_to(2002)[-1]
    assert "Order preview on paper" in preview["text"] and "irreversible" in preview["text"]
    assert "Needs 0.00" in preview["text"] and "BTC; available 1" in preview["text"]
    confirm_data = fake.buttons(2002, preview["message_id"])["Confirm order"]
    updates = chats.press(2002, preview["message_id"], "Confirm order", times=3)
    again = chats.deliver(updates[0])  # the same update again: changes nothing
    placed = wait_for(
        lambda: fake.messages[("2002", preview["message_id"])]["text"].startswith("Order placed")
    )
    assert placed
    history = api.user("order_history", token=token).json()["data"]["orders"]
    assert len(history) == 1 and history[0]["signal_position_key"] == signal["position_key"]
    assert f"OCO {history[0]['order_id']}" in fake.messages[("2002", preview["message_id"])]["text"]
    if webhook:
        assert again == {"ok": True, "duplicate": True}
    else:
        wait_for(lambda: api.get("/healthz").json()["workers"]["messenger_bot"]["replays"] >= 1)
    assert len(api.user("order_history", token=token).json()["data"]["orders"]) == 1

    # muting stops deliveries: the next signal events are held back
    chats.press(2002, shown["message_id"], "Mute 1 h")
    assert fake.calls_of("answerCallbackQuery")[-1]["text"] == "Muted"
    assert "Signals: muted until" in chats.say(2002, "/signals mute 30d")["text"]
    before = len(fake.sent_to(2002))
    store, services = api.app.state.services.store, api.app.state.services

    def held() -> int:
        counts = notifications.outbox_counts(store)
        return sum(n for (channel, status), n in counts.items() if channel == "bot" and status == "skipped")

    for _ in range(24 * 30):  # muted days of market: signal events keep coming, none reaches the chat
        if held():
            break
        api.clock.advance(3600)
        signals.run_once(services)
        run_notification_workers(api)
    assert held() >= 1
    time.sleep(0.3)
    assert len(fake.sent_to(2002)) == before

    # a revoked link stops everything at once: the old chat's buttons no longer act
    assert "no longer linked" in chats.say(2002, "/unlink")["text"]
    answered = len(fake.calls_of("answerCallbackQuery"))
    chats.deliver(fake.press_update(2002, preview["message_id"], confirm_data))
    refusal = wait_for(lambda: fake.calls_of("answerCallbackQuery")[answered:])[0]
    assert refusal["text"] == "This button is not valid here."
    assert "not linked" in chats.say(2002, "/account")["text"]


def test_an_order_left_processing_is_followed_and_refusals_are_plain(
    fake: BotFake,
    settings: Settings,
    make_api: Any,
    signals_market: Path,
    monkeypatch: pytest.MonkeyPatch,
    cli_env: None,
) -> None:
    from svc_api.bot import orders
    from svc_api.bot import queries as bot_queries
    from svc_api.exchange import service as exchange
    from svc_api.exchange.interface import ExchangeUnavailable
    from svc_api.exchange.paper import PaperExchange

    monkeypatch.setenv("SIGNAL_POLL_SECONDS", "0")
    api = _bot_api(make_api, settings.replace(exchange_poll_seconds=0), signals_market, fake, False)
    chats = Chats(api, fake, webhook=False)
    svc_id, token, _ = linked_trader(api)
    link = api.user("messenger_link", token=token).json()["data"]["code"]
    chats.say(3003, f"/start {link}")
    chats.say(3003, "/signals mode ask")
    signal = live_signal(api, token)
    run_notification_workers(api)
    services, now = api.app.state.services, int(api.clock.now())

    # refusals in plain words: a position larger than the balance, a signal that is not live
    chats.say(3003, "/signals size 10000000")
    assert orders.preview(services, "3003", svc_id, signal["position_key"], now=now).text.startswith(
        "Not enough BTC on the exchange (1 available, "
    )
    gone = orders.preview(services, "3003", svc_id, "sig_none", now=now).text
    assert gone == "This signal has expired or closed, so it can no longer be ordered. No order was placed."
    chats.say(3003, "/signals size 100")

    # the exchange takes the order but its answer is lost: processing, then settled by the reconciler
    placed = PaperExchange.place_oco

    def lost_answer(self: Any, creds: Any, order: Any) -> Any:
        placed(self, creds, order)
        raise ExchangeUnavailable("timed out")

    monkeypatch.setattr(PaperExchange, "place_oco", lost_answer)
    shown = wait_for(
        lambda: [m for m in fake.sent_to(3003) if m["text"].startswith("Signal smacross: LONG BTC")]
    )
    chats.press(3003, shown[0]["message_id"], "Place order…")
    preview = fake.sent_to(3003)[-1]
    chats.press(3003, preview["message_id"], "Confirm order")
    message = ("3003", preview["message_id"])
    assert fake.messages[message]["text"].startswith("The order is being placed")

    def followed() -> list[Any]:  # the bot follows the order right after editing the message
        with services.store.read() as conn:
            return bot_queries.open_orders(conn)

    assert len(wait_for(followed)) == 1
    _housekeeping(api)
    assert fake.messages[message]["text"].startswith("The order is being placed")  # still processing
    monkeypatch.undo()
    api.clock.advance(30)
    assert exchange.run_reconciler(services) >= 1
    _housekeeping(api)
    [order] = api.user("order_history", token=token).json()["data"]["orders"]
    assert (
        fake.messages[message]["text"]
        == f"Order placed: OCO {order['order_id']} is {order['exchange_order_status']}."
    )

    # an exchange account unlinked meanwhile: the next order button says so
    api.user("exchange_unlink", token=token)
    refused = orders.preview(services, "3003", svc_id, signal["position_key"], now=int(api.clock.now())).text
    assert (
        refused
        == "No exchange account is linked to your account: link one in the app first. No order was placed."
    )


def test_each_chat_is_rate_limited(
    fake: BotFake, settings: Settings, make_api: Any, signals_market: Path
) -> None:
    api = _bot_api(make_api, settings.replace(bot_rate_per_minute=3), signals_market, fake, False)
    for _ in range(6):
        fake.user_says(4004, "/help")
    fake.user_says(4005, "/help")  # another chat is not held back by the first
    wait_for(lambda: len(fake.texts_to(4005)) == 1)
    wait_for(lambda: api.get("/healthz").json()["workers"]["messenger_bot"]["limited"] == 3)
    texts = fake.texts_to(4004)
    assert len(texts) == 4 and texts[3] == "Too many requests from this chat: wait a minute."
    assert all(t.startswith("Commands:") for t in texts[:3])
    api.clock.advance(61)  # a minute later the chat is heard again
    fake.user_says(4004, "/help")
    wait_for(lambda: len(fake.texts_to(4004)) == 5)
