"""Commissions: what an inviter earns on a referee's purchase, at the inviter's rate.

A purchase applied by billing records one commission for the referee's inviter (none without an
inviter): ``purchase amount x rate / 100``, rounded half-up to 6 decimals. The rate is the
inviter's own (``svc admin referral-rate``) or :data:`DEFAULT_RATE_PCT`. A purchase reported twice
records one commission (the purchase id is unique). A refunded purchase *reverses* its commission:
it stays listed with status ``reversed`` and stops counting toward the total and the available amount.

The available commission is the recorded (not reversed) total minus what was redeemed. A commission
reversed after it was redeemed can make it negative; later commissions make up for it first.

Example:
    >>> commission_amount(Decimal("10"), Decimal("20")), commission_amount(Decimal("9.99"), Decimal("35"))
    (Decimal('2.000000'), Decimal('3.496500'))
"""

from __future__ import annotations

import hashlib
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from typing import Any

from sqlalchemy.engine import Connection

from svc_api.accounts import service as accounts
from svc_api.core.errors import Invalid
from svc_api.notifications import service as notifications
from svc_api.referrals import queries

DEFAULT_RATE_PCT = Decimal(20)
"""The commission rate of an inviter without a rate of its own, percent of the purchase amount."""
_MICRO = Decimal("0.000001")


def commission_amount(purchase_usdt: Decimal, rate_pct: Decimal) -> Decimal:
    """``purchase_usdt x rate_pct / 100``, rounded half-up to 6 decimals.

    Example:
        >>> commission_amount(Decimal(50), Decimal(35)), commission_amount(Decimal("0.000005"), Decimal(50))
        (Decimal('17.500000'), Decimal('0.000003'))
    """
    return (purchase_usdt * rate_pct / 100).quantize(_MICRO, rounding=ROUND_HALF_UP)


def usdt(value: Decimal) -> int | float:
    """A USDT amount as a JSON number (an int when whole).

    Example:
        >>> usdt(Decimal("2.000000")), usdt(Decimal("3.4965"))
        (2, 3.4965)
    """
    return int(value) if value == value.to_integral_value() else float(value)


def rate_of(conn: Connection, svc_id: str) -> Decimal:
    """The commission rate (percent) of ``svc_id``: its own, else :data:`DEFAULT_RATE_PCT`.

    Example:
        >>> with store.read() as conn:
        ...     rate_of(conn, "NOPE00")
        Decimal('20')
    """
    found = queries.rate_of(conn, svc_id)
    return DEFAULT_RATE_PCT if found is None else Decimal(found)


def set_rate(conn: Connection, svc_id: str, rate_pct: object) -> dict[str, Any]:
    """Set the commission rate of ``svc_id``: a number from 0 to 100 with at most 2 decimals (else
    400; 404 for an unknown account). It applies to purchases applied from then on.

    Example:
        >>> with store.write() as conn:
        ...     set_rate(conn, "NOPE00", 101)
        Traceback (most recent call last):
        ...
        svc_api.core.errors.Invalid: rate must be a number from 0 to 100 with at most 2 decimals, got 101
    """
    rate = _decimal(rate_pct)
    if rate is None or not 0 <= rate <= 100 or rate != rate.quantize(Decimal("0.01")):
        raise Invalid(f"rate must be a number from 0 to 100 with at most 2 decimals, got {rate_pct!r}")
    accounts.lock_account(conn, svc_id)
    queries.set_rate(conn, svc_id, rate)
    return {"svc_id": svc_id, "rate_pct": usdt(rate)}


def _decimal(value: object) -> Decimal | None:
    if isinstance(value, bool) or not isinstance(value, (int, float, str, Decimal)):
        return None
    try:
        found = Decimal(str(value))
    except InvalidOperation:
        return None
    return found if found.is_finite() else None


def commission_id_of(purchase_id: str) -> str:
    """The deterministic id of the commission of a purchase.

    Example:
        >>> commission_id_of("admin:p1") == commission_id_of("admin:p1"), len(commission_id_of("x"))
        (True, 35)
    """
    return "rc_" + hashlib.sha256(purchase_id.encode()).hexdigest()[:32]


