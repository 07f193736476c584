"""SQL of the paper exchange's books: keys, balances, order lists, transfers.

Example:
    >>> with store.read() as conn:
    ...     key(conn, "k"), balances(conn, "A1"), order_list(conn, "A1", "c1")
    (None, [], None)
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Row

from svc_api.core.upsert import inserted
from svc_api.exchange.tables import paper_balances, paper_keys, paper_orders, paper_transfers

_b = paper_balances.c
_o = paper_orders.c


def key(conn: Connection, api_key: str) -> Row[Any] | None:
    """A paper key."""
    return conn.execute(sa.select(paper_keys).where(paper_keys.c.api_key == api_key)).first()


def insert_key(conn: Connection, **values: Any) -> None:
    """A new paper key."""
    conn.execute(paper_keys.insert().values(**values))


def balances(conn: Connection, account_id: str) -> list[Row[Any]]:
    """Every balance row of an account."""
    query = sa.select(paper_balances).where(_b.account_id == account_id).order_by(_b.wallet, _b.asset)
    return list(conn.execute(query))


def balance(
    conn: Connection, account_id: str, wallet: str, asset: str, *, lock: bool = False
) -> Row[Any] | None:
    """One balance row (locked for the transaction with ``lock``, on PostgreSQL)."""
    query = sa.select(paper_balances).where(
        _b.account_id == account_id, _b.wallet == wallet, _b.asset == asset
    )
    return conn.execute(query.with_for_update() if lock else query).first()


def move(
    conn: Connection, account_id: str, asset: str, *, free: Decimal, locked: Decimal = Decimal(0)
) -> None:
    """Add ``free`` and ``locked`` (either may be negative) to a spot balance, creating it."""
    where = (_b.account_id == account_id, _b.wallet == "spot", _b.asset == asset)
    done = conn.execute(
        paper_balances.update().where(*where).values(free=_b.free + free, locked=_b.locked + locked)
    )
    if done.rowcount == 0:
        conn.execute(
            paper_balances.insert().values(
                account_id=account_id, wallet="spot", asset=asset, free=free, locked=locked
            )
        )


def set_balance(conn: Connection, account_id: str, wallet: str, asset: str, free: Decimal) -> None:
    """Set a free balance (operators seeding an account)."""
    where = (_b.account_id == account_id, _b.wallet == wallet, _b.asset == asset)
    done = conn.execute(paper_balances.update().where(*where).values(free=free))
    if done.rowcount == 0:
        conn.execute(
            paper_balances.insert().values(account_id=account_id, wallet=wallet, asset=asset, free=free)
        )


def insert_order_list(conn: Connection, **values: Any) -> bool:
    """A new order list; False when the account has one of that client ID."""
    return inserted(conn, paper_orders, values, ["account_id", "client_order_id"])


def order_list(conn: Connection, account_id: str, client_order_id: str) -> Row[Any] | None:
    """The order list of a client ID."""
    query = sa.select(paper_orders).where(_o.account_id == account_id, _o.client_order_id == client_order_id)
    return conn.execute(query).first()


def open_order_lists(conn: Connection, limit: int) -> list[Row[Any]]:
    """Order lists still executing."""
    return list(
        conn.execute(
            sa.select(paper_orders).where(_o.status == "EXECUTING").order_by(_o.order_list_id).limit(limit)
        )
    )


def settle(conn: Connection, order_list_id: int, *, leg: str | None, checked_ms: int) -> bool:
    """Mark an executing list done with its filled ``leg`` (or only move ``checked_ms`` when None)."""
    values: dict[str, Any] = {"checked_ms": checked_ms}
    if leg is not None:
        values.update(status="ALL_DONE", filled_leg=leg)
    update = paper_orders.update().where(_o.order_list_id == order_list_id, _o.status == "EXECUTING")
    return conn.execute(update.values(**values)).rowcount == 1


def insert_transfer(conn: Connection, **values: Any) -> bool:
    """A deposit; False when its id exists."""
    return inserted(conn, paper_transfers, values)


def transfers_since(conn: Connection, account_id: str, since: int) -> list[Row[Any]]:
    """Deposits into an account since ``since``, oldest first."""
    t = paper_transfers.c
    query = (
        sa.select(paper_transfers)
        .where(t.account_id == account_id, t.time >= since)
        .order_by(t.time, t.tx_id)
    )
    return list(conn.execute(query))
