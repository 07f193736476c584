"""Buying: checkout sessions, orders and their states, the provider's callback, entitlements,
refunds, and the sales ledger.

Order states: ``awaiting_payment`` (the checkout page is open) -> ``processing`` (the buyer
approved or declined; the provider's callback is on its way) -> ``paid`` or ``failed``;
``awaiting_payment`` -> ``expired`` after ``EDU_CHECKOUT_TTL_SECONDS``; ``paid`` -> ``refunded``. A
free item is ``paid`` at once. The move to ``paid`` is a compare-and-set, so a callback delivered
twice, even at the same moment, grants each entitlement once; each sale and refund writes one
ledger row in the same transaction.

Example:
    >>> refund_window_ends(1_700_000_000) - 1_700_000_000 == 15 * 86_400
    True
"""

from __future__ import annotations

import json
import re
import secrets
from collections.abc import Mapping
from typing import Any

from sqlalchemy.engine import Connection, Row

from svc_api.core.errors import ApiError, Conflict, Forbidden, Invalid, NotFound
from svc_api.core.store import Store
from svc_api.education.catalog import service as catalog
from svc_api.education.commerce import queries
from svc_api.education.commerce.provider import PaymentProvider

REFUND_WINDOW_SECONDS = 15 * 86_400
_TOKEN = re.compile(r"[A-Za-z0-9_-]{16,64}")


def _unprocessable(error: str, message: str) -> ApiError:
    return ApiError(422, error, extra={"message": message})


def refund_window_ends(paid_at: int) -> int:
    """When the 15-day refund window of an order paid at ``paid_at`` closes."""
    return int(paid_at) + REFUND_WINDOW_SECONDS


def owned(conn: Connection, svc_id: str | None, product_ids: list[str]) -> set[str]:
    """The products among ``product_ids`` the account may learn from (none for a guest)."""
    return set() if svc_id is None else queries.owned(conn, svc_id, product_ids)


def order_product_ids(conn: Connection, order_id: str) -> list[str]:
    """The products an order granted."""
    return queries.order_products(conn, order_id)


def require_entitlement(conn: Connection, svc_id: str, product_id: str) -> None:
    """403 unless the account holds an active entitlement to the product."""
    if product_id not in queries.owned(conn, svc_id, [product_id]):
        raise Forbidden(f"you have no entitlement to product {product_id}", code="no_entitlement")


def owned_products(conn: Connection, svc_id: str) -> list[str]:
    """Every product the account holds an active entitlement to."""
    return queries.all_owned(conn, svc_id)


def library_page(
    conn: Connection, svc_id: str, after: dict[str, Any] | None, limit: int
) -> tuple[list[Row[Any]], bool]:
    """Entitled products, deduplicated, in order of first grant."""
    key = None if after is None else (after["t"], after["id"])
    rows = queries.library_page(conn, svc_id, key, limit + 1)
    return rows[:limit], len(rows) > limit


def _item(conn: Connection, kind: str, item_id: str) -> tuple[Row[Any], list[str]]:
    """(priced row, products it grants) of a product or bundle; 422 when not purchasable."""
    if kind == "product":
        row = catalog.product_row(conn, item_id)
        if row is None or row.state != "published":
            raise _unprocessable("not_purchasable", f"product {item_id} is not on sale")
        return row, [item_id]
    row = catalog.bundle_row(conn, item_id)
    products = catalog.bundle_products(conn, item_id) if row is not None else []
    rows = catalog.products_by_id(conn, products)
    if row is None or row.state != "published" or any(r.state != "published" for r in rows.values()):
        raise _unprocessable("not_purchasable", f"bundle {item_id} is not on sale")
    return row, products