def record_commission(
    conn: Connection, referee: str, purchase_id: str, amount_usdt: Decimal, now: int
) -> dict[str, Any] | None:
    """Record the commission the inviter of ``referee`` earns on a purchase of ``amount_usdt`` (in the
    caller's transaction). None when ``referee`` has no inviter. ``purchase_id`` must be unique across
    channels (billing passes ``<source>:<purchase_id>``): a purchase recorded before returns its
    commission as it stands, and racing reports of one purchase write one row.

    Example:
        >>> from svc_api.accounts.service import register
        >>> with store.write() as conn:
        ...     a = register(conn, "a@example.com", "password1", ip="::1", ttl=60, now=0).svc_id
        ...     b = register(conn, "b@example.com", "password1", ip="::1", ttl=60, now=0).svc_id
        ...     record_commission(conn, b, "admin:p0", Decimal(10), 1) is None
        ...     _ = accounts.link_inviter(conn, b, a)
        ...     c = record_commission(conn, b, "admin:p1", Decimal(10), 1)
        ...     c["amount_usdt"], c["rate_pct"], c["svc_id"] == a
        ...     record_commission(conn, b, "admin:p1", Decimal(10), 2) == c
        True
        (2, 20, True)
        True
    """
    inviter, _ = accounts.inviter_link(conn, referee)
    if inviter is None:
        return None
    rate = rate_of(conn, inviter)
    amount = commission_amount(amount_usdt, rate)
    new = queries.insert_commission(
        conn,
        {
            "commission_id": commission_id_of(purchase_id),
            "svc_id": inviter,
            "referee_id": referee,
            "purchase_id": purchase_id,
            "purchase_amount_usdt": amount_usdt,
            "rate_pct": rate,
            "amount_usdt": amount,
            "status": "recorded",
            "created_at": now,
        },
    )
    if new:
        body = f"You earned {amount} USDT of commission on a purchase of an account you invited."
        notifications.notify_many(
            conn, [inviter], "Referral commission", body, "referral_commission", key=purchase_id, now=now
        )
    return commission_of(conn, purchase_id)


def reverse_commission(conn: Connection, purchase_id: str) -> dict[str, Any] | None:
    """Mark the commission of a refunded purchase ``reversed`` (again: no change); None when the
    purchase earned none.

    Example:
        >>> with store.write() as conn:
        ...     reverse_commission(conn, "admin:none") is None
        True
    """
    queries.reverse(conn, purchase_id)
    return commission_of(conn, purchase_id)


def commission_of(conn: Connection, purchase_id: str) -> dict[str, Any] | None:
    """The commission of a purchase: ``{commission_id, svc_id, referee_id, amount_usdt, rate_pct,
    status}``, or None.

    Example:
        >>> with store.read() as conn:
        ...     commission_of(conn, "admin:none") is None
        True
    """
    row = queries.commission_of_purchase(conn, purchase_id)
    if row is None:
        return None
    return {
        "commission_id": row.commission_id,
        "svc_id": row.svc_id,
        "referee_id": row.referee_id,
        "amount_usdt": usdt(Decimal(row.amount_usdt)),
        "rate_pct": usdt(Decimal(row.rate_pct)),
        "status": row.status,
    }


def available_commission(conn: Connection, svc_id: str) -> Decimal:
    """Recorded (not reversed) commissions of ``svc_id`` minus what it redeemed, in USDT (may be
    negative after a refund of a redeemed commission).

    Example:
        >>> with store.read() as conn:
        ...     available_commission(conn, "NOPE00")
        Decimal('0.000000')
    """
    return queries.available(conn, svc_id)


def account_section(conn: Connection, svc_id: str) -> dict[str, Any]:
    """The ``referral`` part of ``account_info``: ``{code, commissions: [{commission_id, amount_usdt,
    status}], total_commission_usdt, available_commission_usdt}``. ``total_commission_usdt`` sums the
    ``recorded`` commissions (the ``reversed`` ones are listed, not counted);
    ``available_commission_usdt`` is that total minus what was redeemed.

    Example:
        >>> from svc_api.accounts.service import register
        >>> with store.write() as conn:
        ...     sid = register(conn, "s@example.com", "password1", ip="::1", ttl=60, now=0).svc_id
        ...     section = account_section(conn, sid)["referral"]
        >>> section["commissions"], section["total_commission_usdt"], section["available_commission_usdt"]
        ([], 0, 0)
    """
    row = queries.section_row(conn, svc_id)
    if row is None:
        return {}
    rows = queries.commissions(conn, svc_id) if row.has_commissions else []
    total = sum((Decimal(r.amount_usdt) for r in rows if r.status == "recorded"), Decimal(0))
    return {
        "referral": {
            "code": row.referral_code,
            "commissions": [
                {
                    "commission_id": r.commission_id,
                    "amount_usdt": usdt(Decimal(r.amount_usdt)),
                    "status": r.status,
                }
                for r in rows
            ],
            "total_commission_usdt": usdt(total),
            "available_commission_usdt": usdt(total - Decimal(row.redeemed)),
        }
    }
