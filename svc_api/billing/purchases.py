"""Applying a plan purchase, and refunding it: the one place where a payment becomes plan time and a
commission.

:func:`apply_purchase` is idempotent by ``(source, purchase_id)``: the first report grants the plan
(30 days for ``monthly``, 365 for ``annual``, stacked on the time held; time left on another plan is
first converted at the ratio of the two monthly prices) and records the commission of
the buyer's inviter; a later report of the same purchase changes nothing and returns the first result
with ``replayed: true``. Racing reports store one purchase (``INSERT ... ON CONFLICT DO NOTHING`` on
the key decides, after the buyer's account row is locked).

:func:`refund_purchase` (our rule) marks the purchase ``refunded``, takes the plan time it granted
back, and reverses the inviter's commission: it stops counting toward the available commission; if
it was already redeemed the available amount goes below zero and later commissions make up for it.

Example:
    >>> PRICES["pro"], PERIOD_DAYS
    ({'monthly': Decimal('50'), 'annual': Decimal('300')}, {'monthly': 30, 'annual': 365})
"""

from __future__ import annotations

from decimal import Decimal, InvalidOperation
from typing import Any

from sqlalchemy.engine import Connection, Row

from svc_api.accounts import service as accounts
from svc_api.billing import queries
from svc_api.core.errors import Invalid, NotFound
from svc_api.core.fields import text
from svc_api.referrals import service as referrals

PRICES: dict[str, dict[str, Decimal]] = {
    "starter": {"monthly": Decimal(10), "annual": Decimal(60)},
    "plus": {"monthly": Decimal(20), "annual": Decimal(120)},
    "pro": {"monthly": Decimal(50), "annual": Decimal(300)},
    "investor": {"monthly": Decimal(100), "annual": Decimal(600)},
}
"""List prices of the plans in USD (= USDT), by period; the annual price is half of twelve months."""
PERIOD_DAYS = {"monthly": 30, "annual": 365}
MONTHLY_WORTH = {plan: prices["monthly"] for plan, prices in PRICES.items()}
"""What a month of each plan is worth: time left on another plan converts at this ratio."""
"""Days of plan time a purchase of each period adds."""
_MAX_USDT = Decimal(10) ** 9


def purchase_amount(value: object, plan: str, period: str) -> Decimal:
    """The amount paid: the list price when ``value`` is None, else a number from 0 to 1e9 with at
    most 6 decimals (400 otherwise).

    Example:
        >>> purchase_amount(None, "plus", "annual"), purchase_amount("9.99", "plus", "monthly")
        (Decimal('120'), Decimal('9.99'))
    """
    if value is None:
        return PRICES[plan][period]
    amount = None
    if not isinstance(value, bool) and isinstance(value, (int, float, str, Decimal)):
        try:
            amount = Decimal(str(value))
        except InvalidOperation:
            amount = None
    if amount is None or not amount.is_finite() or not 0 <= amount <= _MAX_USDT:
        raise Invalid(f"amount_usdt must be a number from 0 to {_MAX_USDT}, got {value!r}")
    if amount != amount.quantize(Decimal("0.000001")):
        raise Invalid(f"amount_usdt must have at most 6 decimals, got {value!r}")
    return amount


