"""``/user`` account operations: register, login, logout, account_info, login_history and the
notification settings.

Example:
    >>> sorted(USER)[:3]
    ['account_info', 'identity_link', 'identity_login']
"""

from __future__ import annotations

from typing import Any

from svc_api.accounts import service as accounts
from svc_api.accounts import throttle
from svc_api.core.dispatch import Call, Operation
from svc_api.core.fields import platform_of, position_int, position_str


def _register(call: Call) -> dict[str, Any]:
    p = call.params
    grant = accounts.sign_up(
        call.store,
        p.get("email"),
        p.get("password"),
        ip=call.principal.ip,
        ttl=call.services.settings.session_ttl_seconds,
        platform=platform_of(p),
        referral_code=p.get("referral_code"),
        now=call.now,
    )
    return grant.to_dict()


def _login(call: Call) -> dict[str, Any]:
    p = call.params
    grant = accounts.sign_in(
        call.store,
        p.get("email"),
        p.get("password"),
        ip=call.principal.ip,
        ttl=call.services.settings.session_ttl_seconds,
        platform=platform_of(p),
        throttle=accounts.login_throttle(call.services),
        now=call.now,
    )
    return grant.to_dict()


def _logout(call: Call) -> dict[str, Any]:
    token = call.headers.get("authorization", "").partition(" ")[2].strip()
    accounts.sign_out(call.store, token)
    return {"logged_out": True}


def _account_info(call: Call) -> dict[str, Any]:
    return accounts.account(call.store, call.svc_id, now=call.now)


def _login_history(call: Call) -> dict[str, Any]:
    limit = call.page(25, 1, 100)
    position = call.cursor("login_history")
    after = None if position is None else (position_int(position, "t"), position_str(position, "i"))
    page, more = accounts.login_page(call.store, call.svc_id, limit=limit, after=after)
    last = {"t": page[-1]["login_at"], "i": page[-1]["login_id"]} if more else None
    return call.user_page("login_history", "logins", page, more, last)


def _notification_settings(call: Call) -> dict[str, Any]:
    changes = {k: v for k, v in call.params.items() if k != "idempotency_key"}
    return accounts.notification_switches(call.store, call.svc_id, changes)


def _identity_login(call: Call) -> dict[str, Any]:
    ip, platform = call.principal.ip, platform_of(call.params)
    return accounts.identity_login(call.services, call.params, ip=ip, platform=platform, now=call.now)


def _identity_link(call: Call) -> dict[str, Any]:
    return accounts.identity_link(call.services, call.svc_id, call.params, now=call.now)


USER: dict[str, Operation] = {
    "register": Operation(_register, access="public"),
    # Per IP: its own budget instead of the guest's 20 (svc_api/accounts/throttle.py); per account:
    # the failure budget of the throttle.
    "login": Operation(_login, access="public", per_ip_limit=throttle.IP_ATTEMPTS),
    "logout": Operation(_logout, access="session"),
    "account_info": Operation(_account_info, inline=True),
    "login_history": Operation(_login_history, inline=True),
    "notification_settings": Operation(_notification_settings),
    "identity_login": Operation(_identity_login, access="public"),
    "identity_link": Operation(_identity_link, access="session"),
}
