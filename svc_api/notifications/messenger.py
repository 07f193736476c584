"""The links between messenger chats and accounts: one chat per account, one account per chat.

The user asks the app for a code (``messenger_link``) and sends ``/start <code>`` to the bot
(:mod:`svc_api.bot`), which links that chat to the account; a code works once, for 15 minutes. The
bot also links the account it creates for a new chat, and ``/unlink`` removes a link.

Example:
    >>> from svc_api.accounts.service import register
    >>> with store.write() as conn:
    ...     sid = register(conn, "m@example.com", "password1", ip="::1", ttl=60, now=0).svc_id
    >>> code = new_code(store, sid, now=100)["code"]
    >>> with store.write() as conn:
    ...     link_by_code(conn, code, "42", now=200) == sid, link_by_code(conn, code, "43", now=201)
    (True, None)
    >>> with store.write() as conn:
    ...     account_of_chat(conn, "42") == sid, unlink_chat(conn, "42") == sid, account_of_chat(conn, "42")
    (True, True, None)
"""

from __future__ import annotations

import secrets
from typing import Any

from sqlalchemy.engine import Connection

from svc_api.accounts import service as accounts
from svc_api.core.store import Store
from svc_api.notifications import outbox_queries as queries

CODE_TTL = 15 * 60
_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"


def new_code(store: Store, svc_id: str, *, now: int) -> dict[str, Any]:
    """A one-time link code for ``svc_id``: ``{code, expires_at, command}``."""
    code = "".join(secrets.choice(_ALPHABET) for _ in range(8))
    with store.write() as conn:
        queries.insert_code(conn, code=code, svc_id=svc_id, expires_at=now + CODE_TTL)
    return {"code": code, "expires_at": now + CODE_TTL, "command": f"/start {code}"}


def link_by_code(conn: Connection, code: str, chat_id: str, *, now: int) -> str | None:
    """Spend ``code`` and link ``chat_id`` to its account; the account (None: unknown, used or expired)."""
    svc_id = queries.use_code(conn, code.strip().upper()[:16], now)
    if svc_id is not None:
        link_chat(conn, svc_id, chat_id, now=now)
    return svc_id


def link_chat(conn: Connection, svc_id: str, chat_id: str, *, now: int) -> None:
    """Link ``chat_id`` to ``svc_id``; any other link of either ends (the account's ``messenger``
    connection follows)."""
    previous = queries.account_of_chat(conn, chat_id)
    if previous is not None and previous != svc_id:
        accounts.set_messenger_linked(conn, previous, False)
    queries.link_chat(conn, svc_id, chat_id, now)
    accounts.set_messenger_linked(conn, svc_id, True)


def account_of_chat(conn: Connection, chat_id: str) -> str | None:
    """The account linked to ``chat_id`` (None: not linked)."""
    return queries.account_of_chat(conn, chat_id)


def chat_of_account(conn: Connection, svc_id: str) -> str | None:
    """The chat linked to ``svc_id`` (None: not linked)."""
    return queries.chat_ids(conn, [svc_id]).get(svc_id)


def unlink_chat(conn: Connection, chat_id: str) -> str | None:
    """End the link of ``chat_id``; the account it was linked to."""
    svc_id = queries.unlink_chat(conn, chat_id)
    if svc_id is not None:
        accounts.set_messenger_linked(conn, svc_id, False)
    return svc_id
