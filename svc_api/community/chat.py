"""Chat: one ``global`` channel and one per leader (``leader:<svc_id>``), newest first.

A message's id is ``<seconds>_<author>`` and its key ``<seconds>#<msg_id>``: the key is the primary key
within the channel, so a second message of one author in the same second is refused (429, retry after
a second) and never overwrites the first. Deleting keeps the row and replaces the text with a fixed
placeholder that says who deleted it.

Example:
    >>> channel_of(None), channel_of("leader:ab12cd")
    ('global', 'leader:AB12CD')
    >>> parse_key("1790812800#1790812800_AB12CD")
    (1790812800, '1790812800_AB12CD')
"""

from __future__ import annotations

import re
from typing import Any

from sqlalchemy.engine import Connection

from svc_api.accounts import service as accounts
from svc_api.community import feed_queries as queries
from svc_api.community.leaders import is_leader
from svc_api.core.errors import Forbidden, Invalid, NotFound, rate_limited
from svc_api.core.store import Store

GLOBAL = "global"
DELETED_BY_AUTHOR = "[message deleted by its author]"
DELETED_BY_MODERATOR = "[message removed by a moderator]"
_CHANNEL = re.compile(r"^leader:([A-Z0-9]{6})$")
_KEY = re.compile(r"^(\d{1,12})#(\d{1,12}_[A-Z0-9_]{6})$")


def channel_of(value: object) -> str:
    """The channel named by ``value`` (``global`` when absent); else 400."""
    if value is None or value == "":
        return GLOBAL
    if not isinstance(value, str):
        raise Invalid("channel must be 'global' or 'leader:<svc_id>'")
    name = value.strip()
    if name.lower() == GLOBAL:
        return GLOBAL
    if name[:7].lower() == "leader:" and _CHANNEL.match(f"leader:{name[7:].upper()}"):
        return f"leader:{name[7:].upper()}"
    raise Invalid("channel must be 'global' or 'leader:<svc_id>'")


def parse_key(value: object, field: str = "sort_key") -> tuple[int, str]:
    """``(seconds, msg_id)`` of a message key ``<seconds>#<seconds>_<svc_id>``; else 400."""
    match = _KEY.match(value) if isinstance(value, str) else None
    if match is None:
        raise Invalid(f"{field} must be a message key such as 1790812800#1790812800_AB12CD")
    return int(match.group(1)), match.group(2)


def _existing(conn: Connection, channel: str) -> None:
    owner = _CHANNEL.match(channel)
    if owner is not None and not is_leader(conn, owner.group(1)):
        raise NotFound(f"no chat channel {channel!r}")


def send(store: Store, svc_id: str, message: str, channel: str, *, now: int) -> dict[str, str]:
    """Post ``message`` to ``channel`` (both checked by the request model): ``{msg_id, sort_key,
    channel}``; 404 for a channel of no leader, 429 for a second message of the author in one second.

    Example:
        >>> send(store, "AB12CD", "gm", "leader:ZZ99ZZ", now=1)
        Traceback (most recent call last):
        ...
        svc_api.core.errors.NotFound: no chat channel 'leader:ZZ99ZZ'
    """
    msg_id = f"{now}_{svc_id}"
    key = f"{now}#{msg_id}"
    with store.write() as conn:
        _existing(conn, channel)
        values = {"channel": channel, "sort_key": key, "msg_id": msg_id, "svc_id": svc_id, "message": message}
        if not queries.insert_chat(conn, created_at=now, **values):
            raise rate_limited(
                1, "one chat message per second: you sent one in this second already; send again in a second"
            )
    return {"msg_id": msg_id, "sort_key": key, "channel": channel}


def _text(row: Any) -> str:
    if row.deleted_by is None:
        return str(row.message)
    return DELETED_BY_AUTHOR if row.deleted_by == "author" else DELETED_BY_MODERATOR


def read(
    store: Store, channel: str, *, limit: int, before: tuple[int, str] | None
) -> tuple[list[dict[str, Any]], str | None]:
    """Messages newest first, older than ``before``; the page and the next cursor (the last key)."""
    with store.read() as conn:
        _existing(conn, channel)
        rows = queries.chat_before(conn, channel, limit=limit + 1, before=before)
    page = rows[:limit]
    items = [
        {
            "svc_id": r.svc_id,
            "message": _text(r),
            "created_at": str(r.created_at),
            "sort_key": r.sort_key,
            "deleted": r.deleted_by is not None,
        }
        for r in page
    ]
    return items, (page[-1].sort_key if len(rows) > limit else None)


def delete(store: Store, svc_id: str, key: str, channel: str) -> dict[str, Any]:
    """Soft-delete the message ``key`` of ``channel`` (both checked by the request model): its
    author, or a moderator of the channel (an admin, or the leader who owns it). 403 for anyone
    else, 404 when the key is not in that channel."""
    with store.write() as conn:
        row = queries.chat_message(conn, channel, key)
        if row is None:
            raise NotFound(f"no message {key} in channel {channel}")
        if row.deleted_by is None:
            if row.svc_id == svc_id:
                by = "author"
            elif _moderates(conn, svc_id, channel):
                by = "moderator"
            else:
                raise Forbidden("only the author or a moderator of this channel may delete this message")
            queries.soft_delete_chat(conn, channel, key, by)
        else:
            by = row.deleted_by
    return {"sort_key": key, "channel": channel, "deleted": True, "deleted_by_author": by == "author"}


def _moderates(conn: Connection, svc_id: str, channel: str) -> bool:
    return channel == f"leader:{svc_id}" or accounts.community_role(conn, svc_id) == "admin"


def message_exists(conn: Connection, channel: str, key: str) -> bool:
    """Whether ``key`` names a message of ``channel``."""
    return queries.chat_message(conn, channel, key) is not None
