"""``/user`` account operations: register, login, logout, account_info, login_history,
credits_history, notification settings and personal notifications.

Example:
    >>> sorted(USER)[:3]
    ['account_info', 'credits_history', 'login']
"""

from __future__ import annotations

from typing import Any

from svc_api.domains import accounts, credits, identity, notifications
from svc_api.domains.errors import Invalid
from svc_api.routes.dispatch import Call, Operation


def _register(call: Call) -> dict[str, Any]:
    p = call.params
    with call.store.write() as conn:
        grant = identity.register(
            conn,
            p.get("email"),
            p.get("password"),
            ip=call.principal.ip,
            ttl=call.services.settings.session_ttl_seconds,
            platform=_platform(p),
            referral_code=p.get("referral_code"),
        )
    return grant.to_dict()


def _login(call: Call) -> dict[str, Any]:
    p = call.params
    with call.store.write() as conn:
        grant = identity.login(
            conn,
            p.get("email"),
            p.get("password"),
            ip=call.principal.ip,
            ttl=call.services.settings.session_ttl_seconds,
            platform=_platform(p),
        )
    return grant.to_dict()


def _logout(call: Call) -> dict[str, Any]:
    token = call.headers.get("authorization", "").partition(" ")[2].strip()
    with call.store.write() as conn:
        identity.logout(conn, token)
    return {"logged_out": True}


def _platform(params: Any) -> str:
    value = params.get("platform", "api")
    if not isinstance(value, str) or not 1 <= len(value) <= 32:
        raise Invalid("platform must be a string of 1-32 characters")
    return value


def _account_info(call: Call) -> dict[str, Any]:
    with call.store.read() as conn:
        return accounts.account_info(conn, call.svc_id)


def _login_history(call: Call) -> dict[str, Any]:
    limit = call.page(25, 1, 100)
    position = call.cursor("login_history")
    after = None if position is None else (_int(position, "t"), _str(position, "i"))
    with call.store.read() as conn:
        page, more = accounts.login_history(conn, call.svc_id, limit=limit, after=after)
    last = {"t": page[-1]["login_at"], "i": page[-1]["login_id"]} if more else None
    return call.user_page("login_history", "logins", page, more, last)


def _credits_history(call: Call) -> dict[str, Any]:
    limit = call.page(50, 1, 100)
    position = call.cursor("credits_history")
    before = None if position is None else _int(position, "s")
    with call.store.read() as conn:
        page, more = credits.credits_history(conn, call.svc_id, limit=limit, before_seq=before)
    last = {"s": page[-1]["seq"]} if more else None
    for entry in page:
        del entry["seq"]
    return call.user_page("credits_history", "transactions", page, more, last)


def _notification_settings(call: Call) -> dict[str, Any]:
    changes = {k: v for k, v in call.params.items() if k != "idempotency_key"}
    if not changes:
        with call.store.read() as conn:
            return accounts.notification_preferences(conn, call.svc_id)
    with call.store.write() as conn:
        return accounts.set_notification_preferences(conn, call.svc_id, changes)


def _notifications_list(call: Call) -> dict[str, Any]:
    limit = call.page(50, 1, 100)
    position = call.cursor("notifications")
    after = None if position is None else (_int(position, "t"), _str(position, "i"))
    with call.store.read() as conn:
        page, more = notifications.list_notifications(conn, call.svc_id, limit=limit, after=after)
    last = {"t": page[-1]["timestamp"], "i": page[-1]["id"]} if more else None
    return call.user_page("notifications", "notifications", page, more, last)


def _notifications_mark_read(call: Call) -> dict[str, Any]:
    nid, every = call.params.get("notification_id"), call.params.get("all")
    if (nid is None) == (every is None):
        raise Invalid("give exactly one of notification_id or all: true")
    with call.store.write() as conn:
        if every is not None:
            if every is not True:
                raise Invalid("all must be true")
            return notifications.mark_all_read(conn, call.svc_id)
        if not isinstance(nid, str) or not nid:
            raise Invalid("notification_id must be a non-empty string")
        return notifications.mark_read(conn, call.svc_id, nid)


def _int(position: dict[str, Any], key: str) -> int:
    value = position.get(key)
    if not isinstance(value, int) or isinstance(value, bool):
        raise Invalid("cursor is not valid for this list")
    return value


def _str(position: dict[str, Any], key: str) -> str:
    value = position.get(key)
    if not isinstance(value, str):
        raise Invalid("cursor is not valid for this list")
    return value


USER: dict[str, Operation] = {
    "register": Operation(_register, access="public"),
    "login": Operation(_login, access="public"),
    "logout": Operation(_logout, access="session"),
    "account_info": Operation(_account_info),
    "login_history": Operation(_login_history),
    "credits_history": Operation(_credits_history),
    "notification_settings": Operation(_notification_settings),
    "notifications_list": Operation(_notifications_list),
    "notifications_mark_read": Operation(_notifications_mark_read),
}
