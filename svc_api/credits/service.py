"""The credits ledger: every change of a balance is a transaction row written with it, atomically.

Balances and amounts are integers of 1/``CREDIT_SCALE`` credit. A spend is one conditional
``UPDATE ... WHERE credits >= amount``: under any concurrency the balance never goes below zero and
no spend is lost or doubled (the database serialises the row). The transaction id is deterministic:
the account and its ledger sequence number, ``<svc_id>-<seq>``.

Functions take either an open connection (joining the caller's transaction) or a
:class:`~svc_api.core.store.Store` (then they run in their own write transaction).

Example:
    >>> from svc_api.core.store import Store
    >>> from svc_api.migrations import migrate
    >>> from svc_api.accounts.service import register
    >>> store = Store("sqlite:///:memory:"); _ = migrate(store)
    >>> with store.write() as conn:
    ...     sid = register(conn, "c@example.com", "password1", ip="::1", ttl=60).svc_id
    >>> adjust_credits(store, sid, 10, reason="welcome")["amount"]
    10
    >>> spend_credits(store, sid, "2.5", "backtest", "BTC 1h backtest")["balance"]
    7.5
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from svc_api.accounts import service as accounts
from svc_api.core.cursors import keyset_page
from svc_api.core.errors import InsufficientCredits, Invalid, NotFound
from svc_api.core.money import Amount, from_units, to_units
from svc_api.core.store import Store
from svc_api.credits import queries

TYPES = ("adjustment", "spend", "deposit")
ACTIONS = (
    "deposit",
    "backtest",
    "credit_adjustment",
    "strategy_generate",
    "strategy_refund",
    "marketplace_signal",
)


def spend_credits(
    conn_or_store: Connection | Store,
    svc_id: str,
    amount: Amount,
    action: str,
    description: str,
    idempotency_key: str | None = None,
) -> dict[str, Any]:
    """Take ``amount`` (> 0) credits from ``svc_id``; the ledger row and the balance change together.

    With an ``idempotency_key`` a repeated call returns the first transaction and charges nothing.

    Raises:
        InsufficientCredits: the balance does not cover ``amount`` (nothing is written).
        NotFound: unknown account.

    Example:
        >>> from svc_api.core.store import Store
        >>> from svc_api.migrations import migrate
        >>> store = Store("sqlite:///:memory:"); _ = migrate(store)
        >>> spend_credits(store, "NOPE00", 1, "backtest", "x")
        Traceback (most recent call last):
        ...
        svc_api.core.errors.NotFound: unknown account NOPE00
    """
    units = _positive(amount)
    return _post(conn_or_store, svc_id, -units, "spend", action, description, idempotency_key=idempotency_key)


def refund_credits(
    conn_or_store: Connection | Store,
    svc_id: str,
    amount: Amount,
    action: str = "strategy_refund",
    description: str = "Refund",
    idempotency_key: str | None = None,
) -> dict[str, Any]:
    """Give back ``amount`` (> 0) credits after a failed paid operation (an ``adjustment`` entry).

    Example:
        >>> from svc_api.core.store import Store
        >>> from svc_api.migrations import migrate
        >>> store = Store("sqlite:///:memory:"); _ = migrate(store)
        >>> refund_credits(store, "NOPE00", 0)
        Traceback (most recent call last):
        ...
        svc_api.core.errors.Invalid: amount must be positive, got 0
    """
    units = _positive(amount)
    return _post(
        conn_or_store, svc_id, units, "adjustment", action, description, idempotency_key=idempotency_key
    )


def deposit_credits(
    conn_or_store: Connection | Store,
    svc_id: str,
    amount: Amount,
    description: str = "Deposit",
    idempotency_key: str | None = None,
) -> dict[str, Any]:
    """Add purchased credits (a ``deposit`` entry).

    Example:
        >>> from svc_api.core.store import Store
        >>> from svc_api.migrations import migrate
        >>> store = Store("sqlite:///:memory:"); _ = migrate(store)
        >>> deposit_credits(store, "NOPE00", -1)
        Traceback (most recent call last):
        ...
        svc_api.core.errors.Invalid: amount must be positive, got -1
    """
    units = _positive(amount)
    return _post(
        conn_or_store, svc_id, units, "deposit", "deposit", description, idempotency_key=idempotency_key
    )


def adjust_credits(
    conn_or_store: Connection | Store, svc_id: str, amount: Amount, *, reason: str
) -> dict[str, Any]:
    """Operator correction, signed; the reason is stored but never shown to the user.

    Example:
        >>> from svc_api.core.store import Store
        >>> from svc_api.migrations import migrate
        >>> store = Store("sqlite:///:memory:"); _ = migrate(store)
        >>> adjust_credits(store, "NOPE00", 0, reason="x")
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
    )


PLATFORM_ACCOUNT = "_FEES_"
"""The platform's own account (made on its first fee; no login): marketplace fees are credited to
it, so every credit a buyer pays is on some ledger, to the unit."""


