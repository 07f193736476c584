"""Every SQL statement of the billing domain, one small function each. They join the caller's
transaction and hold no rules. The example runs each of them.

Example:
    >>> from svc_api.accounts.service import register
    >>> with store.write() as conn:
    ...     sid = register(conn, "p@example.com", "password1", ip="::1", ttl=60, now=0).svc_id
    ...     row = {"source": "admin", "purchase_id": "p1", "svc_id": sid, "plan": "pro", "period": "monthly",
    ...            "days": 30, "amount_usdt": 50, "license_expires_at": 0, "created_at": 1}
    ...     claim(conn, row), claim(conn, row), set_expiry(conn, "admin", "p1", 99)
    ...     found = purchase(conn, "admin", "p1"); found.amount_usdt, found.license_expires_at, found.status
    ...     mark_refunded(conn, "admin", "p1", now=5), mark_refunded(conn, "admin", "p1", now=6)
    ...     purchase(conn, "admin", "p1").refunded_at, purchase(conn, "admin", "nope")
    (True, False, None)
    (Decimal('50.000000'), 99, 'applied')
    (True, False)
    (5, None)
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Row

from svc_api.billing.tables import pending_payments, purchases
from svc_api.core.upsert import insert_new, inserted

_p = purchases.c


def _key(source: str, purchase_id: str) -> Any:
    return sa.and_(_p.source == source, _p.purchase_id == purchase_id)


def purchase(conn: Connection, source: str, purchase_id: str) -> Row[Any] | None:
    """The purchase ``purchase_id`` reported by ``source``, or None."""
    return conn.execute(sa.select(purchases).where(_key(source, purchase_id))).first()


def claim(conn: Connection, values: dict[str, Any]) -> bool:
    """Store a new purchase unless its ``(source, purchase_id)`` is stored already: True when this
    call stored it (of racing reports of one purchase, exactly one)."""
    # RETURNING, not rowcount: psycopg reports -1 for an INSERT ... ON CONFLICT DO NOTHING.
    stmt = insert_new(conn, purchases).values(**values).returning(_p.purchase_id)
    return conn.execute(stmt).first() is not None


def set_expiry(conn: Connection, source: str, purchase_id: str, license_expires_at: int) -> None:
    """Record the account's licence expiry right after the purchase was applied."""
    conn.execute(
        purchases.update().where(_key(source, purchase_id)).values(license_expires_at=license_expires_at)
    )


def mark_refunded(conn: Connection, source: str, purchase_id: str, *, now: int) -> bool:
    """Mark an applied purchase refunded; True when this call changed it (of racing refunds, one)."""
    update = (
        purchases.update()
        .where(_key(source, purchase_id), _p.status == "applied")
        .values(status="refunded", refunded_at=now)
    )
    return conn.execute(update).rowcount == 1


def add_pending(conn: Connection, values: dict[str, Any]) -> bool:
    """Queue a payment for an operator; False when the channel's id is queued already."""
    return inserted(conn, pending_payments, values, ["source", "external_id"])


def pending(conn: Connection, payment_id: str) -> Row[Any] | None:
    """One queued payment."""
    return conn.execute(
        sa.select(pending_payments).where(pending_payments.c.payment_id == payment_id)
    ).first()


def waiting(conn: Connection, limit: int) -> list[Row[Any]]:
    """Queued payments still waiting, oldest first."""
    p = pending_payments.c
    return list(
        conn.execute(
            sa.select(pending_payments).where(p.status == "waiting").order_by(p.created_at).limit(limit)
        )
    )


def decide_pending(
    conn: Connection, payment_id: str, status: str, now: int, svc_id: str | None = None
) -> bool:
    """Close a waiting payment; False when it was not waiting."""
    p = pending_payments.c
    values: dict[str, Any] = {"status": status, "decided_at": now}
    if svc_id is not None:
        values["svc_id"] = svc_id
    update = pending_payments.update().where(p.payment_id == payment_id, p.status == "waiting")
    return conn.execute(update.values(**values)).rowcount == 1
