"""The ledger's one write path: a balance change and its row together, idempotent by key.

Example:
    >>> from svc_api.accounts.service import register
    >>> with store.write() as conn:
    ...     sid = register(conn, "l@example.com", "password1", ip="::1", ttl=60, now=0).svc_id
    ...     _post(conn, sid, 30_000, "deposit", "deposit", "top-up", now=0)["balance"]
    3
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Literal, get_args

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from svc_api.core.errors import InsufficientCredits, Invalid, NotFound
from svc_api.core.money import from_units
from svc_api.core.store import Store
from svc_api.credits import queries

EntryType = Literal["adjustment", "spend", "deposit"]
"""What an entry does to the balance."""
Action = Literal[
    "deposit",
    "backtest",
    "credit_adjustment",
    "strategy_generate",
    "strategy_refund",
    "marketplace_signal",
]
"""What an entry was for; the reply model of ``credits_history`` states the same type."""
TYPES: tuple[str, ...] = get_args(EntryType)
ACTIONS: tuple[str, ...] = get_args(Action)


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
    now: int,
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
                return _apply(conn, svc_id, units, type_, action, description, idempotency_key, reason, now)
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
    now: int,
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
        "created_at": int(now),
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
