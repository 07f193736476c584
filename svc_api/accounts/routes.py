"""``/user`` account operations: register, login, logout, account_info, login_history, the
notification settings and the identity provider's login and link.

Example:
    >>> sorted(USER)[:3]
    ['account_info', 'identity_link', 'identity_login']
"""

from __future__ import annotations

from typing import Any

from svc_api.accounts import contract as c
from svc_api.accounts import service as accounts
from svc_api.accounts import throttle
from svc_api.core.contract import NoFields
from svc_api.core.dispatch import Call, Operation
from svc_api.core.fields import position_int, position_str


def _register(call: Call, req: c.Register) -> dict[str, Any]:
    grant = accounts.sign_up(
        call.store,
        req.email,
        req.password,
        ip=call.principal.ip,
        ttl=call.services.settings.session_ttl_seconds,
        platform=req.platform,
        referral_code=req.referral_code,
        now=call.now,
    )
    return grant.to_dict()


def _login(call: Call, req: c.Login) -> dict[str, Any]:
    grant = accounts.sign_in(
        call.store,
        req.email,
        req.password,
        ip=call.principal.ip,
        ttl=call.services.settings.session_ttl_seconds,
        platform=req.platform,
        throttle=accounts.login_throttle(call.services),
        now=call.now,
    )
    return grant.to_dict()


def _logout(call: Call, req: NoFields) -> dict[str, Any]:
    token = call.headers.get("authorization", "").partition(" ")[2].strip()
    accounts.sign_out(call.store, token)
    return {"logged_out": True}


def _account_info(call: Call, req: NoFields) -> dict[str, Any]:
    return accounts.account(call.store, call.svc_id, now=call.now)


def _login_history(call: Call, req: c.LoginHistory) -> dict[str, Any]:
    position = call.cursor("login_history")
    after = None if position is None else (position_int(position, "t"), position_str(position, "i"))
    page, more = accounts.login_page(call.store, call.svc_id, limit=req.limit, after=after)
    last = {"t": page[-1]["login_at"], "i": page[-1]["login_id"]} if more else None
    return call.user_page("login_history", "logins", page, more, last)


def _notification_settings(call: Call, req: c.NotificationChanges) -> dict[str, Any]:
    return accounts.notification_switches(call.store, call.svc_id, req.changes())


def _identity_login(call: Call, req: c.IdentityLogin) -> dict[str, Any]:
    return accounts.identity_login(
        call.services, req.id_token, req.nonce, ip=call.principal.ip, platform=req.platform, now=call.now
    )


def _identity_link(call: Call, req: c.IdentityLink) -> dict[str, Any]:
    return accounts.identity_link(call.services, call.svc_id, req.id_token, req.nonce, now=call.now)


USER: dict[str, Operation] = {
    "register": Operation(
        _register,
        access="public",
        request=c.Register,
        reply=c.SessionGrant,
        summary="Open an account and its first session.",
        errors=c.SIGN_UP_ERRORS,
    ),
    # Per IP: its own budget instead of the guest's 20 (svc_api/accounts/throttle.py); per account:
    # the failure budget of the throttle.
    "login": Operation(
        _login,
        access="public",
        per_ip_limit=throttle.IP_ATTEMPTS,
        request=c.Login,
        reply=c.SessionGrant,
        summary="Open a session with e-mail and password.",
        errors=c.LOGIN_ERRORS,
    ),
    "logout": Operation(
        _logout, access="session", request=NoFields, reply=c.LoggedOut, summary="End the session."
    ),
    "account_info": Operation(
        _account_info, inline=True, request=NoFields, reply=c.Account, summary="The caller's account."
    ),
    "login_history": Operation(
        _login_history,
        inline=True,
        request=c.LoginHistory,
        reply=c.LoginHistoryPage,
        summary="The caller's logins, newest first.",
    ),
    "notification_settings": Operation(
        _notification_settings,
        request=c.NotificationChanges,
        reply=c.NotificationSettings,
        summary="Read the delivery channel switches, or change any of them.",
    ),
    "identity_login": Operation(
        _identity_login,
        access="public",
        request=c.IdentityLogin,
        reply=c.SessionGrant,
        summary="Open a session with an OIDC ID token (an unknown identity opens an account).",
        errors=c.IDENTITY_ERRORS,
    ),
    "identity_link": Operation(
        _identity_link,
        access="session",
        request=c.IdentityLink,
        reply=c.IdentityLinked,
        summary="Link an OIDC identity to the caller's account.",
        errors=c.IDENTITY_ERRORS,
    ),
}
