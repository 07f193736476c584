"""The credits ledger: every change of a balance is a transaction row written with it, atomically.

Balances and amounts are integers of 1/``CREDIT_SCALE`` credit. A spend is one conditional
``UPDATE ... WHERE credits >= amount``: under any concurrency the balance never goes below zero and
no spend is lost or doubled (the database serialises the row). The transaction id is deterministic:
the account and its ledger sequence number, ``<svc_id>-<seq>``.

Functions take either an open connection (joining the caller's transaction) or a
:class:`~svc_api.core.store.Store` (then they run in their own write transaction).

Example:
    >>> from svc_api.core.store import Store
    >>> from svc_api.accounts.service import register
    >>> with store.write() as conn:
    ...     sid = register(conn, "c@example.com", "password1", ip="::1", ttl=60, now=0).svc_id
    >>> adjust_credits(store, sid, 10, reason="welcome", now=0)["amount"]
    10
    >>> spend_credits(store, sid, "2.5", "backtest", "BTC 1h backtest", now=1)["balance"]
    7.5
"""

from __future__ import annotations

from typing import Any

from sqlalchemy.engine import Connection

from svc_api.core.cursors import keyset_page
from svc_api.core.errors import Invalid, NotFound
from svc_api.core.money import Amount, from_units, to_units
from svc_api.core.store import Store
from svc_api.credits import queries
from svc_api.credits.ledger import ACTIONS, TYPES, Action, EntryType, _post
from svc_api.credits.payments import PLATFORM_ACCOUNT, pay_many_with_fee, pay_with_fee


def spend_credits(
    conn_or_store: Connection | Store,
    svc_id: str,
    amount: Amount,
    action: str,
    description: str,
    idempotency_key: str | None = None,
    *,
    now: int,
) -> dict[str, Any]:
    """Take ``amount`` (> 0) credits from ``svc_id``; the ledger row and the balance change together.

    With an ``idempotency_key`` a repeated call returns the first transaction and charges nothing.

    Raises:
        InsufficientCredits: the balance does not cover ``amount`` (nothing is written).
        NotFound: unknown account.

    Example:
        >>> spend_credits(store, "NOPE00", 1, "backtest", "x", now=0)
        Traceback (most recent call last):
        ...
        svc_api.core.errors.NotFound: unknown account NOPE00
    """
    units = _positive(amount)
    return _post(
        conn_or_store, svc_id, -units, "spend", action, description, idempotency_key=idempotency_key, now=now
    )


def refund_credits(
    conn_or_store: Connection | Store,
    svc_id: str,
    amount: Amount,
    action: str = "strategy_refund",
    description: str = "Refund",
    idempotency_key: str | None = None,
    *,
    now: int,
) -> dict[str, Any]:
    """Give back ``amount`` (> 0) credits after a failed paid operation (an ``adjustment`` entry).

    Example:
        >>> refund_credits(store, "NOPE00", 0, now=0)
        Traceback (most recent call last):
        ...
        svc_api.core.errors.Invalid: amount must be positive, got 0
    """
    units = _positive(amount)
    return _post(
        conn_or_store,
        svc_id,
        units,
        "adjustment",
        action,
        description,
        idempotency_key=idempotency_key,
        now=now,
    )


def deposit_credits(
    conn_or_store: Connection | Store,
    svc_id: str,
    amount: Amount,
    description: str = "Deposit",
    idempotency_key: str | None = None,
    *,
    now: int,
) -> dict[str, Any]:
    """Add purchased credits (a ``deposit`` entry).

    Example:
        >>> deposit_credits(store, "NOPE00", -1, now=0)
        Traceback (most recent call last):
        ...
        svc_api.core.errors.Invalid: amount must be positive, got -1
    """
    units = _positive(amount)
    return _post(
        conn_or_store,
        svc_id,
        units,
        "deposit",
        "deposit",
        description,
        idempotency_key=idempotency_key,
        now=now,
    )


def adjust_credits(
    conn_or_store: Connection | Store, svc_id: str, amount: Amount, *, reason: str, now: int
) -> dict[str, Any]:
    """Operator correction, signed; the reason is stored but never shown to the user.

    Example:
        >>> adjust_credits(store, "NOPE00", 0, reason="x", now=0)
        Traceback (most recent call last):
        ...
        svc_api.core.errors.Invalid: amount must not be zero
    """
    units = to_units(amount)
    if units == 0:
        raise Invalid("amount must not be zero")
    if not reason.strip():
        raise Invalid("reason must not be empty")
    return _post(
        conn_or_store,
        svc_id,
        units,
        "adjustment",
        "credit_adjustment",
        "Balance correction",
        reason=reason.strip(),
        now=now,
    )


def balance(conn: Connection, svc_id: str) -> int | float:
    """Current balance of ``svc_id`` in credits.

    Example:
        >>> with store.read() as conn:
        ...     balance(conn, "NOPE00")
        Traceback (most recent call last):
        ...
        svc_api.core.errors.NotFound: unknown account NOPE00
    """
    units = queries.balance_units(conn, svc_id)
    if units is None:
        raise NotFound(f"unknown account {svc_id}")
    return from_units(units)


def credits_history(
    conn: Connection, svc_id: str, *, limit: int, before_seq: int | None = None
) -> tuple[list[dict[str, Any]], bool]:
    """Ledger entries newest first, keyset-paged on the sequence number; returns (page, has_more).

    Example:
        >>> with store.read() as conn:
        ...     credits_history(conn, "NOPE00", limit=50)
        ([], False)
    """
    rows, more = keyset_page(lambda n: queries.history(conn, svc_id, limit=n, before_seq=before_seq), limit)
    return [_public(row) for row in rows], more


def history_page(
    store: Store, svc_id: str, *, limit: int, before_seq: int | None = None
) -> tuple[list[dict[str, Any]], bool]:
    """:func:`credits_history` in a read transaction.

    Example:
        >>> history_page(store, "NOPE00", limit=50)
        ([], False)
    """
    with store.read() as conn:
        return credits_history(conn, svc_id, limit=limit, before_seq=before_seq)


def _positive(amount: Amount) -> int:
    units = to_units(amount)
    if units <= 0:
        raise Invalid(f"amount must be positive, got {amount!r}")
    return units


def _public(row: Any) -> dict[str, Any]:
    return {
        "transaction_id": row.transaction_id,
        "type": row.type,
        "amount": from_units(row.amount),
        "action": row.action,
        "description": row.description,
        "timestamp": int(row.created_at),
        "seq": int(row.seq),
    }


__all__ = [
    "ACTIONS",
    "PLATFORM_ACCOUNT",
    "TYPES",
    "Action",
    "EntryType",
    "adjust_credits",
    "balance",
    "credits_history",
    "deposit_credits",
    "from_units",
    "history_page",
    "pay_many_with_fee",
    "pay_with_fee",
    "refund_credits",
    "spend_credits",
    "to_units",
]
