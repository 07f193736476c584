"""Commerce as the routes call it: each request in one transaction of its own (checkout, an order,
a refund request, the provider's callback, the sandbox provider's hosted page). The rules are in
:mod:`.service`, which works inside a caller's transaction.

Example:
    >>> refund(store, "AB12CD", "ord_nope", "rr_nope")
    Traceback (most recent call last):
    ...
    svc_api.core.errors.NotFound: no refund request rr_nope for order ord_nope
"""

from __future__ import annotations

from typing import Any

from svc_api.core.store import Store
from svc_api.education.commerce import service as commerce
from svc_api.education.commerce.provider import PaymentProvider


def checkout(
    store: Store,
    provider: PaymentProvider,
    svc_id: str,
    item: tuple[str, str],
    *,
    now: int,
    is_open: bool,
    ttl: int,
    expected: tuple[int, str] | None,
) -> dict[str, Any]:
    """Open a checkout session for ``item`` (kind, id) (:func:`.service.checkout`)."""
    with store.write() as conn:
        return commerce.checkout(
            conn, provider, svc_id, item, now=now, is_open=is_open, ttl=ttl, expected=expected
        )


def order(store: Store, provider: PaymentProvider, svc_id: str, order_id: str, *, now: int) -> dict[str, Any]:
    """An order as its creator sees it (404 unknown, 403 someone else's)."""
    with store.read() as conn:
        return commerce.order_view(conn, provider, svc_id, order_id, now=now)


def refund(store: Store, svc_id: str, order_id: str, refund_id: str) -> dict[str, Any]:
    """A refund request as its owner sees it (404 unknown or not of that order, 403 not theirs)."""
    with store.read() as conn:
        return commerce.refund_view(conn, svc_id, order_id, refund_id)


def callback(
    store: Store, provider: PaymentProvider, payload: bytes, signature: str | None, *, now: int
) -> dict[str, Any]:
    """Apply a provider callback (:func:`.service.payment_callback`)."""
    with store.write() as conn:
        return commerce.payment_callback(conn, provider, payload, signature, now=now)


def sandbox_order(store: Store, token: str, *, now: int) -> Any:
    """The order behind a sandbox checkout page (404 unknown or expired)."""
    with store.read() as conn:
        return commerce.sandbox_page(conn, token, now=now)


def sandbox_outcome(store: Store, provider: PaymentProvider, token: str, outcome: str, *, now: int) -> str:
    """Record the payer's choice on a sandbox page, then deliver the callbacks due; the order id."""
    with store.write() as conn:
        order_id = str(commerce.sandbox_page(conn, token, now=now).order_id)
        commerce.sandbox_decide(conn, provider, token, outcome, now=now)
    commerce.deliver_due(store, provider, now=now)
    return order_id
