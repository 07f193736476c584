"""Billing: the one door through which plans and payments (store purchases, USDT transfers, the
operator) turn a purchase into plan time and the inviter's commission, and take them back on a
refund. The rules are in :mod:`svc_api.billing.purchases`; the use cases below run each in its own
write transaction.

Example:
    >>> from svc_api.core.store import Store
    >>> from svc_api.migrations import migrate
    >>> store = Store("sqlite:///:memory:"); _ = migrate(store)
    >>> purchase(store, "NOPE00", "pro", "monthly", "p1", now=0)
    Traceback (most recent call last):
    ...
    svc_api.core.errors.NotFound: unknown account NOPE00
"""

from __future__ import annotations

from typing import Any

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
    now: int | None = None,
) -> dict[str, Any]:
    """:func:`apply_purchase` in a write transaction (``svc admin purchase``).

    Example:
        >>> from svc_api.migrations import migrate
        >>> store = Store("sqlite:///:memory:"); _ = migrate(store)
        >>> purchase(store, "NOPE00", "gold", "monthly", "p1")
        Traceback (most recent call last):
        ...
        svc_api.core.errors.Invalid: plan must be one of starter, plus, pro, investor, got 'gold'
    """
    with store.write() as conn:
        return apply_purchase(conn, svc_id, plan, period, purchase_id, amount_usdt, source, now)


def refund(store: Store, source: str, purchase_id: str, *, now: int) -> dict[str, Any]:
    """:func:`refund_purchase` in a write transaction (``svc admin refund``).

    Example:
        >>> from svc_api.migrations import migrate
        >>> store = Store("sqlite:///:memory:"); _ = migrate(store)
        >>> refund(store, "admin", "p1", now=0)
        Traceback (most recent call last):
        ...
        svc_api.core.errors.NotFound: no purchase 'p1' from 'admin'
    """
    with store.write() as conn:
        return refund_purchase(conn, source, purchase_id, now)


__all__ = [
    "PERIOD_DAYS",
    "PRICES",
    "apply_purchase",
    "purchase",
    "purchase_amount",
    "refund",
    "refund_purchase",
]
