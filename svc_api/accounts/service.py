"""Accounts: plans, the Account resource, login history.

A plan is active while its licence (or demo) has not expired; otherwise the account is on ``free``.
Other domains add their part of the Account resource (for example the strategies map) with
:func:`add_account_section`.

Example:
    >>> NOTIFICATION_CHANNELS
    ('app', 'announcement', 'account', 'bot', 'messenger', 'mail')
"""

from __future__ import annotations

import time
from collections.abc import Callable
from decimal import Decimal
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from svc_api.accounts.identity import (
    SessionExpired,
    SessionGrant,
    SessionInvalid,
    login,
    login_id,
    logout,
    register,
    resolve_session,
    token_hash,
)
from svc_api.accounts.plans import PLANS, RATE_LIMITS, effective_plan
from svc_api.accounts.tables import accounts, logins, notification_settings, plan_grants, referral_commissions
from svc_api.core.errors import Invalid, NotFound
from svc_api.core.money import from_units
from svc_api.core.prepared import Prepared

NOTIFICATION_CHANNELS = ("app", "announcement", "account", "bot", "messenger", "mail")

AccountSection = Callable[[Connection, str], dict[str, Any]]
_SECTIONS: list[AccountSection] = []


_WITH_SWITCHES = accounts.outerjoin(
    notification_settings, notification_settings.c.svc_id == accounts.c.svc_id
)
# Built once: account_info is among the most frequent reads. The channel switches come in the same
# round trip (outer join: no row means every channel on); their columns are all NOT NULL, so a NULL
# ``switch_*`` value can only mean the row is absent.
_ACCOUNT = Prepared(
    sa.select(
        accounts.c.svc_id,
        accounts.c.plan,
        accounts.c.license_expires_at,
        accounts.c.demo_expires_at,
        accounts.c.credits,
        accounts.c.community_role,
        accounts.c.exchange_linked,
        accounts.c.messenger_linked,
        accounts.c.identity_linked,
        accounts.c.referral_code,
        *(notification_settings.c[name].label(f"switch_{name}") for name in NOTIFICATION_CHANNELS),
        # Most accounts earned no commission: this flag spares them the commissions query.
        sa.exists().where(referral_commissions.c.svc_id == accounts.c.svc_id).label("has_commissions"),
    )
    .select_from(_WITH_SWITCHES)
    .where(accounts.c.svc_id == sa.bindparam("svc_id"))
)
_PLAN = sa.select(accounts.c.plan, accounts.c.license_expires_at, accounts.c.demo_expires_at).where(
    accounts.c.svc_id == sa.bindparam("svc_id")
)
_PREFERENCES = sa.select(notification_settings).where(
    notification_settings.c.svc_id == sa.bindparam("svc_id")
)
_COMMISSIONS = (
    sa.select(referral_commissions)
    .where(referral_commissions.c.svc_id == sa.bindparam("svc_id"))
    .order_by(referral_commissions.c.created_at.desc(), referral_commissions.c.commission_id)
)


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


def current_plan(conn: Connection, svc_id: str, *, now: int | None = None) -> str:
    """The plan in force for ``svc_id`` (raises :class:`NotFound` for an unknown account).

    Example:
        >>> from svc_api.core.store import Store
        >>> from svc_api.migrations import migrate
        >>> store = Store("sqlite:///:memory:"); _ = migrate(store)
        >>> with store.read() as conn:
        ...     current_plan(conn, "NOPE00")
        Traceback (most recent call last):
        ...
        svc_api.core.errors.NotFound: unknown account NOPE00
    """
    now = int(time.time()) if now is None else now
    row = conn.execute(_PLAN, {"svc_id": svc_id}).first()
    if row is None:
        raise NotFound(f"unknown account {svc_id}")
    return effective_plan(
        row.plan, license_expires_at=row.license_expires_at, demo_expires_at=row.demo_expires_at, now=now
    )


def account_info(conn: Connection, svc_id: str, *, now: int | None = None) -> dict[str, Any]:
    """The Account resource of ``svc_id``.

    Example:
        >>> from svc_api.core.store import Store
        >>> from svc_api.migrations import migrate
        >>> from svc_api.accounts.identity import register
        >>> store = Store("sqlite:///:memory:"); _ = migrate(store)
        >>> with store.write() as conn:
        ...     sid = register(conn, "a@example.com", "password1", ip="::1", ttl=60).svc_id
        ...     info = account_info(conn, sid)
        >>> info["plan"], info["svc_credits"], info["demo_expires_at"]
        ('free', 0, 0)
    """
    now = int(time.time()) if now is None else now
    row = _ACCOUNT.first(conn, {"svc_id": svc_id})
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
        "referral": _referral(conn, row.svc_id, row.referral_code, bool(row.has_commissions)),
        "strategies": {},
    }
    for section in _SECTIONS:
        info.update(section(conn, svc_id))
    return info


def notification_preferences(conn: Connection, svc_id: str) -> dict[str, bool]:
    """The six delivery-channel switches of ``svc_id`` (all on for a new account).

    Example:
        >>> NOTIFICATION_CHANNELS[:2]
        ('app', 'announcement')
    """
    row = conn.execute(_PREFERENCES, {"svc_id": svc_id}).first()
    if row is None:
        return dict.fromkeys(NOTIFICATION_CHANNELS, True)
    return {name: bool(getattr(row, name)) for name in NOTIFICATION_CHANNELS}


