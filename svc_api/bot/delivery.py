"""How the outbox's chat messages are worded by the bot: signals arrive with their coin, side and
levels and with buttons (an order button in the ``ask`` mode, a mute button always); the signals of
strategies or coins the account's preferences leave out, or that arrive while it is muted, are held
back. Other notifications go out as their title and body. The ``bot`` and ``messenger`` switches of
``notification_settings`` decide before this whether a chat message exists at all.

Registered with the notifications domain when this module is imported (:func:`compose`).

Example:
    >>> SIGNAL_EVENTS
    ('signal_opened', 'signal_closed', 'signal_withheld')
"""

from __future__ import annotations

from typing import Any

from svc_api.bot import preferences
from svc_api.bot.replies import button
from svc_api.bot.texts import signal_text
from svc_api.notifications import service as notifications
from svc_api.signals import service as signals

SIGNAL_EVENTS = ("signal_opened", "signal_closed", "signal_withheld")


def compose(store: Any, row: Any, now: int) -> notifications.ChatMessage | None:
    """The chat message of an outbox row (None: the account's preferences hold it back)."""
    if row.event_type not in SIGNAL_EVENTS or not row.event_key:
        return notifications.plain(row)
    with store.write() as conn:
        brief = signals.signal_brief(conn, row.event_key)
        prefs = preferences.preferences_of(conn, [row.svc_id])[row.svc_id]
        if brief is not None and not prefs.lets_through(brief["strategy_name"], brief["coin"], now=now):
            return None
        live = (
            signals.live_signal(conn, row.svc_id, row.event_key)
            if row.event_type == "signal_opened"
            else None
        )
        if live is None:
            return notifications.plain(row)
        chat, svc_id = row.address, row.svc_id
        mute = button(conn, chat, svc_id, "Mute 1 h", "prefs", {"mute": 3600, "from_signal": True}, now=now)
        first = ()
        if prefs.mode == "ask":
            first = (button(conn, chat, svc_id, "Place order…", "order", {"signal": row.event_key}, now=now),)
    return notifications.ChatMessage(signal_text(live), buttons=((*first, mute),))


notifications.set_chat_composer(compose)