def apply_purchase(
    conn: Connection,
    svc_id: str,
    plan: str,
    period: str,
    purchase_id: object,
    amount_usdt: object = None,
    source: object = "admin",
    *,
    now: int,
) -> dict[str, Any]:
    """Apply one plan purchase in the caller's transaction (see the module docstring).

    Returns ``{source, purchase_id, svc_id, plan, period, days, amount_usdt, status,
    license_expires_at, commission, replayed}``; ``commission`` is None without an inviter.

    Raises:
        Invalid: unknown plan or period, empty or over-long ``purchase_id`` / ``source``, bad amount.
        NotFound: unknown account.

    Example:
        >>> with store.write() as conn:
        ...     sid = accounts.register(conn, "b@example.com", "password1", ip="::1", ttl=60, now=0).svc_id
        ...     first = apply_purchase(conn, sid, "pro", "monthly", "p1", now=0)
        ...     again = apply_purchase(conn, sid, "pro", "monthly", "p1", now=5)
        >>> first["license_expires_at"], first["amount_usdt"], first["commission"], first["replayed"]
        (2592000, 50, None, False)
        >>> again == first | {"replayed": True}
        True
    """
    if plan not in PRICES:
        raise Invalid(f"plan must be one of {', '.join(PRICES)}, got {plan!r}")
    if period not in PERIOD_DAYS:
        raise Invalid(f"period must be one of {', '.join(PERIOD_DAYS)}, got {period!r}")
    key = text(purchase_id, "purchase_id", hi=64) or ""
    origin = text(source, "source", hi=32) or ""
    amount = purchase_amount(amount_usdt, plan, period)
    accounts.lock_account(conn, svc_id)  # reports of one buyer's purchases queue here
    days = PERIOD_DAYS[period]
    claimed = queries.claim(
        conn,
        {
            "source": origin,
            "purchase_id": key,
            "svc_id": svc_id,
            "plan": plan,
            "period": period,
            "days": days,
            "amount_usdt": amount,
            "status": "applied",
            "license_expires_at": 0,
            "created_at": now,
        },
    )
    if not claimed:
        return _result(conn, _find(conn, origin, key), replayed=True)
    grant = accounts.grant_plan(
        conn, svc_id, plan, days, source=f"purchase:{origin}", now=now, worth=MONTHLY_WORTH
    )
    queries.set_expiry(conn, origin, key, grant["license_expires_at"])
    referrals.record_commission(conn, svc_id, commission_key(origin, key), amount, now)
    return _result(conn, _find(conn, origin, key), replayed=False)


def refund_purchase(conn: Connection, source: str, purchase_id: str, now: int) -> dict[str, Any]:
    """Refund one applied purchase in the caller's transaction (see the module docstring); a purchase
    refunded before is returned as it stands with ``replayed: true``. 404 for an unknown purchase.

    Example:
        >>> with store.write() as conn:
        ...     sid = accounts.register(conn, "r@example.com", "password1", ip="::1", ttl=60, now=0).svc_id
        ...     _ = apply_purchase(conn, sid, "plus", "annual", "p9", now=0)
        ...     done = refund_purchase(conn, "admin", "p9", now=10)
        ...     done["status"], done["license_expires_at"], accounts.current_plan(conn, sid, now=10)
        ('refunded', 0, 'free')
    """
    row = _find(conn, source, purchase_id)
    accounts.lock_account(conn, row.svc_id)
    if not queries.mark_refunded(conn, source, purchase_id, now=now):
        return _result(conn, _find(conn, source, purchase_id), replayed=True)
    taken = accounts.take_back_plan(conn, row.svc_id, int(row.days), source=f"refund:{source}", now=now)
    queries.set_expiry(conn, source, purchase_id, taken["license_expires_at"])
    referrals.reverse_commission(conn, commission_key(source, purchase_id))
    return _result(conn, _find(conn, source, purchase_id), replayed=False)


def commission_key(source: str, purchase_id: str) -> str:
    """The purchase id the referrals domain records a commission under: unique across channels.

    Example:
        >>> commission_key("admin", "p1")
        'admin:p1'
    """
    return f"{source}:{purchase_id}"


def _find(conn: Connection, source: str, purchase_id: str) -> Row[Any]:
    row = queries.purchase(conn, source, purchase_id)
    if row is None:
        raise NotFound(f"no purchase {purchase_id!r} from {source!r}")
    return row


def _result(conn: Connection, row: Row[Any], *, replayed: bool) -> dict[str, Any]:
    return {
        "source": row.source,
        "purchase_id": row.purchase_id,
        "svc_id": row.svc_id,
        "plan": row.plan,
        "period": row.period,
        "days": int(row.days),
        "amount_usdt": referrals.usdt(Decimal(row.amount_usdt)),
        "status": row.status,
        "license_expires_at": int(row.license_expires_at),
        "commission": referrals.commission_of(conn, commission_key(row.source, row.purchase_id)),
        "replayed": replayed,
    }
