"""The chat handlers on python-telegram-bot: commands and button presses call the bot's use cases
(:mod:`svc_api.bot.service`, :mod:`svc_api.bot.orders`) in a worker thread, so the bot's event loop
never waits on the store, and send their replies. A guard before every handler lets each
``update_id`` act once (a replay changes nothing) and limits each chat's pace.

Example:
    >>> limiter = ChatLimiter(2)
    >>> [limiter.check("c", now=10) for _ in range(4)]
    ['ok', 'ok', 'warn', 'drop']
    >>> limiter.check("c", now=71)
    'ok'
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from typing import Any

from telegram import InlineKeyboardButton, InlineKeyboardMarkup, Message, Update
from telegram.error import TelegramError
from telegram.ext import (
    Application,
    ApplicationHandlerStop,
    CallbackQueryHandler,
    CommandHandler,
    ContextTypes,
    MessageHandler,
    TypeHandler,
    filters,
)

from svc_api.bot import orders, queries, service
from svc_api.bot.replies import Press, Reply, resolve
from svc_api.bot.texts import HELP
from svc_api.core.errors import ServiceError

logger = logging.getLogger("svc_api.bot")


class ChatLimiter:
    """At most ``per_minute`` updates per chat in any 60 s; the first one over is answered once."""

    def __init__(self, per_minute: int) -> None:
        self.per_minute = per_minute
        self._seen: dict[str, deque[int]] = {}
        self._warned: set[str] = set()

    def check(self, chat: str, *, now: int) -> str:
        """``ok``, ``warn`` (over the limit: say so once) or ``drop``."""
        seen = self._seen.setdefault(chat, deque())
        while seen and seen[0] <= now - 60:
            seen.popleft()
        if len(seen) < self.per_minute:
            seen.append(now)
            self._warned.discard(chat)
            return "ok"
        if chat in self._warned:
            return "drop"
        self._warned.add(chat)
        return "warn"

    def forget_idle(self, *, now: int) -> None:
        """Drop chats quiet for a minute (the memory of the limiter stays that of the active chats)."""
        for chat in [c for c, seen in self._seen.items() if not seen or seen[-1] <= now - 60]:
            del self._seen[chat]
            self._warned.discard(chat)


def markup(reply: Reply) -> InlineKeyboardMarkup | None:
    """The inline keyboard of a reply's buttons."""
    if not reply.buttons:
        return None
    return InlineKeyboardMarkup(
        [[InlineKeyboardButton(label, callback_data=token) for label, token in row] for row in reply.buttons]
    )


