"""Billing: the one door through which plans and payments (store purchases, USDT transfers, the
operator) turn a purchase into plan time and the inviter's commission, and take them back on a
refund. The rules are in :mod:`svc_api.billing.purchases`; the use cases below run each in its own
write transaction.

Example:
    >>> purchase(store, "NOPE00", "pro", "monthly", "p1", now=0)
    Traceback (most recent call last):
    ...
    svc_api.core.errors.NotFound: unknown account NOPE00
"""

from __future__ import annotations

from typing import Any

from svc_api.billing import payments
from svc_api.billing.channels import card_webhook, iap_verify, store_notification
from svc_api.billing.purchases import PERIOD_DAYS, PRICES, apply_purchase, purchase_amount, refund_purchase
from svc_api.core.store import Store


def purchase(
    store: Store,
    svc_id: str,
    plan: str,
    period: str,
    purchase_id: object,
    amount_usdt: object = None,
    source: object = "admin",
    *,
    now: int,
) -> dict[str, Any]:
    """:func:`apply_purchase` in a write transaction (``svc admin purchase``).

    Example:
        >>> purchase(store, "NOPE00", "gold", "monthly", "p1", now=0)
        Traceback (most recent call last):
        ...
        svc_api.core.errors.Invalid: plan must be one of starter, plus, pro, investor, got 'gold'
    """
    with store.write() as conn:
        return apply_purchase(conn, svc_id, plan, period, purchase_id, amount_usdt, source, now=now)


def refund(store: Store, source: str, purchase_id: str, *, now: int) -> dict[str, Any]:
    """:func:`refund_purchase` in a write transaction (``svc admin refund``).

    Example:
        >>> refund(store, "admin", "p1", now=0)
        Traceback (most recent call last):
        ...
        svc_api.core.errors.NotFound: no purchase 'p1' from 'admin'
    """
    with store.write() as conn:
        return refund_purchase(conn, source, purchase_id, now)


def pending_payments(store: Store, limit: int = 100) -> list[dict[str, Any]]:
    """Payments waiting for an operator (``svc admin payments pending``).

    Example:
        >>> pending_payments(store)
        []
    """
    with store.read() as conn:
        return payments.waiting(conn, limit)


def assign_payment(
    store: Store, payment_id: str, svc_id: str, plan: str | None, period: str | None, *, now: int
) -> dict[str, Any]:
    """Apply a queued payment to an account (``svc admin payments assign``)."""
    with store.write() as conn:
        return payments.assign(conn, payment_id, svc_id, plan, period, now=now)


def dismiss_payment(store: Store, payment_id: str, *, now: int) -> dict[str, Any]:
    """Close a queued payment (``svc admin payments dismiss``)."""
    with store.write() as conn:
        return payments.dismiss(conn, payment_id, now=now)


def receive_payment(store: Store, **payment: Any) -> dict[str, Any]:
    """:func:`~svc_api.billing.payments.receive` in a write transaction (the USDT channel)."""
    with store.write() as conn:
        return payments.receive(conn, **payment)


def buyer_of(store: Store, note: str, linked: str | None) -> str | None:
    """:func:`~svc_api.billing.payments.buyer` in a read transaction."""
    with store.read() as conn:
        return payments.buyer(conn, note, None, linked)


__all__ = [
    "PERIOD_DAYS",
    "PRICES",
    "apply_purchase",
    "assign_payment",
    "buyer_of",
    "card_webhook",
    "dismiss_payment",
    "iap_verify",
    "pending_payments",
    "purchase",
    "purchase_amount",
    "receive_payment",
    "refund",
    "refund_purchase",
    "store_notification",
]
