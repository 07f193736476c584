"""Referrals: the one door of the domain. An account names its inviter (:func:`set_inviter`), lists
the accounts it invited (:func:`referral_list`), earns a commission on each of their purchases
(:func:`record_commission`, called by billing; reversed on a refund) and redeems commissions as
credits (:func:`redeem`).

Redemption converts at once at :data:`CREDITS_PER_USDT` (1 USDT = 1 credit), as one ``deposit``
ledger row written in the same transaction as the redemption row. The inviter's account row is locked
first, so concurrent redemptions never take more than the available commission. At import this
module adds the ``referral`` section to ``account_info``.

Example:
    >>> CREDITS_PER_USDT, MIN_REDEEM_USDT, REDEEM_TYPES
    (Decimal('1'), Decimal('1'), ('credits',))
"""

from __future__ import annotations

import uuid
from decimal import Decimal
from typing import Any

from sqlalchemy.engine import Connection

from svc_api.accounts import service as accounts
from svc_api.core.errors import Invalid
from svc_api.core.money import CREDIT_SCALE
from svc_api.core.store import Store
from svc_api.credits import service as credits
from svc_api.referrals import queries
from svc_api.referrals.commissions import (
    DEFAULT_RATE_PCT,
    account_section,
    available_commission,
    commission_of,
    rate_of,
    record_commission,
    reverse_commission,
    set_rate,
    usdt,
)
from svc_api.referrals.inviters import INVITER_WINDOW_DAYS, mask, referral_list, set_inviter

CREDITS_PER_USDT = Decimal(1)
"""Credits added per USDT of commission redeemed (1 USDT = 1 credit)."""
MIN_REDEEM_USDT = Decimal(1)
"""The smallest redemption, in USDT."""
MAX_REDEEM_USDT = Decimal(10) ** 9
"""The largest redemption, in USDT: past every real commission, and small enough that checking its
decimals cannot overflow the decimal context (a float like 8.8e307 would)."""
REDEEM_TYPES = ("credits",)
"""What a commission can be redeemed as: credits only (there is no cash withdrawal)."""


def redeem_amount(value: object) -> Decimal:
    """The ``amount`` of a redemption: a JSON number from :data:`MIN_REDEEM_USDT` to
    :data:`MAX_REDEEM_USDT` with at most 4 decimals (the precision of credits); else 400.

    Example:
        >>> redeem_amount(2.5), redeem_amount(3)
        (Decimal('2.5'), Decimal('3'))
        >>> redeem_amount("3")
        Traceback (most recent call last):
        ...
        svc_api.core.errors.Invalid: amount must be a number (USDT), got '3'
        >>> redeem_amount(8.8e307)
        Traceback (most recent call last):
        ...
        svc_api.core.errors.Invalid: amount must be at most 1000000000 USDT, got 8.8e+307
    """
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise Invalid(f"amount must be a number (USDT), got {value!r}"[:120])
    amount = Decimal(str(value))
    if not amount.is_finite() or amount < MIN_REDEEM_USDT:
        raise Invalid(f"amount must be at least {MIN_REDEEM_USDT} USDT, got {value!r}")
    if amount > MAX_REDEEM_USDT:
        raise Invalid(f"amount must be at most {MAX_REDEEM_USDT} USDT, got {value!r}")
    if amount != amount.quantize(Decimal(1) / CREDIT_SCALE):
        raise Invalid(f"amount must have at most 4 decimals, got {value!r}")
    return amount


def redeem_type_of(value: object, name: str = "redeem_type") -> str:
    """What a commission is redeemed as: one of :data:`REDEEM_TYPES`; else 400.

    Example:
        >>> redeem_type_of("cash")
        Traceback (most recent call last):
        ...
        svc_api.core.errors.Invalid: redeem_type must be one of credits, got 'cash'
    """
    if value not in REDEEM_TYPES:
        raise Invalid(f"{name} must be one of {', '.join(REDEEM_TYPES)}, got {value!r}"[:200])
    return str(value)


