"""Every SQL statement of the market domain (the favorite coins), one small function each.

Example:
    >>> from svc_api.core.store import Store
    >>> from svc_api.migrations import migrate
    >>> store = Store("sqlite:///:memory:"); _ = migrate(store)
    >>> with store.read() as conn:
    ...     favorite_symbols(conn, "AB12CD")
    []
"""

from __future__ import annotations

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from svc_api.accounts.service import ACCOUNTS as accounts
from svc_api.market.tables import favorite_coins

_f = favorite_coins.c


def lock_account(conn: Connection, svc_id: str) -> None:
    """Lock the account row until the transaction ends (PostgreSQL; SQLite's write lock covers it)."""
    conn.execute(sa.select(accounts.c.svc_id).where(accounts.c.svc_id == svc_id).with_for_update())


def favorite_symbols(conn: Connection, svc_id: str) -> list[str]:
    """The favorite symbols of ``svc_id``, oldest first."""
    query = sa.select(_f.symbol).where(_f.svc_id == svc_id).order_by(_f.created_at, _f.symbol)
    return list(conn.execute(query).scalars())


def insert_favorite(conn: Connection, svc_id: str, symbol: str, *, now: int) -> None:
    """Add one favorite."""
    conn.execute(favorite_coins.insert().values(svc_id=svc_id, symbol=symbol, created_at=now))


def delete_favorite(conn: Connection, svc_id: str, symbol: str) -> None:
    """Remove one favorite."""
    conn.execute(favorite_coins.delete().where((_f.svc_id == svc_id) & (_f.symbol == symbol)))
