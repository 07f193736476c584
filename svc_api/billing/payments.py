"""Payments arriving from the channels (card store, app stores, USDT transfers) become purchases,
or wait for an operator.

A payment names a product ``svc_<plan>_<period>``; its account comes from a 6-character ``svc_id``
in its note (or bound by the app), else from its e-mail (card store), else from the payer's linked
exchange account (USDT). A note that names several existing accounts names no buyer: guessing one
could credit the wrong person, so such a payment waits for an operator, as does one with no account,
an unknown product, or an amount below the list price. Those are queued (``pending_payments``) for
``svc admin payments assign|dismiss``. Each channel's own transaction ID makes a report idempotent,
so a webhook delivered twice at once extends the plan once.

Example:
    >>> product_of("svc_pro_annual"), product_of("svc_gold_monthly")
    (('pro', 'annual'), None)
    >>> svc_ids_in("order 1042 for ab12cd")
    ['AB12CD']
"""

from __future__ import annotations

import hashlib
import re
from decimal import Decimal
from typing import Any

from sqlalchemy.engine import Connection

from svc_api.accounts import service as accounts
from svc_api.billing import queries
from svc_api.billing.purchases import PRICES, apply_purchase, refund_purchase
from svc_api.core.errors import Conflict, Invalid, NotFound

_PRODUCT = re.compile(r"^svc_([a-z]+)_(monthly|annual)$")
_SVC_ID = re.compile(r"(?<![A-Za-z0-9])([A-Za-z0-9]{6})(?![A-Za-z0-9])")


def product_of(product: object) -> tuple[str, str] | None:
    """``(plan, period)`` of a product ID, or None when it names no plan."""
    match = _PRODUCT.match(product) if isinstance(product, str) else None
    if match is None or match.group(1) not in PRICES:
        return None
    return match.group(1), match.group(2)


def svc_ids_in(note: object) -> list[str]:
    """The 6-character words of a note, upper-cased (candidates for the buyer's ``svc_id``)."""
    return [m.upper() for m in _SVC_ID.findall(note)] if isinstance(note, str) else []


def accounts_named(conn: Connection, note: object) -> list[str]:
    """The existing accounts a note names, each once, in the note's order."""
    return [c for c in dict.fromkeys(svc_ids_in(note)) if accounts.account_exists(conn, c)]


def buyer(conn: Connection, note: str, email: str | None = None, linked: str | None = None) -> str | None:
    """The account a payment is for: the one existing ``svc_id`` in the note, else the account of
    ``email``, else ``linked`` (an account found another way); None when none fits, and None when
    the note names several accounts (the payer said more than one: an operator decides)."""
    named = accounts_named(conn, note)
    if len(named) > 1:
        return None
    if named:
        return named[0]
    if email:
        found = accounts.account_of_email(conn, email)
        if found is not None:
            return found
    return linked


def receive(
    conn: Connection,
    *,
    source: str,
    external_id: str,
    svc_id: str | None,
    product: str,
    amount: Decimal,
    currency: str,
    now: int,
    email: str = "",
    note: str = "",
) -> dict[str, Any]:
    """Apply a payment as a purchase when it can be, else queue it: ``{outcome, ...}``."""
    plan_period = product_of(product)
    reason = None
    if svc_id is None:
        named = accounts_named(conn, note)
        reason = (
            f"the note names several accounts ({', '.join(named)})"
            if len(named) > 1
            else "no account found for the payment"
        )
    elif plan_period is None:
        reason = f"unknown product {product!r}"
    elif amount < PRICES[plan_period[0]][plan_period[1]]:
        reason = f"{amount.normalize()} {currency} is below the price of {product}"
    if reason is None and plan_period is not None and svc_id is not None:
        applied = apply_purchase(conn, svc_id, *plan_period, external_id, amount, source, now=now)
        return {"outcome": "applied", "purchase": applied}
    payment_id = "pay_" + hashlib.sha256(f"{source}|{external_id}".encode()).hexdigest()[:24]
    queries.add_pending(
        conn,
        {
            "payment_id": payment_id,
            "source": source,
            "external_id": external_id,
            "svc_id": svc_id,
            "email": email[:320],
            "product": product[:64],
            "amount_usd": amount,
            "currency": currency[:8],
            "note": note[:500],
            "reason": str(reason),
            "created_at": now,
        },
    )
    return {"outcome": "queued", "payment_id": payment_id, "reason": reason}


def refund(conn: Connection, *, source: str, external_id: str, now: int) -> dict[str, Any]:
    """Take back a refunded payment's purchase (404 when it was never applied)."""
    return refund_purchase(conn, source, external_id, now)


def waiting(conn: Connection, limit: int = 100) -> list[dict[str, Any]]:
    """Queued payments, oldest first (operators)."""
    return [
        {
            "payment_id": r.payment_id,
            "source": r.source,
            "external_id": r.external_id,
            "svc_id": r.svc_id,
            "email": r.email,
            "product": r.product,
            "amount_usd": str(Decimal(r.amount_usd).normalize()),
            "currency": r.currency,
            "note": r.note,
            "reason": r.reason,
            "created_at": int(r.created_at),
        }
        for r in queries.waiting(conn, limit)
    ]


def assign(
    conn: Connection, payment_id: str, svc_id: str, plan: str | None, period: str | None, *, now: int
) -> dict[str, Any]:
    """An operator applies a queued payment to ``svc_id`` as ``plan``/``period`` (any amount); either
    left out is the one of the payment's own product (400 when it names none)."""
    row = queries.pending(conn, payment_id)
    if row is None:
        raise NotFound(f"no queued payment {payment_id}")
    if plan is None or period is None:
        named = product_of(row.product)
        if named is None:
            raise Invalid(
                f"payment {payment_id} names no plan (product {row.product!r}): give --plan and --period"
            )
        plan, period = plan or named[0], period or named[1]
    if not queries.decide_pending(conn, payment_id, "applied", now, svc_id):
        raise Conflict(f"payment {payment_id} is {row.status}, not waiting")
    return apply_purchase(
        conn, svc_id, plan, period, row.external_id, Decimal(row.amount_usd), row.source, now=now
    )


def dismiss(conn: Connection, payment_id: str, *, now: int) -> dict[str, Any]:
    """An operator closes a queued payment without applying it."""
    row = queries.pending(conn, payment_id)
    if row is None:
        raise NotFound(f"no queued payment {payment_id}")
    if not queries.decide_pending(conn, payment_id, "dismissed", now):
        raise Conflict(f"payment {payment_id} is {row.status}, not waiting")
    return {"payment_id": payment_id, "status": "dismissed"}