def checkout(
    conn: Connection,
    provider: PaymentProvider,
    svc_id: str,
    item: tuple[str, str],
    *,
    now: int,
    is_open: bool,
    ttl: int,
    expected: tuple[int, str] | None,
) -> dict[str, Any]:
    """Open a checkout session (an order) for ``item``, ``(kind, id)`` of a product or bundle (its
    format checked by the route's body model); see the module docstring.

    422 when checkout is closed, the item is not on sale, is the buyer's own, or its price is not
    ``expected``; 409 when the buyer owns everything it grants or has an open checkout for it.
    """
    if not is_open:
        raise _unprocessable("checkout_closed", "checkout is closed right now; see /commerce/capabilities")
    kind, item_id = item
    row, products = _item(conn, kind, item_id)
    if row.leader_id == svc_id:
        raise _unprocessable("not_purchasable", "you cannot buy your own product")
    if expected is not None and expected != (int(row.price_minor), row.currency):
        raise _unprocessable(
            "price_changed", f"the price is now {row.price_minor} {row.currency} minor units"
        )
    if set(products) <= queries.owned(conn, svc_id, products):
        raise Conflict(f"you already own {kind} {item_id}", code="already_owned")
    pending = queries.open_order(conn, svc_id, kind, item_id, now)
    if pending is not None:
        raise Conflict(
            f"order {pending.order_id} for this {kind} is still open",
            code="checkout_open",
            extra={"order_id": pending.order_id},
        )
    order_id, token = catalog.new_id("or_"), secrets.token_urlsafe(24)
    queries.insert_order(
        conn,
        order_id=order_id,
        svc_id=svc_id,
        item_kind=kind,
        item_id=item_id,
        amount_minor=int(row.price_minor),
        currency=row.currency,
        state="awaiting_payment",
        provider=provider.name,
        session_token=token,
        created_at=now,
        expires_at=now + ttl,
        updated_at=now,
    )
    if int(row.price_minor) == 0:
        _pay(conn, order_id, now)
    return order_view(conn, provider, svc_id, order_id, now=now)


def _pay(conn: Connection, order_id: str, now: int) -> bool:
    """Mark an open order paid and grant what it buys, once (False when it was not open)."""
    if not queries.move_order(conn, order_id, queries.OPEN, state="paid", paid_at=now, updated_at=now):
        return False
    order = queries.order(conn, order_id)
    products = (
        [order.item_id] if order.item_kind == "product" else catalog.bundle_products(conn, order.item_id)
    )
    held = queries.owned(conn, order.svc_id, products)
    for product_id in products:
        queries.grant(conn, order_id, product_id, order.svc_id, now)
        if product_id not in held:
            catalog.add_students(conn, product_id, 1)
    seller = catalog.product_row(conn, products[0]).leader_id
    queries.add_ledger(
        conn,
        order_id=order_id,
        kind="sale",
        svc_id=order.svc_id,
        leader_id=seller,
        amount_minor=int(order.amount_minor),
        currency=order.currency,
        at=now,
    )
    return True


def order_view(
    conn: Connection, provider: PaymentProvider, svc_id: str, order_id: str, *, now: int
) -> dict[str, Any]:
    """An order as its creator sees it (404 unknown, 403 someone else's)."""
    order = queries.order(conn, order_id)
    if order is None:
        raise NotFound(f"no order {order_id}")
    if order.svc_id != svc_id:
        raise Forbidden("only the buyer may read this order", code="not_owner")
    state = "expired" if order.state == "awaiting_payment" and order.expires_at <= now else order.state
    refund = queries.refund_of_order(conn, order_id)
    return {
        "order_id": order.order_id,
        "state": state,
        "item": {"kind": order.item_kind, "id": order.item_id},
        "amount": {"amount_minor": int(order.amount_minor), "currency": order.currency},
        "checkout_url": provider.checkout_url(order.session_token) if state == "awaiting_payment" else None,
        "created_at": order.created_at,
        "expires_at": order.expires_at,
        "paid_at": order.paid_at,
        "refundable_until": refund_window_ends(order.paid_at) if order.paid_at is not None else None,
        "products": queries.order_products(conn, order_id),
        "refund_request_id": refund.refund_request_id if refund is not None else None,
    }