def pay_with_fee(
    conn: Connection,
    payer: str,
    payee: str,
    units: int,
    fee_pct: float,
    action: str,
    description: str,
    idempotency_key: str,
) -> dict[str, Any]:
    """Move ``units`` (credit units, > 0) from ``payer``: ``payee`` gets them less the platform fee
    (``fee_pct`` percent, rounded down to the unit), :data:`PLATFORM_ACCOUNT` gets the fee; one ledger
    row per account moved, in the caller's transaction, each under ``idempotency_key`` (a repeat pays
    nothing again). Short of credits: :class:`InsufficientCredits`, nothing written.

    Returns ``{"charged", "payee_share", "fee", "replayed"}`` in units.

    Example:
        >>> from svc_api.core.store import Store
        >>> from svc_api.migrations import migrate
        >>> from svc_api.accounts.service import register
        >>> store = Store("sqlite:///:memory:"); _ = migrate(store)
        >>> with store.write() as conn:
        ...     a = register(conn, "a@example.com", "password1", ip="::1", ttl=60).svc_id
        ...     b = register(conn, "b@example.com", "password1", ip="::1", ttl=60).svc_id
        ...     _ = deposit_credits(conn, a, 5)
        ...     paid = pay_with_fee(conn, a, b, to_units(2), 20, "marketplace_signal", "signal", "k1")
        ...     again = pay_with_fee(conn, a, b, to_units(2), 20, "marketplace_signal", "signal", "k1")
        ...     balance(conn, a), balance(conn, b), balance(conn, PLATFORM_ACCOUNT), again["replayed"]
        (3, 1.6, 0.4, True)
    """
    if units <= 0:
        raise Invalid("a payment must be positive")
    fee = int(units * fee_pct // 100)
    paid = _post(conn, payer, -units, "spend", action, description, idempotency_key=idempotency_key)
    if paid["replayed"]:
        return {"charged": units, "payee_share": units - fee, "fee": fee, "replayed": True}
    key = f"{idempotency_key}:{payer}"[:128]  # payee and platform are paid by many payers under one key
    _post(conn, payee, units - fee, "deposit", action, description, idempotency_key=key)
    if fee:
        accounts.ensure_system_account(conn, PLATFORM_ACCOUNT, "fees@platform.invalid")
        _post(conn, PLATFORM_ACCOUNT, fee, "deposit", action, f"fee: {description}", idempotency_key=key)
    return {"charged": units, "payee_share": units - fee, "fee": fee, "replayed": False}


def balance(conn: Connection, svc_id: str) -> int | float:
    """Current balance of ``svc_id`` in credits.

    Example:
        >>> from svc_api.core.store import Store
        >>> from svc_api.migrations import migrate
        >>> store = Store("sqlite:///:memory:"); _ = migrate(store)
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
        >>> from svc_api.core.store import Store
        >>> from svc_api.migrations import migrate
        >>> store = Store("sqlite:///:memory:"); _ = migrate(store)
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
        >>> from svc_api.migrations import migrate
        >>> store = Store("sqlite:///:memory:"); _ = migrate(store)
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


@contextmanager
def _connection(conn_or_store: Connection | Store) -> Iterator[Connection]:
    if isinstance(conn_or_store, Store):
        with conn_or_store.write() as conn:
            yield conn
    else:
        yield conn_or_store


def _post(
    conn_or_store: Connection | Store,
    svc_id: str,
    units: int,
    type_: str,
    action: str,
    description: str,
    *,
    idempotency_key: str | None = None,
    reason: str | None = None,
) -> dict[str, Any]:
    if action not in ACTIONS:
        raise Invalid(f"action must be one of {', '.join(ACTIONS)}, got {action!r}")
    with _connection(conn_or_store) as conn:
        if idempotency_key is not None:
            done = _by_key(conn, svc_id, idempotency_key)
            if done is not None:
                return done
        try:
            # A savepoint, so that losing an idempotency race undoes only this entry, not the caller's work.
            with conn.begin_nested():
                return _apply(conn, svc_id, units, type_, action, description, idempotency_key, reason)
        except sa.exc.IntegrityError:
            done = _by_key(conn, svc_id, idempotency_key) if idempotency_key is not None else None
            if done is None:
                raise
            return done


def _apply(
    conn: Connection,
    svc_id: str,
    units: int,
    type_: str,
    action: str,
    description: str,
    idempotency_key: str | None,
    reason: str | None,
) -> dict[str, Any]:
    row = queries.move_balance(conn, svc_id, units)
    if row is None:
        have = queries.balance_units(conn, svc_id)
        if have is None:
            raise NotFound(f"unknown account {svc_id}")
        raise InsufficientCredits(f"insufficient credits: need {from_units(-units)}, have {from_units(have)}")
    seq, after = int(row.ledger_seq), int(row.credits)
    entry = {
        "transaction_id": f"{svc_id}-{seq:08d}",
        "svc_id": svc_id,
        "seq": seq,
        "type": type_,
        "amount": units,
        "balance_after": after,
        "action": action,
        "description": description[:500],
        "reason": reason,
        "idempotency_key": idempotency_key,
        "created_at": int(time.time()),
    }
    queries.insert_entry(conn, entry)
    return _result(entry)


def _by_key(conn: Connection, svc_id: str, key: str) -> dict[str, Any] | None:
    row = queries.entry_by_key(conn, svc_id, key)
    return None if row is None else _result(row._asdict(), replayed=True)


def _result(entry: dict[str, Any], *, replayed: bool = False) -> dict[str, Any]:
    return {
        "transaction_id": entry["transaction_id"],
        "type": entry["type"],
        "amount": from_units(entry["amount"]),
        "action": entry["action"],
        "description": entry["description"],
        "timestamp": int(entry["created_at"]),
        "balance": from_units(entry["balance_after"]),
        "replayed": replayed,
    }