def set_notification_preferences(conn: Connection, svc_id: str, changes: dict[str, Any]) -> dict[str, bool]:
    """Switch delivery channels on or off; unknown names or non-booleans are a 400.

    Example:
        >>> from svc_api.core.store import Store
        >>> from svc_api.migrations import migrate
        >>> store = Store("sqlite:///:memory:"); _ = migrate(store)
        >>> with store.write() as conn:
        ...     set_notification_preferences(conn, "X", {"fax": True})
        Traceback (most recent call last):
        ...
        svc_api.core.errors.Invalid: unknown notification channel(s): fax
    """
    unknown = sorted(set(changes) - set(NOTIFICATION_CHANNELS))
    if unknown:
        raise Invalid(f"unknown notification channel(s): {', '.join(unknown)}")
    bad = sorted(name for name, value in changes.items() if not isinstance(value, bool))
    if bad:
        raise Invalid(f"notification channel values must be booleans: {', '.join(bad)}")
    if changes:
        updated = conn.execute(
            notification_settings.update().where(notification_settings.c.svc_id == svc_id).values(**changes)
        )
        if updated.rowcount == 0:
            conn.execute(notification_settings.insert().values(svc_id=svc_id, **changes))
    return notification_preferences(conn, svc_id)


def _referral(conn: Connection, svc_id: str, code: str, any_commission: bool) -> dict[str, Any]:
    rows = conn.execute(_COMMISSIONS, {"svc_id": svc_id}).all() if any_commission else []
    total = sum((Decimal(r.amount_usdt) for r in rows), Decimal(0))
    return {
        "code": code,
        "commissions": [
            {"commission_id": r.commission_id, "amount_usdt": float(r.amount_usdt), "status": r.status}
            for r in rows
        ],
        "total_commission_usdt": float(total),
    }


def login_history(
    conn: Connection, svc_id: str, *, limit: int, after: tuple[int, str] | None = None
) -> tuple[list[dict[str, Any]], bool]:
    """Login records newest first (one per retained IP origin), keyset-paged after ``(login_at, login_id)``.

    Returns the page and whether more records follow.

    Example:
        >>> from svc_api.core.store import Store
        >>> from svc_api.migrations import migrate
        >>> store = Store("sqlite:///:memory:"); _ = migrate(store)
        >>> with store.read() as conn:
        ...     login_history(conn, "NOPE00", limit=25)
        ([], False)
    """
    query = sa.select(logins).where(logins.c.svc_id == svc_id)
    if after is not None:
        at, lid = after
        query = query.where(
            sa.or_(logins.c.login_at < at, sa.and_(logins.c.login_at == at, logins.c.login_id > lid))
        )
    rows = conn.execute(query.order_by(logins.c.login_at.desc(), logins.c.login_id).limit(limit + 1)).all()
    page = [
        {
            "login_id": r.login_id,
            "ip_address": r.ip_address,
            "platform": r.platform,
            "login_at": int(r.login_at),
        }
        for r in rows[:limit]
    ]
    return page, len(rows) > limit


def grant_plan(
    conn: Connection,
    svc_id: str,
    plan: str,
    days: int,
    *,
    demo: bool = False,
    source: str = "admin",
    now: int | None = None,
) -> dict[str, Any]:
    """Extend ``plan`` by ``days`` (stacked on the time already held) and record the grant.

    A demo sets ``demo_expires_at`` instead of ``license_expires_at``.

    Example:
        >>> from svc_api.core.store import Store
        >>> from svc_api.migrations import migrate
        >>> from svc_api.accounts.identity import register
        >>> store = Store("sqlite:///:memory:"); _ = migrate(store)
        >>> with store.write() as conn:
        ...     sid = register(conn, "b@example.com", "password1", ip="::1", ttl=60).svc_id
        ...     grant = grant_plan(conn, sid, "pro", 30, now=1_000)
        >>> grant["plan"], grant["license_expires_at"]
        ('pro', 2593000)
    """
    now = int(time.time()) if now is None else now
    if plan not in PLANS or plan == "free":
        raise Invalid(f"plan must be one of {', '.join(PLANS[1:])}, got {plan!r}")
    if not isinstance(days, int) or days <= 0:
        raise Invalid("days must be a positive integer")
    row = conn.execute(sa.select(accounts).where(accounts.c.svc_id == svc_id)).first()
    if row is None:
        raise NotFound(f"unknown account {svc_id}")
    column = "demo_expires_at" if demo else "license_expires_at"
    expires_at = max(int(getattr(row, column)), now) + days * 86400
    conn.execute(
        accounts.update().where(accounts.c.svc_id == svc_id).values(plan=plan, **{column: expires_at})
    )
    conn.execute(
        plan_grants.insert().values(
            svc_id=svc_id,
            plan=plan,
            days=days,
            demo=demo,
            expires_at=expires_at,
            source=source,
            created_at=now,
        )
    )
    return {"svc_id": svc_id, "plan": plan, column: expires_at}


ACCOUNTS = accounts
"""The account row, published for other domains' queries that join on it or move its balance."""

__all__ = [
    "ACCOUNTS",
    "NOTIFICATION_CHANNELS",
    "PLANS",
    "RATE_LIMITS",
    "SessionExpired",
    "SessionGrant",
    "SessionInvalid",
    "account_info",
    "add_account_section",
    "current_plan",
    "effective_plan",
    "grant_plan",
    "login",
    "login_history",
    "login_id",
    "logout",
    "notification_preferences",
    "register",
    "resolve_session",
    "set_notification_preferences",
    "token_hash",
]
