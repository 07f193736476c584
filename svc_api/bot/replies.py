"""What a chat handler answers, and the opaque tokens behind its buttons.

A button's callback data is a random token kept in the store with the chat, the account, the action
and its arguments: the client never holds an account id or a price it could change, and a token
acts only for the chat it was made for while that chat is still linked to its account.

Example:
    >>> Reply("hi").buttons, Reply("x", secret=True).secret
    ((), True)
"""

from __future__ import annotations

import json
import secrets
from dataclasses import dataclass
from typing import Any

from sqlalchemy.engine import Connection

from svc_api.bot import queries
from svc_api.notifications import service as notifications

BUTTON_TTL = 7 * 86_400
"""Seconds a button stays usable (a signal's order button is refused sooner once the signal ends)."""


@dataclass(frozen=True)
class Reply:
    """A message to send: text, buttons, whether it holds a secret (deleted after a while), whether
    it replaces the message a button was pressed on, and an order to follow until it settles."""

    text: str
    buttons: notifications.Buttons = ()
    secret: bool = False
    edit: bool = False
    follow: tuple[str, str] | None = None  # (svc_id, idempotency_key)
    notice: str = ""  # a short answer to the button press itself


@dataclass(frozen=True)
class Press:
    """A pressed button, resolved from its token."""

    token: str
    svc_id: str
    action: str
    args: dict[str, Any]


def button(
    conn: Connection, chat: str, svc_id: str, label: str, action: str, args: dict[str, Any], *, now: int
) -> tuple[str, str]:
    """A ``(label, token)`` button acting for ``svc_id`` in ``chat``."""
    token = secrets.token_urlsafe(16)  # 22 characters: well under the 64 bytes of callback data
    queries.add_callback(
        conn,
        token=token,
        chat_id=chat,
        svc_id=svc_id,
        action=action,
        payload=json.dumps(args),
        created_at=now,
        expires_at=now + BUTTON_TTL,
    )
    return label, token


def resolve(conn: Connection, chat: str, token: object, *, now: int) -> Press | str:
    """The press of ``token`` in ``chat``, or why it does not act (a plain-words refusal)."""
    row = queries.callback(conn, str(token)[:32]) if isinstance(token, str) else None
    if row is None or row.chat_id != chat:
        return "This button is not valid here."
    if row.expires_at <= now:
        return "This button has expired."
    if notifications.account_of_chat(conn, chat) != row.svc_id:
        return "This chat is no longer linked to the account this button was for."
    return Press(row.token, row.svc_id, row.action, json.loads(row.payload))
