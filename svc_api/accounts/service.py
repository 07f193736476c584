"""Accounts: plans, the Account resource, login history.

A plan is active while its licence (or demo) has not expired; otherwise the account is on ``free``.
Other domains add their part of the Account resource (the strategies map, the referral section) with
:func:`add_account_section`.

Example:
    >>> NOTIFICATION_CHANNELS
    ('app', 'announcement', 'account', 'bot', 'messenger', 'mail')
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from typing import Any

from sqlalchemy.engine import Connection

from svc_api.accounts import queries
from svc_api.accounts.contacts import (
    COMMUNITY_ROLES,
    DeliveryProfile,
    account_ids_after,
    account_of_email,
    community_role,
    delivery_profiles,
    notification_preferences,
    set_community_role,
    set_connection,
    set_messenger_linked,
    set_notification_preferences,
)
from svc_api.accounts.contract import SessionGrant as SessionGrantReply
from svc_api.accounts.grants import grant_plan, take_back_plan
from svc_api.accounts.identity import (
    SessionExpired,
    SessionGrant,
    SessionInvalid,
    login,
    login_id,
    logout,
    open_session,
    register,
    register_chat_account,
    resolve_session,
    token_hash,
)
from svc_api.accounts.oidc import identity_link, identity_login
from svc_api.accounts.plans import PLANS, RATE_LIMITS, effective_plan
from svc_api.accounts.referees import account_exists, inviter_link, link_inviter, referees
from svc_api.accounts.tables import NOTIFICATION_CHANNELS, accounts
from svc_api.accounts.throttle import LoginThrottle
from svc_api.core.cursors import keyset_page
from svc_api.core.errors import NotFound
from svc_api.core.money import from_units
from svc_api.core.store import Store

AccountSection = Callable[[Connection, str], dict[str, Any]]
_SECTIONS: list[AccountSection] = []


def add_account_section(section: AccountSection) -> AccountSection:
    """Register a function adding fields to ``account_info`` (called with the connection and svc_id).

    Example:
        >>> def nothing(conn, svc_id):
        ...     return {}
        >>> add_account_section(nothing) is nothing
        True
        >>> _SECTIONS.remove(nothing)
    """
    _SECTIONS.append(section)
    return section


def ensure_system_account(conn: Connection, svc_id: str, email: str, *, now: int) -> None:
    """Create an account of the platform itself (no password can match, no login) unless it exists,
    in the caller's transaction; its ``svc_id`` uses a character no generated id has.

    Example:
        >>> with store.write() as conn:
        ...     ensure_system_account(conn, "_FEES_", "fees@platform.invalid", now=0)
        ...     ensure_system_account(conn, "_FEES_", "fees@platform.invalid", now=0)
        ...     current_plan(conn, "_FEES_", now=0)
        'free'
    """
    queries.insert_account_if_missing(
        conn,
        svc_id=svc_id,
        email=email,
        password_hash="!",
        password_salt="!",
        referral_code=svc_id,
        created_at=now,
    )


def lock_account(conn: Connection, svc_id: str) -> None:
    """Lock the account row of ``svc_id`` for the rest of the transaction (``SELECT ... FOR UPDATE`` on
    PostgreSQL; SQLite serialises writers anyway); 404 for an unknown account. Domains take it first
    when a rule spans several rows of one account (plan limits, a redemption against a balance).

    Example:
        >>> with store.write() as conn:
        ...     lock_account(conn, "NOPE00")
        Traceback (most recent call last):
        ...
        svc_api.core.errors.NotFound: unknown account NOPE00
    """
    if not queries.lock_account(conn, svc_id):
        raise NotFound(f"unknown account {svc_id}")


def current_plan(conn: Connection, svc_id: str, *, now: int) -> str:
    """The plan in force for ``svc_id`` (raises :class:`NotFound` for an unknown account).

    Example:
        >>> with store.read() as conn:
        ...     current_plan(conn, "NOPE00", now=0)
        Traceback (most recent call last):
        ...
        svc_api.core.errors.NotFound: unknown account NOPE00
    """
    row = queries.plan_columns(conn, svc_id)
    if row is None:
        raise NotFound(f"unknown account {svc_id}")
    return effective_plan(
        row.plan, license_expires_at=row.license_expires_at, demo_expires_at=row.demo_expires_at, now=now
    )


def current_plans(conn: Connection, svc_ids: Iterable[str], *, now: int) -> dict[str, str]:
    """:func:`current_plan` of many accounts in a few round trips (unknown accounts are absent).

    Example:
        >>> with store.read() as conn:
        ...     current_plans(conn, ["NOPE00"], now=0)
        {}
    """
    rows = queries.plan_columns_of(conn, sorted(set(svc_ids)))
    return {
        svc_id: effective_plan(
            r.plan, license_expires_at=r.license_expires_at, demo_expires_at=r.demo_expires_at, now=now
        )
        for svc_id, r in rows.items()
    }


def account_info(conn: Connection, svc_id: str, *, now: int) -> dict[str, Any]:
    """The Account resource of ``svc_id``.

    Example:
        >>> from svc_api.accounts.identity import register
        >>> with store.write() as conn:
        ...     sid = register(conn, "a@example.com", "password1", ip="::1", ttl=60, now=0).svc_id
        ...     info = account_info(conn, sid, now=0)
        >>> info["plan"], info["svc_credits"], info["demo_expires_at"]
        ('free', 0, 0)
    """
    row = queries.account_with_switches(conn, svc_id)
    if row is None:
        raise NotFound(f"unknown account {svc_id}")
    info: dict[str, Any] = {
        "svc_id": row.svc_id,
        "plan": effective_plan(
            row.plan, license_expires_at=row.license_expires_at, demo_expires_at=row.demo_expires_at, now=now
        ),
        "svc_credits": from_units(row.credits),
        "license_expires_at": int(row.license_expires_at),
        "demo_expires_at": int(row.demo_expires_at),
        "active_own_strategies": 0,
        "community_role": row.community_role,
        "connections": {
            "exchange": bool(row.exchange_linked),
            "messenger": bool(row.messenger_linked),
            "identity_provider": bool(row.identity_linked),
        },
        "notification_settings": {
            name: True if (value := getattr(row, f"switch_{name}")) is None else bool(value)
            for name in NOTIFICATION_CHANNELS
        },
        "strategies": {},
    }
    for section in _SECTIONS:
        info.update(section(conn, svc_id))
    return info


def login_history(
    conn: Connection, svc_id: str, *, limit: int, after: tuple[int, str] | None = None
) -> tuple[list[dict[str, Any]], bool]:
    """Login records newest first (one per retained IP origin), keyset-paged after ``(login_at, login_id)``.

    Returns the page and whether more records follow.

    Example:
        >>> with store.read() as conn:
        ...     login_history(conn, "NOPE00", limit=25)
        ([], False)
    """
    rows, more = keyset_page(lambda n: queries.logins_after(conn, svc_id, limit=n, after=after), limit)
    page = [
        {
            "login_id": r.login_id,
            "ip_address": r.ip_address,
            "platform": r.platform,
            "login_at": int(r.login_at),
        }
        for r in rows
    ]
    return page, more


# ---- use cases of the routes (each in its own transaction) ----------------------------------------


def sign_up(
    store: Store,
    email: object,
    password: object,
    *,
    ip: str,
    ttl: int,
    platform: str,
    referral_code: object,
    now: int,
) -> SessionGrant:
    """:func:`register` in a write transaction.

    Example:
        >>> sign_up(store, "e@example.com", "password1", ip="::1", ttl=60, platform="api",
        ...         referral_code=None, now=1_700_000_000).expires_at
        1700000060
    """
    with store.write() as conn:
        return register(
            conn, email, password, ip=ip, ttl=ttl, platform=platform, referral_code=referral_code, now=now
        )


def sign_in(
    store: Store,
    email: object,
    password: object,
    *,
    ip: str,
    ttl: int,
    platform: str,
    throttle: LoginThrottle | None = None,
    now: int,
) -> SessionGrant:
    """:func:`login` in a write transaction (a login is recorded), within ``throttle``'s budgets
    when given (the route gives the service's, :func:`login_throttle`).

    Example:
        >>> sign_in(store, "f@example.com", "password1", ip="::1", ttl=60, platform="api", now=0)
        Traceback (most recent call last):
        ...
        svc_api.core.errors.Unauthenticated: invalid email or password
    """

    def run() -> SessionGrant:
        with store.write() as conn:
            return login(conn, email, password, ip=ip, ttl=ttl, platform=platform, now=now)

    return run() if throttle is None else throttle.attempt(email, run)


def login_throttle(services: Any) -> LoginThrottle:
    """The service's login budgets (:mod:`svc_api.accounts.throttle`), made once per service."""
    return services.cached(
        "accounts:login-throttle", math.inf, lambda: LoginThrottle.from_settings(services.settings)
    )


def sign_out(store: Store, token: str) -> bool:
    """:func:`logout` in a write transaction.

    Example:
        >>> sign_out(store, "unknown")
        False
    """
    with store.write() as conn:
        return logout(conn, token)


def account(store: Store, svc_id: str, *, now: int) -> dict[str, Any]:
    """:func:`account_info` in a read transaction (the plan in force at ``now``).

    Example:
        >>> account(store, "NOPE00", now=0)
        Traceback (most recent call last):
        ...
        svc_api.core.errors.NotFound: unknown account NOPE00
    """
    with store.read() as conn:
        return account_info(conn, svc_id, now=now)


def login_page(
    store: Store, svc_id: str, *, limit: int, after: tuple[int, str] | None = None
) -> tuple[list[dict[str, Any]], bool]:
    """:func:`login_history` in a read transaction.

    Example:
        >>> login_page(store, "NOPE00", limit=25)
        ([], False)
    """
    with store.read() as conn:
        return login_history(conn, svc_id, limit=limit, after=after)


def notification_switches(store: Store, svc_id: str, changes: dict[str, Any]) -> dict[str, bool]:
    """The channel switches after applying ``changes``; no change is a plain read.

    Example:
        >>> notification_switches(store, "NOPE00", {})["mail"]
        True
    """
    if not changes:
        with store.read() as conn:
            return notification_preferences(conn, svc_id)
    with store.write() as conn:
        return set_notification_preferences(conn, svc_id, changes)


ACCOUNTS = accounts
"""The account row, published for other domains' queries that join on it or move its balance."""

__all__ = [
    "ACCOUNTS",
    "COMMUNITY_ROLES",
    "NOTIFICATION_CHANNELS",
    "PLANS",
    "RATE_LIMITS",
    "DeliveryProfile",
    "SessionExpired",
    "SessionGrant",
    "SessionGrantReply",
    "SessionInvalid",
    "account",
    "account_exists",
    "account_ids_after",
    "account_info",
    "account_of_email",
    "add_account_section",
    "community_role",
    "current_plan",
    "delivery_profiles",
    "effective_plan",
    "grant_plan",
    "identity_link",
    "identity_login",
    "inviter_link",
    "link_inviter",
    "lock_account",
    "login",
    "login_history",
    "login_id",
    "login_page",
    "logout",
    "notification_preferences",
    "notification_switches",
    "open_session",
    "referees",
    "register",
    "register_chat_account",
    "resolve_session",
    "set_community_role",
    "set_connection",
    "set_messenger_linked",
    "set_notification_preferences",
    "sign_in",
    "sign_out",
    "sign_up",
    "take_back_plan",
    "token_hash",
]
