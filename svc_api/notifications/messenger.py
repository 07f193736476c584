"""Linking a messenger chat to an account with a one-time code, through the bot.

The user asks for a code (``messenger_link``), sends ``/start <code>`` to the bot, and the bot worker,
reading the bot's updates, links that chat to the account and confirms in the chat. A code works
once, for 15 minutes.

Example:
    >>> parse_start("/start AB12CD34"), parse_start("hello")
    ('AB12CD34', None)
"""

from __future__ import annotations

import logging
import secrets
from typing import Any

from svc_api.accounts import service as accounts
from svc_api.core.store import Store
from svc_api.notifications import outbox_queries as queries
from svc_api.notifications.transports import BotApi, DeliveryFailed

logger = logging.getLogger(__name__)

CODE_TTL = 15 * 60
_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"


def parse_start(text: object) -> str | None:
    """The code of a ``/start <code>`` message (None for anything else)."""
    if not isinstance(text, str):
        return None
    parts = text.strip().split()
    if len(parts) == 2 and parts[0] == "/start" and parts[1].isalnum() and len(parts[1]) <= 16:
        return parts[1].upper()
    return None


def new_code(store: Store, svc_id: str, *, now: int) -> dict[str, Any]:
    """A one-time link code for ``svc_id``: ``{code, expires_at, command}``.

    Example:
        >>> from svc_api.migrations import migrate
        >>> from svc_api.accounts.service import register
        >>> store = Store("sqlite:///:memory:"); _ = migrate(store)
        >>> with store.write() as conn:
        ...     sid = register(conn, "c@example.com", "password1", ip="::1", ttl=60).svc_id
        >>> reply = new_code(store, sid, now=100)
        >>> len(reply["code"]), reply["expires_at"], reply["command"].startswith("/start ")
        (8, 1000, True)
    """
    code = "".join(secrets.choice(_ALPHABET) for _ in range(8))
    with store.write() as conn:
        queries.insert_code(conn, code=code, svc_id=svc_id, expires_at=now + CODE_TTL)
    return {"code": code, "expires_at": now + CODE_TTL, "command": f"/start {code}"}


def poll_updates(store: Store, bot: BotApi, *, now: int, name: str = "bot") -> int:
    """Read the bot's new updates and link the chats that sent a valid code; how many were linked."""
    with store.read() as conn:
        offset = queries.bot_offset(conn, name)
    try:
        updates = bot.updates(offset)
    except DeliveryFailed as exc:
        logger.warning("bot updates: %s", exc)
        return 0
    linked = 0
    for update in updates:
        message = update.get("message") or {}
        code = parse_start(message.get("text"))
        chat = (message.get("chat") or {}).get("id")
        with store.write() as conn:
            svc_id = queries.use_code(conn, code, now) if code and chat is not None else None
            if svc_id is not None:
                queries.link_chat(conn, svc_id, str(chat), now)
                accounts.set_messenger_linked(conn, svc_id, True)
            queries.set_bot_offset(conn, name, int(update.get("update_id", offset)) + 1)
        if svc_id is not None:
            linked += 1
            _confirm(bot, str(chat), f"This chat now receives the notifications of account {svc_id}.")
        elif code is not None and chat is not None:
            _confirm(bot, str(chat), "That code is unknown, used or expired: ask the app for a new one.")
    return linked


def _confirm(bot: BotApi, chat: str, text: str) -> None:
    try:
        bot.send(f"link-{chat}", chat, "svc", text)
    except DeliveryFailed as exc:
        logger.warning("bot confirmation to %s: %s", chat, exc)