def redeem(conn: Connection, svc_id: str, value: Decimal, *, now: int) -> dict[str, Any]:
    """Convert ``value`` USDT (checked by :func:`redeem_amount`) of available commission into
    credits, in the caller's transaction; 400 above the available commission. Returns
    ``{redeem_type: "credits", amount, status: "completed", credits_added}``.

    Example:
        >>> with store.write() as conn:
        ...     sid = accounts.register(conn, "r@example.com", "password1", ip="::1", ttl=60, now=0).svc_id
        ...     redeem(conn, sid, Decimal(1), now=0)
        Traceback (most recent call last):
        ...
        svc_api.core.errors.Invalid: amount 1 exceeds the available commission of 0 USDT
    """
    accounts.lock_account(conn, svc_id)  # concurrent redemptions of one account queue here
    available = available_commission(conn, svc_id)
    if value > available:
        shown = usdt(max(available, Decimal(0)))
        raise Invalid(f"amount {usdt(value)} exceeds the available commission of {shown} USDT")
    added = value * CREDITS_PER_USDT
    queries.insert_redemption(
        conn,
        {
            "redemption_id": f"rr_{uuid.uuid4().hex}",
            "svc_id": svc_id,
            "amount_usdt": value,
            "credits": int(added * CREDIT_SCALE),
            "created_at": now,
        },
    )
    entry = credits.deposit_credits(
        conn, svc_id, added, description=f"Referral commission redeemed ({usdt(value)} USDT)", now=now
    )
    return {
        "redeem_type": "credits",
        "amount": usdt(value),
        "status": "completed",
        "credits_added": entry["amount"],
    }


# ---- use cases of the routes (each in its own transaction) ----------------------------------------


def name_inviter(store: Store, svc_id: str, inviter_id: str, *, now: int) -> dict[str, Any]:
    """:func:`set_inviter` in a write transaction.

    Example:
        >>> name_inviter(store, "AB12CD", "AB12CD", now=0)
        Traceback (most recent call last):
        ...
        svc_api.core.errors.Invalid: inviter_id is your own ID; name the account that invited you
    """
    with store.write() as conn:
        return set_inviter(conn, svc_id, inviter_id, now=now)


def referrals(store: Store, svc_id: str, *, now: int) -> dict[str, Any]:
    """:func:`referral_list` in a read transaction.

    Example:
        >>> referrals(store, "NOPE00", now=0)["count"]
        0
    """
    with store.read() as conn:
        return referral_list(conn, svc_id, now=now)


def redeem_commission(store: Store, svc_id: str, value: Decimal, *, now: int) -> dict[str, Any]:
    """:func:`redeem` in a write transaction.

    Example:
        >>> redeem_commission(store, "NOPE00", Decimal(5), now=0)
        Traceback (most recent call last):
        ...
        svc_api.core.errors.NotFound: unknown account NOPE00
    """
    with store.write() as conn:
        return redeem(conn, svc_id, value, now=now)


def referral_rate(store: Store, svc_id: str, rate_pct: object) -> dict[str, Any]:
    """:func:`set_rate` in a write transaction (the operator command ``svc admin referral-rate``).

    Example:
        >>> referral_rate(store, "NOPE00", 35)
        Traceback (most recent call last):
        ...
        svc_api.core.errors.NotFound: unknown account NOPE00
    """
    with store.write() as conn:
        return set_rate(conn, svc_id, rate_pct)


accounts.add_account_section(account_section)

__all__ = [
    "CREDITS_PER_USDT",
    "DEFAULT_RATE_PCT",
    "INVITER_WINDOW_DAYS",
    "MIN_REDEEM_USDT",
    "REDEEM_TYPES",
    "account_section",
    "available_commission",
    "commission_of",
    "mask",
    "name_inviter",
    "rate_of",
    "record_commission",
    "redeem",
    "redeem_amount",
    "redeem_commission",
    "redeem_type_of",
    "referral_list",
    "referral_rate",
    "referrals",
    "reverse_commission",
    "set_inviter",
    "set_rate",
    "usdt",
]
