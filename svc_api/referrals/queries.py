"""Every SQL statement of the referrals domain, one small function each. They join the caller's
transaction and hold no rules (rates, the available amount and the checks are the service's). Sums
come back as exact ``Decimal`` values. The example runs each of them.

Example:
    >>> from svc_api.accounts.service import register
    >>> with store.write() as conn:
    ...     sid = register(conn, "q@example.com", "password1", ip="::1", ttl=60, now=0).svc_id
    ...     rate_of(conn, sid), set_rate(conn, sid, 35), rate_of(conn, sid)
    ...     row = {"commission_id": "c1", "svc_id": sid, "referee_id": "AB12CD", "purchase_id": "p1",
    ...            "purchase_amount_usdt": 10, "rate_pct": 35, "amount_usdt": "3.5", "created_at": 5}
    ...     insert_commission(conn, row), insert_commission(conn, row | {"commission_id": "c2"})
    ...     commission_of_purchase(conn, "p1").amount_usdt, [r.commission_id for r in commissions(conn, sid)]
    ...     paid = {"redemption_id": "r1", "svc_id": sid, "amount_usdt": 1, "credits": 1, "created_at": 6}
    ...     insert_redemption(conn, paid)
    ...     section_row(conn, sid).has_commissions, section_row(conn, sid).redeemed, available(conn, sid)
    ...     reverse(conn, "p1"), reverse(conn, "p1"), available(conn, sid)
    (None, None, Decimal('35.00'))
    (True, False)
    (Decimal('3.500000'), ['c1'])
    (True, Decimal('1.000000'), Decimal('2.500000'))
    (True, False, Decimal('-1.000000'))
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Row

from svc_api.accounts.service import ACCOUNTS as accounts
from svc_api.core.prepared import Prepared
from svc_api.core.upsert import insert_new
from svc_api.referrals.tables import referral_commissions, referral_rates, referral_redemptions

_c = referral_commissions.c
_r = referral_redemptions.c
USDT = sa.Numeric(18, 6)


def _redeemed(svc_id: Any) -> Any:
    total = sa.select(sa.func.coalesce(sa.func.sum(_r.amount_usdt), 0)).where(_r.svc_id == svc_id)
    return sa.type_coerce(total.scalar_subquery(), USDT)


def _recorded(svc_id: Any) -> Any:
    query = sa.select(sa.func.coalesce(sa.func.sum(_c.amount_usdt), 0))
    total = query.where(_c.svc_id == svc_id, _c.status == "recorded")
    return sa.type_coerce(total.scalar_subquery(), USDT)


# Built once: account_info (one of the most frequent reads) runs it on every call. Most accounts
# earned no commission: ``has_commissions`` spares them the commissions query.
_SECTION = Prepared(
    sa.select(
        accounts.c.referral_code,
        sa.exists().where(_c.svc_id == accounts.c.svc_id).label("has_commissions"),
        _redeemed(accounts.c.svc_id).label("redeemed"),
    ).where(accounts.c.svc_id == sa.bindparam("svc_id"))
)


def section_row(conn: Connection, svc_id: str) -> Row[Any] | None:
    """``(referral_code, has_commissions, redeemed)`` of ``svc_id`` (USDT redeemed so far), or None."""
    return _SECTION.first(conn, {"svc_id": svc_id})


_COMMISSIONS = (
    sa.select(referral_commissions)
    .where(_c.svc_id == sa.bindparam("svc_id"))
    .order_by(_c.created_at.desc(), _c.commission_id)
)


def commissions(conn: Connection, svc_id: str) -> list[Row[Any]]:
    """The commissions ``svc_id`` earned (any status), newest first."""
    return list(conn.execute(_COMMISSIONS, {"svc_id": svc_id}))


def available(conn: Connection, svc_id: str) -> Decimal:
    """Recorded (not reversed) commissions of ``svc_id`` minus what it redeemed, in USDT."""
    query = sa.select(sa.type_coerce(_recorded(svc_id) - _redeemed(svc_id), USDT))
    return Decimal(conn.execute(query).scalar())


def rate_of(conn: Connection, svc_id: str) -> Decimal | None:
    """The commission rate (percent) set for ``svc_id``, or None (the default applies)."""
    query = sa.select(referral_rates.c.rate_pct).where(referral_rates.c.svc_id == svc_id)
    return conn.execute(query).scalar()


def set_rate(conn: Connection, svc_id: str, rate_pct: Any) -> None:
    """Set the commission rate of ``svc_id`` (created or replaced; racing writers: the last wins)."""
    conn.execute(insert_new(conn, referral_rates).values(svc_id=svc_id, rate_pct=rate_pct))
    rates = referral_rates
    conn.execute(rates.update().where(rates.c.svc_id == svc_id).values(rate_pct=rate_pct))


def insert_commission(conn: Connection, values: dict[str, Any]) -> bool:
    """Record one commission unless its purchase (or id) has one already; True when written. Every
    unique key is a conflict target, so racing reports of one purchase write one row, no error."""
    stmt = insert_new(conn, referral_commissions).values(**values).returning(_c.commission_id)
    return conn.execute(stmt).first() is not None


def commission_of_purchase(conn: Connection, purchase_id: str) -> Row[Any] | None:
    """The commission recorded for ``purchase_id``, or None."""
    return conn.execute(sa.select(referral_commissions).where(_c.purchase_id == purchase_id)).first()


def reverse(conn: Connection, purchase_id: str) -> bool:
    """Mark the commission of ``purchase_id`` reversed unless it is already; True when it changed."""
    update = (
        referral_commissions.update()
        .where(_c.purchase_id == purchase_id, _c.status == "recorded")
        .values(status="reversed")
    )
    return conn.execute(update).rowcount == 1


def insert_redemption(conn: Connection, values: dict[str, Any]) -> None:
    """Record one redemption."""
    conn.execute(referral_redemptions.insert().values(**values))
