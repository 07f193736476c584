"""The bot's worker: python-telegram-bot's application in a thread of its own, with its own event
loop, so nothing of the bot ever runs on (or blocks) the request path.

Updates come by long polling (the library's updater: ``getUpdates`` waiting up to
``BOT_POLL_TIMEOUT`` s) unless ``BOT_WEBHOOK_URL`` is set: the worker then registers that URL with
the Bot API (with ``BOT_WEBHOOK_SECRET`` as its secret token) and the route ``POST /bot/webhook``
(:mod:`svc_api.bot.routes`) keeps each update in the store, where the worker picks it up. Every
``BOT_TICK_SECONDS`` the worker also deletes the secret messages whose time has come and edits the
outcome of orders that were still ``processing`` into their messages. On when ``BOT_API_URL`` and
``BOT_TOKEN`` are set.

Example:
    >>> from types import SimpleNamespace
    >>> bot_worker(SimpleNamespace(settings=SimpleNamespace(bot_api_url=None, bot_token="")))
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
import threading
import time
from typing import Any

from svc_api.bot import delivery as _delivery  # noqa: F401  (registers the chat composer)
from svc_api.bot import orders, queries

logger = logging.getLogger("svc_api.bot")

NAME = "messenger_bot"
ALLOWED_UPDATES = ["message", "callback_query"]
FAILING_FOR = 60.0
"""Seconds the health says ``failing`` after a failure (the Bot API or the store refused something)."""
KEEP_UPDATES = 2 * 86_400
"""Seconds an update_id is remembered: the Bot API redelivers an update for 24 hours at most."""


def bot_worker(services: Any) -> BotWorker | None:
    """The bot's worker, or None when no bot is configured."""
    settings = services.settings
    if not settings.bot_api_url or not settings.bot_token:
        return None
    if settings.bot_webhook_url and not settings.bot_webhook_secret:
        raise ValueError("BOT_WEBHOOK_URL needs BOT_WEBHOOK_SECRET (1-256 of A-Z a-z 0-9 _ -)")
    return BotWorker(services)


