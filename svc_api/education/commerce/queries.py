"""Every SQL statement of education commerce: orders, the provider's callback outbox, the sales
ledger, entitlements and refunds."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Row

from svc_api.core.upsert import inserted
from svc_api.education.tables import entitlements, ledger, orders, payment_events, refunds

O = orders.c
E = entitlements.c
OPEN = ("awaiting_payment", "processing")


def insert_order(conn: Connection, **values: Any) -> None:
    conn.execute(orders.insert().values(**values))


def order(conn: Connection, order_id: str) -> Row[Any] | None:
    return conn.execute(sa.select(orders).where(O.order_id == order_id)).first()


def order_by_token(conn: Connection, token: str) -> Row[Any] | None:
    return conn.execute(sa.select(orders).where(O.session_token == token)).first()


def open_order(conn: Connection, svc_id: str, kind: str, item_id: str, now: int) -> Row[Any] | None:
    """An unexpired, unfinished checkout of the same buyer for the same item."""
    query = sa.select(orders).where(
        O.svc_id == svc_id, O.item_kind == kind, O.item_id == item_id, O.state.in_(OPEN), O.expires_at > now
    )
    return conn.execute(query.limit(1)).first()


def move_order(conn: Connection, order_id: str, from_states: Sequence[str], **values: Any) -> bool:
    """Compare-and-set of an order's state: True when this call moved it."""
    result = conn.execute(
        orders.update().where(O.order_id == order_id, O.state.in_(list(from_states))).values(**values)
    )
    return result.rowcount == 1


def add_event(
    conn: Connection, event_id: str, order_id: str, payload: bytes, signature: str, now: int
) -> None:
    conn.execute(
        payment_events.insert().values(
            event_id=event_id, order_id=order_id, payload=payload.decode(), signature=signature, next_at=now
        )
    )


def due_events(conn: Connection, now: int, limit: int) -> list[Row[Any]]:
    query = sa.select(payment_events).where(
        payment_events.c.delivered_at.is_(None), payment_events.c.next_at <= now
    )
    return list(conn.execute(query.order_by(payment_events.c.next_at).limit(limit)))


def event_delivered(conn: Connection, event_id: str, now: int) -> None:
    conn.execute(
        payment_events.update().where(payment_events.c.event_id == event_id).values(delivered_at=now)
    )


def event_failed(conn: Connection, event_id: str, attempts: int, next_at: int, error: str) -> None:
    conn.execute(
        payment_events.update()
        .where(payment_events.c.event_id == event_id)
        .values(attempts=attempts, next_at=next_at, last_error=error[:300])
    )


def add_ledger(conn: Connection, **values: Any) -> bool:
    """One sale or refund entry per order (a second of the same kind is refused by its key)."""
    return inserted(conn, ledger, values, keys=["order_id", "kind"])


def grant(conn: Connection, order_id: str, product_id: str, svc_id: str, now: int) -> bool:
    """Grant one entitlement (once per order and product)."""
    values = {"order_id": order_id, "product_id": product_id, "svc_id": svc_id, "granted_at": now}
    return inserted(conn, entitlements, values)


def revoke(conn: Connection, order_id: str, now: int) -> list[str]:
    """End the entitlements of an order; the products they were for."""
    rows = conn.execute(sa.select(E.product_id).where(E.order_id == order_id, E.revoked_at.is_(None)))
    products = [row.product_id for row in rows]
    conn.execute(
        entitlements.update().where(E.order_id == order_id, E.revoked_at.is_(None)).values(revoked_at=now)
    )
    return products


def owned(conn: Connection, svc_id: str, product_ids: Sequence[str]) -> set[str]:
    """The products among ``product_ids`` the account holds an active entitlement to."""
    if not product_ids:
        return set()
    query = sa.select(E.product_id).where(
        E.svc_id == svc_id, E.product_id.in_(list(product_ids)), E.revoked_at.is_(None)
    )
    return {row.product_id for row in conn.execute(query)}


def library_page(conn: Connection, svc_id: str, after: tuple[int, str] | None, limit: int) -> list[Row[Any]]:
    """Distinct entitled products, earliest grant first, keyset on (first grant, product)."""
    first = sa.func.min(E.granted_at).label("granted_at")
    query = (
        sa.select(E.product_id, first)
        .where(E.svc_id == svc_id, E.revoked_at.is_(None))
        .group_by(E.product_id)
    )
    if after is not None:
        query = query.having(sa.tuple_(first, E.product_id) > after)
    return list(conn.execute(query.order_by(first, E.product_id).limit(limit)))


def all_owned(conn: Connection, svc_id: str) -> list[str]:
    query = sa.select(E.product_id).where(E.svc_id == svc_id, E.revoked_at.is_(None)).distinct()
    return [row.product_id for row in conn.execute(query)]


def order_products(conn: Connection, order_id: str) -> list[str]:
    rows = conn.execute(sa.select(E.product_id).where(E.order_id == order_id).order_by(E.product_id))
    return [row.product_id for row in rows]


def add_refund(conn: Connection, **values: Any) -> bool:
    """Insert the order's refund request unless it has one (one per order)."""
    return inserted(conn, refunds, values, keys=["order_id"])


def refund(conn: Connection, refund_request_id: str) -> Row[Any] | None:
    return conn.execute(sa.select(refunds).where(refunds.c.refund_request_id == refund_request_id)).first()


def refund_of_order(conn: Connection, order_id: str) -> Row[Any] | None:
    return conn.execute(sa.select(refunds).where(refunds.c.order_id == order_id)).first()


def complete_refund(conn: Connection, refund_request_id: str, now: int) -> None:
    conn.execute(
        refunds.update()
        .where(refunds.c.refund_request_id == refund_request_id)
        .values(state="completed", completed_at=now)
    )
