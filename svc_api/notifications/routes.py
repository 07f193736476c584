"""``/user`` personal notification operations: list, mark read, and a code to link a messenger chat.

Example:
    >>> sorted(USER)
    ['messenger_link', 'notifications_list', 'notifications_mark_read']
"""

from __future__ import annotations

from typing import Any

from svc_api.core.dispatch import Call, Operation
from svc_api.core.errors import ApiError, Invalid
from svc_api.core.fields import non_empty, position_int, position_str
from svc_api.notifications import service as notifications


def _notifications_list(call: Call) -> dict[str, Any]:
    limit = call.page(50, 1, 100)
    position = call.cursor("notifications")
    after = None if position is None else (position_int(position, "t"), position_str(position, "i"))
    page, more = notifications.notifications_page(call.store, call.svc_id, limit=limit, after=after)
    last = {"t": page[-1]["timestamp"], "i": page[-1]["id"]} if more else None
    return call.user_page("notifications", "notifications", page, more, last)


def _notifications_mark_read(call: Call) -> dict[str, Any]:
    nid, every = call.params.get("notification_id"), call.params.get("all")
    if (nid is None) == (every is None):
        raise Invalid("give exactly one of notification_id or all: true")
    if every is not None:
        if every is not True:
            raise Invalid("all must be true")
        return notifications.mark_every_read(call.store, call.svc_id, now=call.now)
    return notifications.mark_one_read(
        call.store, call.svc_id, non_empty(nid, "notification_id"), now=call.now
    )


def _messenger_link(call: Call) -> dict[str, Any]:
    if not call.services.settings.bot_api_url:
        # A deployment without a bot: nothing to retry, so a 404 of the feature, not a 503.
        raise ApiError(404, "messenger_unavailable", extra={"message": "this server has no messenger bot"})
    return notifications.new_code(call.store, call.svc_id, now=call.now)


USER: dict[str, Operation] = {
    "notifications_list": Operation(_notifications_list, inline=True),
    "notifications_mark_read": Operation(_notifications_mark_read),
    "messenger_link": Operation(_messenger_link, access="session"),
}
