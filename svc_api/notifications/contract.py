"""The request and reply models of the personal notification operations (``/user``).

Example:
    >>> MarkRead.model_validate({"all": True}).all
    True
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, Literal

from pydantic import Field, TypeAdapter

from svc_api.core.contract import ErrorDoc, Fields, Shape
from svc_api.core.errors import Invalid
from svc_api.core.fields import non_empty
from svc_api.core.params import AsSent, Limit, UserPage


class NotificationsList(Fields):
    """``notifications_list``: the caller's notifications, newest first."""

    limit: Limit(50, 1, 100)
    cursor: AsSent({"type": ["string", "null"], "description": "The previous page's cursor."})


class MarkRead(Fields):
    """``notifications_mark_read``: exactly one of ``notification_id`` or ``all: true``."""

    notification_id: Annotated[str | None, Field(min_length=1)] = None
    """The notification to mark read."""
    all: Literal[True] | None = None
    """``true``: mark every notification of the caller read."""

    @classmethod
    def prepare(cls, data: Mapping[str, Any]) -> Any:
        """One of the two, checked as a pair first (a ``null`` counts as not sent)."""
        nid, every = data.get("notification_id"), data.get("all")
        if (nid is None) == (every is None):
            raise Invalid("give exactly one of notification_id or all: true")
        if every is not None:
            if every is not True:
                raise Invalid("all must be true")
            return {"all": True}
        return {"notification_id": non_empty(nid, "notification_id")}


class Notification(Shape):
    """One personal notification."""

    id: str
    title: str
    body: str
    event_type: str
    timestamp: int
    """Unix seconds."""


class NotificationsPage(UserPage):
    """A page of the caller's notifications, newest first."""

    notifications: list[Notification]


class MarkedOne(Shape):
    """The notification is marked read."""

    notification_id: str
    read: Literal[True]


class MarkedAll(Shape):
    """Every notification of the caller is marked read."""

    marked_read: Annotated[int, Field(ge=0)]
    """How many were unread."""


class NotificationsMarked(Shape):
    """What ``notifications_mark_read`` answers: :class:`MarkedOne` for a ``notification_id``,
    :class:`MarkedAll` for ``all``."""

    @classmethod
    def __get_pydantic_json_schema__(cls, schema: Any, handler: Any) -> dict[str, Any]:
        # One of two shapes; the union keeps both members as components, names as before.
        return handler(TypeAdapter(MarkedOne | MarkedAll).core_schema)


class MessengerLinkCode(Shape):
    """A one-time code that links a messenger chat to the caller's account."""

    code: str
    expires_at: int
    """Unix seconds."""
    command: str
    """What to send to the bot: ``/start <code>``."""


MARK_READ_ERRORS = (ErrorDoc(404, "not_found", "no notification of the caller has this `notification_id`"),)
LINK_ERRORS = (ErrorDoc(404, "messenger_unavailable", "this server has no messenger bot"),)