def sandbox_page(conn: Connection, token: str, *, now: int) -> Row[Any]:
    """The open order behind a sandbox checkout page (404 unknown, 409 finished or expired)."""
    # Tokens are token_urlsafe: anything else names no session (and a NUL never reaches the store).
    order = queries.order_by_token(conn, token) if _TOKEN.fullmatch(token) else None
    if order is None:
        raise NotFound("no such checkout session")
    if order.state != "awaiting_payment" or order.expires_at <= now:
        raise Conflict("this checkout session is finished or expired", code="session_closed")
    return order


def sandbox_decide(conn: Connection, provider: Any, token: str, outcome: str, *, now: int) -> str:
    """The buyer approves (``paid``) or declines on the sandbox page: the order moves to
    ``processing`` and the signed callback goes to the outbox; its event id."""
    order = sandbox_page(conn, token, now=now)
    if not queries.move_order(
        conn, order.order_id, ("awaiting_payment",), state="processing", updated_at=now
    ):
        raise Conflict("this checkout session is finished", code="session_closed")
    event_id = "ev_" + secrets.token_hex(8)
    payload = provider.event(
        event_id, order.order_id, outcome, int(order.amount_minor), order.currency, at=now
    )
    queries.add_event(conn, event_id, order.order_id, payload, provider.sign(payload), now)
    return event_id


def payment_callback(
    conn: Connection, provider: PaymentProvider, payload: bytes, signature: str | None, *, now: int
) -> dict[str, Any]:
    """Apply a provider callback (401 bad signature, 400 malformed); idempotent: a repeated or
    concurrent delivery of the same outcome changes nothing more."""
    if not provider.verify(payload, signature):
        raise ApiError(401, "invalid_signature", extra={"message": "the callback signature does not match"})
    try:
        event = json.loads(payload)
        order_id, outcome = str(event["order_id"]), str(event["outcome"])
    except (ValueError, KeyError, TypeError):
        raise Invalid("the callback is not a payment event") from None
    order = queries.order(conn, order_id)
    if order is None:
        raise NotFound(f"no order {order_id}")
    if outcome == "paid":
        applied = _pay(conn, order_id, now)
    else:
        applied = queries.move_order(conn, order_id, queries.OPEN, state="failed", updated_at=now)
    return {"order_id": order_id, "applied": applied}


def deliver_due(store: Store, provider: PaymentProvider, *, now: int, limit: int = 100) -> int:
    """The provider's retry loop: deliver due callbacks, back off (doubling, up to an hour) on
    failure; how many were delivered."""
    with store.read() as conn:
        due = queries.due_events(conn, now, limit)
    delivered = 0
    for event in due:
        try:
            with store.write() as conn:
                payment_callback(conn, provider, event.payload.encode(), event.signature, now=now)
                queries.event_delivered(conn, event.event_id, now)
            delivered += 1
        except Exception as exc:
            attempts = int(event.attempts) + 1
            with store.write() as conn:
                queries.event_failed(conn, event.event_id, attempts, now + min(3600, 2**attempts), repr(exc))
    return delivered


def request_refund(
    conn: Connection, provider: PaymentProvider, svc_id: str, order_id: str, reason: str, *, now: int
) -> dict[str, Any]:
    """Refund a paid order within 15 days of payment; the provider refunds at once, the order's
    entitlements end and a refund ledger row is written, all in this transaction.

    403 unknown or someone else's order; 409 a refund was already requested; 422 not paid, free,
    marked non-refundable by its instructor, or outside the window.
    """
    order = queries.order(conn, order_id)
    if order is None or order.svc_id != svc_id:
        raise Forbidden("only the buyer of an order may ask for its refund", code="not_owner")
    if queries.refund_of_order(conn, order_id) is not None:
        raise Conflict("a refund was already requested for this order", code="already_requested")
    if order.state != "paid" or int(order.amount_minor) == 0:
        raise _unprocessable(
            "not_refundable",
            f"an order that is {order.state} and costs {order.amount_minor} cannot be refunded",
        )
    products = queries.order_products(conn, order_id)
    rows = catalog.products_by_id(conn, products)
    if any(not row.refundable for row in rows.values()):
        raise _unprocessable("not_refundable", "this product's instructor sells it without refunds")
    if now > refund_window_ends(order.paid_at):
        raise _unprocessable("outside_refund_window", "refunds are possible within 15 days of payment")
    refund_id = catalog.new_id("rf_")
    if not queries.add_refund(
        conn,
        refund_request_id=refund_id,
        order_id=order_id,
        svc_id=svc_id,
        reason=reason,
        state="requested",
        amount_minor=int(order.amount_minor),
        currency=order.currency,
        created_at=now,
    ):
        raise Conflict("a refund was already requested for this order", code="already_requested")
    provider.refund(order_id, int(order.amount_minor), order.currency)
    _complete_refund(conn, order, refund_id, rows, now)
    return refund_view(conn, svc_id, order_id, refund_id)


