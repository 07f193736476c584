"""Every SQL statement of the credits domain, one small function each. They join the caller's
transaction and hold no rules (the service decides what a refused balance move means). The example
runs each of them.

Example:
    >>> from svc_api.accounts.service import register
    >>> with store.write() as conn:
    ...     sid = register(conn, "m@example.com", "password1", ip="::1", ttl=60, now=0).svc_id
    ...     tuple(move_balance(conn, sid, 500)), move_balance(conn, sid, -501), balance_units(conn, sid)
    ...     insert_entry(conn, {"transaction_id": f"{sid}-1", "svc_id": sid, "seq": 1, "type": "deposit",
    ...                         "amount": 500, "balance_after": 500, "action": "deposit", "description": "d",
    ...                         "idempotency_key": "k1", "created_at": 9})
    ...     entry_by_key(conn, sid, "k1").seq, entry_by_key(conn, sid, "k2")
    ...     [r.seq for r in history(conn, sid, limit=5)], history(conn, sid, limit=5, before_seq=1)
    ((1, 500), None, 500)
    (1, None)
    ([1], [])
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Row

from svc_api.accounts.service import ACCOUNTS as accounts
from svc_api.core.bulk import chunks, insert_rows, key_filters
from svc_api.credits.tables import credit_transactions

_t = credit_transactions.c


def balance_units(conn: Connection, svc_id: str) -> int | None:
    """The balance of ``svc_id`` in smallest units; None for an unknown account."""
    return conn.execute(sa.select(accounts.c.credits).where(accounts.c.svc_id == svc_id)).scalar()


def move_balance(conn: Connection, svc_id: str, units: int) -> Row[Any] | None:
    """Add ``units`` (signed) to the balance and take the next ledger number, in one conditional
    ``UPDATE``: nothing changes (None) when the account is unknown or the balance would go negative.
    Returns ``(ledger_seq, credits)`` after the change."""
    update = (
        accounts.update()
        .where(accounts.c.svc_id == svc_id, accounts.c.credits + units >= 0)
        .values(credits=accounts.c.credits + units, ledger_seq=accounts.c.ledger_seq + 1)
        .returning(accounts.c.ledger_seq, accounts.c.credits)
    )
    return conn.execute(update).first()


def insert_entry(conn: Connection, entry: dict[str, Any]) -> None:
    """Store one ledger row."""
    conn.execute(credit_transactions.insert().values(**entry))


def entry_by_key(conn: Connection, svc_id: str, idempotency_key: str) -> Row[Any] | None:
    """The ledger row ``svc_id`` wrote under ``idempotency_key``, or None."""
    query = sa.select(credit_transactions).where(_t.svc_id == svc_id, _t.idempotency_key == idempotency_key)
    return conn.execute(query).first()


# Built once (a listed page is a frequent read); the limit is a bound parameter too.
_HISTORY = (
    sa.select(credit_transactions)
    .where(_t.svc_id == sa.bindparam("svc_id"))
    .order_by(_t.seq.desc())
    .limit(sa.bindparam("n"))
)
_HISTORY_BEFORE = _HISTORY.where(_t.seq < sa.bindparam("before"))


def history(conn: Connection, svc_id: str, *, limit: int, before_seq: int | None = None) -> list[Row[Any]]:
    """Up to ``limit`` ledger rows of ``svc_id``, newest first, below sequence ``before_seq``."""
    params = {"svc_id": svc_id, "before": before_seq, "n": limit}
    return list(conn.execute(_HISTORY if before_seq is None else _HISTORY_BEFORE, params))


def take_from_many(conn: Connection, svc_ids: list[str], units: int) -> list[Row[Any]]:
    """Take ``units`` from each account that can pay them, in conditional ``UPDATE`` statements (the
    others are left alone); ``(svc_id, ledger_seq, credits)`` after the change of those who paid."""
    paid: list[Row[Any]] = []
    for chunk in chunks(svc_ids):
        update = (
            accounts.update()
            .where(accounts.c.svc_id.in_(chunk), accounts.c.credits >= units)
            .values(credits=accounts.c.credits - units, ledger_seq=accounts.c.ledger_seq + 1)
            .returning(accounts.c.svc_id, accounts.c.ledger_seq, accounts.c.credits)
        )
        paid += conn.execute(update).all()
    return paid


def insert_entries(conn: Connection, entries: list[dict[str, Any]]) -> None:
    """Store many ledger rows at once."""
    insert_rows(conn, credit_transactions, entries)


def keyed(conn: Connection, svc_ids: list[str], idempotency_key: str) -> set[str]:
    """Which of ``svc_ids`` already wrote a ledger row under ``idempotency_key``."""
    found: set[str] = set()
    for among in key_filters(conn, _t.svc_id, svc_ids):
        query = sa.select(_t.svc_id).where(among, _t.idempotency_key == idempotency_key)
        found |= {r.svc_id for r in conn.execute(query)}
    return found
