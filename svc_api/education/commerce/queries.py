"""Every SQL statement of education commerce: orders, the provider's callback outbox, the sales
ledger, entitlements and refunds."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Row

from svc_api.core.upsert import inserted
from svc_api.education.commerce.tables import entitlements, ledger, orders, payment_events, refunds

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


# Reads of the sales ledger for sales analytics and payout statements (the payouts domain).
L = ledger.c


def _ledger_scope(
    leader_id: str, currency: str | None, start: int | None, end: int | None, item: tuple[str, str] | None
) -> list[Any]:
    conditions: list[Any] = [L.leader_id == leader_id]
    if currency is not None:
        conditions.append(L.currency == currency)
    if start is not None:
        conditions.append(L.at >= start)
    if end is not None:
        conditions.append(L.at < end)
    if item is not None:
        conditions += [O.item_kind == item[0], O.item_id == item[1]]
    return conditions


def _sales_columns() -> list[Any]:
    sale, refund = L.kind == "sale", L.kind == "refund"
    return [
        sa.func.count(sa.case((sale, 1))).label("orders"),
        sa.func.coalesce(sa.func.sum(sa.case((sale, L.amount_minor), else_=0)), 0).label("gross"),
        sa.func.count(sa.case((refund, 1))).label("refunded_orders"),
        sa.func.coalesce(sa.func.sum(sa.case((refund, -L.amount_minor), else_=0)), 0).label("refunds"),
    ]


def sales_totals(
    conn: Connection,
    leader_id: str,
    currency: str,
    start: int | None,
    end: int | None,
    item: tuple[str, str] | None,
) -> Row[Any]:
    """Counts and sums of a seller's sale and refund entries in ``[start, end)``."""
    query = sa.select(*_sales_columns()).select_from(ledger.join(orders, O.order_id == L.order_id))
    return conn.execute(query.where(*_ledger_scope(leader_id, currency, start, end, item))).one()


def sales_by_item(
    conn: Connection,
    leader_id: str,
    currency: str,
    start: int | None,
    end: int | None,
    item: tuple[str, str] | None,
    after: tuple[str, str] | None,
    limit: int,
) -> list[Row[Any]]:
    """The same sums per sold item (product or bundle), keyset on (kind, id)."""
    query = (
        sa.select(O.item_kind, O.item_id, *_sales_columns())
        .select_from(ledger.join(orders, O.order_id == L.order_id))
        .where(*_ledger_scope(leader_id, currency, start, end, item))
        .group_by(O.item_kind, O.item_id)
    )
    if after is not None:
        query = query.having(sa.tuple_(O.item_kind, O.item_id) > after)
    return list(conn.execute(query.order_by(O.item_kind, O.item_id).limit(limit)))


def sales_by_day(
    conn: Connection,
    leader_id: str,
    currency: str,
    start: int | None,
    end: int | None,
    item: tuple[str, str] | None,
    after: int | None,
    limit: int,
) -> list[Row[Any]]:
    """The same sums per UTC day (days since the epoch), keyset on the day."""
    day = (L.at // 86_400).label("day")
    query = (
        sa.select(day, *_sales_columns())
        .select_from(ledger.join(orders, O.order_id == L.order_id))
        .where(*_ledger_scope(leader_id, currency, start, end, item))
        .group_by(day)
    )
    if after is not None:
        query = query.having(day > after)
    return list(conn.execute(query.order_by(day).limit(limit)))


def ledger_entries(conn: Connection, leader_id: str, start: int | None, end: int) -> list[Row[Any]]:
    """A seller's ledger entries in ``[start, end)``, in order."""
    query = sa.select(L.order_id, L.kind, L.amount_minor, L.currency, L.at).where(
        *_ledger_scope(leader_id, None, start, end, None)
    )
    return list(conn.execute(query.order_by(L.at, L.entry_id)))


def ledger_sellers(conn: Connection, end: int) -> list[str]:
    """Every seller with a ledger entry before ``end``."""
    query = sa.select(L.leader_id).where(L.at < end).distinct().order_by(L.leader_id)
    return [row.leader_id for row in conn.execute(query)]
