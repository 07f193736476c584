"""How a chat message of the outbox is worded: the messenger bot registers a composer that adds
buttons to signals and holds back what its user's bot preferences mute; without one, a chat message
is the notification's title and body.

Example:
    >>> from types import SimpleNamespace
    >>> row = SimpleNamespace(title="Hi", body="there", event_type="community_post", event_key="p1")
    >>> compose_chat(None, row, 0)
    ChatMessage(text='Hi\\n\\nthere', buttons=())
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

Buttons = tuple[tuple[tuple[str, str], ...], ...]
"""Rows of inline buttons, each ``(label, callback data)``."""


@dataclass(frozen=True)
class ChatMessage:
    """A chat message: its text and inline buttons."""

    text: str
    buttons: Buttons = ()


Composer = Callable[[Any, Any, int], ChatMessage | None]
"""``(store, outbox row, now) -> message``, or None to not send it (the row is marked ``skipped``)."""
_COMPOSERS: list[Composer] = []


def set_chat_composer(composer: Composer) -> None:
    """Make ``composer`` word every chat message (the bot's, registered when it is imported)."""
    _COMPOSERS[:] = [composer]


def plain(row: Any) -> ChatMessage:
    """The message of a row without a composer: title and body."""
    return ChatMessage(f"{row.title}\n\n{row.body}")


def compose_chat(store: Any, row: Any, now: int) -> ChatMessage | None:
    """The message of an outbox chat row at ``now`` (None: held back)."""
    return _COMPOSERS[0](store, row, now) if _COMPOSERS else plain(row)
