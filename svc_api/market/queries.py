"""Every SQL statement of the market domain (the favorite coins), one small function each. They join
the caller's transaction and hold no rules (the limit of favorites is the service's). The example
runs each of them.

Example:
    >>> from svc_api.accounts.service import register
    >>> with store.write() as conn:
    ...     sid = register(conn, "f@example.com", "password1", ip="::1", ttl=60, now=0).svc_id
    ...     lock_account(conn, sid)
    ...     insert_favorite(conn, sid, "ETH", now=2); insert_favorite(conn, sid, "BTC", now=1)
    ...     favorite_symbols(conn, sid)
    ...     delete_favorite(conn, sid, "BTC"); favorite_symbols(conn, sid)
    ['BTC', 'ETH']
    ['ETH']
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