class BotWorker:
    """The worker protocol around the bot's application (see the module docstring)."""

    name = NAME

    def __init__(self, services: Any) -> None:
        self.services = services
        settings = services.settings
        self.mode = "webhook" if settings.bot_webhook_url else "polling"
        self.stats: dict[str, Any] = {
            "handled": 0,
            "replays": 0,
            "limited": 0,
            "failures": 0,
            "last_error": None,
        }
        from svc_api.bot.handlers import Handlers  # the library loads only where a bot runs

        self.handlers = Handlers(services, self.stats)
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._wake: asyncio.Event | None = None
        self._app: Any = None
        self._ready = threading.Event()
        self._ticks = 0

    # ---- the worker protocol ------------------------------------------------------------------

    def start(self) -> None:
        """Start the bot's thread (the library connects to the Bot API there)."""
        self._thread = threading.Thread(target=self._run, name=f"svc-{self.name}", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop polling and the application; wait for the thread."""
        loop, stop = self._loop, self._stop
        if loop is not None and stop is not None and not loop.is_closed():
            loop.call_soon_threadsafe(stop.set)
        if self._thread is not None:
            self._thread.join(self.services.settings.bot_poll_timeout + 15)

    def health(self) -> dict[str, Any]:
        """``running`` once connected to the Bot API (``failing`` before, and for a minute after any
        failure), the mode and the counts of updates handled, replays, throttled and failures."""
        alive = self._thread is not None and self._thread.is_alive()
        state = "stopped"
        if alive:
            recent = time.monotonic() - self.stats.get("failed_at", -math.inf) < FAILING_FOR
            state = "running" if self._ready.is_set() and not recent else "failing"
        shown = {k: v for k, v in self.stats.items() if k != "failed_at"}
        return {"state": state, "mode": self.mode, "ticks": self._ticks, **shown}

    def run_once(self) -> int:
        """One housekeeping pass, waited for (tests): what it did."""
        loop = self._loop
        if loop is None or not self._ready.is_set():
            raise RuntimeError("the bot is not connected to the Bot API yet")
        return asyncio.run_coroutine_threadsafe(self._housekeep(), loop).result(60)

    def wake(self) -> None:
        """Run the housekeeping now (a webhook update arrived)."""
        loop, wake = self._loop, self._wake
        if loop is not None and wake is not None and not loop.is_closed():
            loop.call_soon_threadsafe(wake.set)

    # ---- in the bot's thread ------------------------------------------------------------------

    def _run(self) -> None:
        asyncio.run(self._main())

    def _build(self) -> Any:
        from telegram.ext import ApplicationBuilder

        settings = self.services.settings
        base = settings.bot_api_url.rstrip("/")
        builder = (
            ApplicationBuilder()
            .token(settings.bot_token)
            .base_url(f"{base}/bot")
            .base_file_url(f"{base}/file/bot")
            .get_updates_read_timeout(settings.bot_poll_timeout + 10)
        )
        if self.mode == "webhook":
            builder = builder.updater(None)
        app = builder.build()
        self.handlers.install(app)
        return app

    async def _main(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._stop, self._wake = asyncio.Event(), asyncio.Event()
        settings = self.services.settings
        app = self._app = self._build()
        while not self._stop.is_set():
            try:
                await app.initialize()
                break
            except Exception as exc:  # the Bot API is unreachable or refuses the token: try again
                self.stats["failures"] += 1
                self.stats["last_error"] = type(exc).__name__
                self.stats["failed_at"] = time.monotonic()
                logger.warning("bot: cannot reach the Bot API (%s); retrying", exc)
                await self._pause(5.0)
        if self._stop.is_set():
            return
        try:
            await app.start()
            if self.mode == "polling":
                await app.updater.start_polling(
                    timeout=settings.bot_poll_timeout,
                    allowed_updates=ALLOWED_UPDATES,
                    error_callback=self._poll_error,
                )
            else:
                await app.bot.set_webhook(
                    settings.bot_webhook_url,
                    secret_token=settings.bot_webhook_secret,
                    allowed_updates=ALLOWED_UPDATES,
                )
            self.stats.pop("failed_at", None)
            self._ready.set()
            while not self._stop.is_set():
                try:
                    await self._housekeep()
                except Exception as exc:
                    self.stats["failures"] += 1
                    self.stats["last_error"] = type(exc).__name__
                    self.stats["failed_at"] = time.monotonic()
                    logger.exception("bot housekeeping failed")
                await self._pause(settings.bot_tick_seconds)
        finally:
            self._ready.clear()
            if app.updater is not None and app.updater.running:
                await app.updater.stop()
            if app.running:
                await app.stop()
            await app.shutdown()

    async def _pause(self, seconds: float) -> None:
        assert self._stop is not None and self._wake is not None
        waits = [asyncio.ensure_future(self._stop.wait()), asyncio.ensure_future(self._wake.wait())]
        await asyncio.wait(waits, timeout=seconds, return_when=asyncio.FIRST_COMPLETED)
        for w in waits:
            w.cancel()
        self._wake.clear()

    def _poll_error(self, exc: Exception) -> None:
        self.stats["failures"] += 1
        self.stats["last_error"] = type(exc).__name__
        self.stats["failed_at"] = time.monotonic()
        logger.warning("bot: getUpdates failed: %s", exc)

    async def _housekeep(self) -> int:
        """Webhook updates waiting, secret messages due, orders settled; old replay records forgotten."""
        from telegram import Update
        from telegram.error import BadRequest, TelegramError

        app, now, done = self._app, int(self.services.clock.now()), 0
        if self.mode == "webhook":
            for row in await asyncio.to_thread(self._take_queued, now):
                update = Update.de_json(json.loads(row.payload), app.bot)
                self.handlers.claimed.add(int(row.update_id))
                await app.update_queue.put(update)
                done += 1
        for row in await asyncio.to_thread(self._due_deletions, now):
            try:
                await app.bot.delete_message(int(row.chat_id), int(row.message_id))
            except BadRequest:
                pass  # already gone (the user deleted it, or it is older than the Bot API can delete)
            except TelegramError as exc:
                logger.warning("bot: message %s not deleted yet: %s", row.message_id, exc)
                continue
            await asyncio.to_thread(self._deleted, row.chat_id, int(row.message_id))
            done += 1
        for chat, message_id, text in await asyncio.to_thread(orders.settled, self.services, now=now):
            try:
                await app.bot.edit_message_text(text, chat_id=chat, message_id=message_id)
            except TelegramError as exc:
                logger.warning("bot: order outcome not shown in %s/%s: %s", chat, message_id, exc)
            done += 1
        if self._ticks % 600 == 0:
            await asyncio.to_thread(self._forget, now)
        self._ticks += 1
        return done

    def _take_queued(self, now: int) -> list[Any]:
        with self.services.store.write() as conn:
            return queries.take_queued(conn, now=now, limit=100)

    def _due_deletions(self, now: int) -> list[Any]:
        with self.services.store.read() as conn:
            return queries.due_deletions(conn, now=now)

    def _deleted(self, chat: str, message_id: int) -> None:
        with self.services.store.write() as conn:
            queries.deleted(conn, chat, message_id)

    def _forget(self, now: int) -> None:
        with self.services.store.write() as conn:
            queries.forget_updates(conn, before=now - KEEP_UPDATES)
            queries.drop_callbacks(conn, before=now)
        self.handlers.limiter.forget_idle(now=now)