class Handlers:
    """The handlers of one bot, bound to the app's services (see :meth:`install`)."""

    def __init__(self, services: Any, stats: dict[str, Any]) -> None:
        self.services = services
        self.stats = stats
        self.limiter = ChatLimiter(services.settings.bot_rate_per_minute)
        self.claimed: set[int] = set()  # webhook updates the inbox already claimed

    def now(self) -> int:
        return int(self.services.clock.now())

    def install(self, app: Application[Any, Any, Any, Any, Any, Any]) -> None:
        """Add every handler to ``app``: the guard first, then the commands and buttons."""
        app.add_handler(TypeHandler(Update, self.guard), group=-1)
        commands = {
            "start": self.start,
            "unlink": self.simple(service.unlink),
            "account": self.simple(service.account),
            "plans": self.simple(service.plans),
            "login": self.simple(service.login),
            "key": self.key,
            "signals": self.signals,
            "help": self.help,
        }
        for name, callback in commands.items():
            app.add_handler(CommandHandler(name, callback))
        app.add_handler(CallbackQueryHandler(self.press))
        app.add_handler(MessageHandler(filters.ALL, self.help))
        app.add_error_handler(self.failed)

    async def guard(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        """Each update acts once; a chat over its pace is told once, then ignored for the minute."""
        uid = update.update_id
        if uid in self.claimed:
            self.claimed.discard(uid)
        elif not await asyncio.to_thread(self._claim, uid):
            self.stats["replays"] += 1
            raise ApplicationHandlerStop
        chat = update.effective_chat
        if chat is None:
            raise ApplicationHandlerStop
        verdict = self.limiter.check(str(chat.id), now=self.now())
        if verdict != "ok":
            self.stats["limited"] += 1
            if verdict == "warn":
                await context.bot.send_message(chat.id, "Too many requests from this chat: wait a minute.")
            raise ApplicationHandlerStop
        self.stats["handled"] += 1

    def _claim(self, update_id: int) -> bool:
        with self.services.store.write() as conn:
            return queries.claim_update(conn, update_id, now=self.now())

    async def send(self, chat: str, reply: Reply, context: Any, message: Message | None = None) -> None:
        """Send (or, for a reply to a button, edit into its message) and do what the reply asks after."""
        bot = context.bot
        if reply.edit and message is not None:
            await bot.edit_message_text(
                reply.text, chat_id=chat, message_id=message.message_id, reply_markup=markup(reply)
            )
            message_id = message.message_id
        else:
            message_id = (await bot.send_message(chat, reply.text, reply_markup=markup(reply))).message_id
        if reply.secret:
            at = self.now() + int(self.services.settings.bot_secret_ttl)
            await asyncio.to_thread(self._schedule_deletion, chat, message_id, at)
        if reply.follow is not None:
            svc_id, key = reply.follow
            await asyncio.to_thread(
                orders.follow, self.services, chat, message_id, svc_id, key, now=self.now()
            )

    def _schedule_deletion(self, chat: str, message_id: int, at: int) -> None:
        with self.services.store.write() as conn:
            queries.schedule_deletion(conn, chat, message_id, at=at)

    def simple(self, use_case: Any) -> Any:
        """A handler of a command without arguments."""

        async def handle(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
            chat = str(update.effective_chat.id)  # type: ignore[union-attr]
            reply = await asyncio.to_thread(use_case, self.services, chat, now=self.now())
            await self.send(chat, reply, context)

        return handle

    async def start(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        chat = str(update.effective_chat.id)  # type: ignore[union-attr]
        code = context.args[0] if context.args else None
        reply = await asyncio.to_thread(service.start, self.services, chat, code, now=self.now())
        await self.send(chat, reply, context)

    async def key(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        chat = str(update.effective_chat.id)  # type: ignore[union-attr]
        reply = await asyncio.to_thread(
            service.key, self.services, chat, list(context.args or []), now=self.now()
        )
        await self.send(chat, reply, context)

    async def signals(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        chat = str(update.effective_chat.id)  # type: ignore[union-attr]
        args = list(context.args or [])
        reply = await asyncio.to_thread(service.signal_settings, self.services, chat, args, now=self.now())
        await self.send(chat, reply, context)

    async def help(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        if update.effective_chat is not None and update.effective_message is not None:
            await context.bot.send_message(update.effective_chat.id, HELP)

    async def press(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        """A button: its token resolved in the store, then the action it stands for."""
        query = update.callback_query
        if query is None or query.message is None:
            return
        chat = str(query.message.chat.id)
        pressed = await asyncio.to_thread(self._resolve, chat, query.data)
        if isinstance(pressed, str):
            await query.answer(pressed, show_alert=True)
            return
        reply = await asyncio.to_thread(self._act, chat, pressed)
        await query.answer(reply.notice or None)
        message = query.message if isinstance(query.message, Message) else None
        await self.send(chat, reply, context, message)

    def _resolve(self, chat: str, data: object) -> Press | str:
        with self.services.store.read() as conn:
            return resolve(conn, chat, data, now=self.now())

    def _act(self, chat: str, press: Press) -> Reply:
        now, s = self.now(), self.services
        try:
            if press.action == "prefs":
                return service.press_preferences(s, chat, press.svc_id, press.args, now=now)
            if press.action == "order":
                return orders.preview(s, chat, press.svc_id, str(press.args["signal"]), now=now)
            if press.action == "confirm":
                return orders.confirm(s, chat, press.svc_id, press.token, press.args["params"], now=now)
            if press.action == "cancel":
                return Reply("Cancelled: no order was placed.", edit=True)
            if press.action == "revoke":
                return service.revoke_key(s, press.svc_id, str(press.args["api_key"]))
        except ServiceError as exc:
            return Reply(f"Refused: {exc.message or exc.error}.")
        return Reply("This button does nothing any more.")

    async def failed(self, update: object, context: ContextTypes.DEFAULT_TYPE) -> None:
        """A handler raised: logged and counted (a store outage, a Bot API that refused a message)."""
        self.stats["failures"] += 1
        self.stats["last_error"] = type(context.error).__name__
        self.stats["failed_at"] = time.monotonic()
        level = logging.WARNING if isinstance(context.error, TelegramError) else logging.ERROR
        logger.log(level, "bot update failed", exc_info=context.error)