def _complete_refund(
    conn: Connection, order: Row[Any], refund_id: str, rows: Mapping[str, Row[Any]], now: int
) -> None:
    queries.move_order(conn, order.order_id, ("paid",), state="refunded", updated_at=now)
    revoked = queries.revoke(conn, order.order_id, now)
    still = queries.owned(conn, order.svc_id, revoked)
    for product_id in revoked:
        if product_id not in still:
            catalog.add_students(conn, product_id, -1)
    queries.complete_refund(conn, refund_id, now)
    queries.add_ledger(
        conn,
        order_id=order.order_id,
        kind="refund",
        svc_id=order.svc_id,
        leader_id=next(iter(rows.values())).leader_id,
        amount_minor=-int(order.amount_minor),
        currency=order.currency,
        at=now,
    )


def refund_view(conn: Connection, svc_id: str, order_id: str, refund_id: str) -> dict[str, Any]:
    """A refund request as its owner sees it (404 unknown or not of that order, 403 not theirs)."""
    row = queries.refund(conn, refund_id)
    if row is None or row.order_id != order_id:
        raise NotFound(f"no refund request {refund_id} for order {order_id}")
    if row.svc_id != svc_id:
        raise Forbidden("only the buyer may read this refund request", code="not_owner")
    return {
        "refund_request_id": row.refund_request_id,
        "order_id": row.order_id,
        "state": row.state,
        "amount": {"amount_minor": int(row.amount_minor), "currency": row.currency},
        "reason": row.reason,
        "created_at": row.created_at,
        "completed_at": row.completed_at,
    }


def sales_totals(
    conn: Connection, leader_id: str, currency: str, span: tuple[int | None, int | None], item: Any
) -> Row[Any]:
    """A seller's sales in ``span`` = [start, end) (None: open): ``orders``, ``gross``,
    ``refunded_orders``, ``refunds`` (positive minor units); ``item`` (kind, id) narrows them."""
    return queries.sales_totals(conn, leader_id, currency, span[0], span[1], item)


def sales_breakdown(
    conn: Connection,
    leader_id: str,
    currency: str,
    span: tuple[int | None, int | None],
    item: Any,
    by: str,
    after: Any,
    limit: int,
) -> list[Row[Any]]:
    """The same figures per sold item (``by="product"``: ``item_kind``, ``item_id``) or per UTC day
    (``by="day"``: ``day`` since the epoch), after the keyset position ``after``."""
    fetch = queries.sales_by_item if by == "product" else queries.sales_by_day
    return fetch(conn, leader_id, currency, span[0], span[1], item, after, limit)


def seller_entries(conn: Connection, leader_id: str, start: int | None, end: int) -> list[Row[Any]]:
    """A seller's sale (+) and refund (-) ledger entries in ``[start, end)``, oldest first."""
    return queries.ledger_entries(conn, leader_id, start, end)


def sellers_with_sales(conn: Connection, end: int) -> list[str]:
    """Every seller with a sale or refund before ``end``."""
    return queries.ledger_sellers(conn, end)
