"""``/user`` personal notification operations: list, mark read, and a code to link a messenger chat.

Example:
    >>> sorted(USER)
    ['messenger_link', 'notifications_list', 'notifications_mark_read']
"""

from __future__ import annotations

from typing import Any

from svc_api.core.contract import NoFields
from svc_api.core.dispatch import Call, Operation
from svc_api.core.errors import ApiError
from svc_api.core.fields import position_int, position_str
from svc_api.notifications import contract as c
from svc_api.notifications import service as notifications


def _notifications_list(call: Call, req: c.NotificationsList) -> dict[str, Any]:
    position = call.cursor("notifications")
    after = None if position is None else (position_int(position, "t"), position_str(position, "i"))
    page, more = notifications.notifications_page(call.store, call.svc_id, limit=req.limit, after=after)
    last = {"t": page[-1]["timestamp"], "i": page[-1]["id"]} if more else None
    return call.user_page("notifications", "notifications", page, more, last)


def _notifications_mark_read(call: Call, req: c.MarkRead) -> dict[str, Any]:
    if req.all:
        return notifications.mark_every_read(call.store, call.svc_id, now=call.now)
    assert req.notification_id is not None  # the model holds exactly one of the two
    return notifications.mark_one_read(call.store, call.svc_id, req.notification_id, now=call.now)


def _messenger_link(call: Call, req: NoFields) -> dict[str, Any]:
    if not call.services.settings.bot_api_url:
        # A deployment without a bot: nothing to retry, so a 404 of the feature, not a 503.
        raise ApiError(404, "messenger_unavailable", extra={"message": "this server has no messenger bot"})
    return notifications.new_code(call.store, call.svc_id, now=call.now)


USER: dict[str, Operation] = {
    "notifications_list": Operation(
        _notifications_list,
        inline=True,
        request=c.NotificationsList,
        reply=c.NotificationsPage,
        summary="The caller's notifications, newest first.",
    ),
    "notifications_mark_read": Operation(
        _notifications_mark_read,
        request=c.MarkRead,
        reply=c.NotificationsMarked,
        summary="Mark one notification read, or all of them.",
        errors=c.MARK_READ_ERRORS,
    ),
    "messenger_link": Operation(
        _messenger_link,
        access="session",
        request=NoFields,
        reply=c.MessengerLinkCode,
        summary="A one-time code that links a messenger chat to the caller's account.",
        errors=c.LINK_ERRORS,
    ),
}
