"""SQL of linked exchange accounts and of orders.

Example:
    >>> with store.read() as conn:
    ...     link(conn, "AB12CD"), order(conn, "AB12CD", "k" * 16), link_of_account(conn, "paper", "P1")
    (None, None, None)
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Row

from svc_api.core.upsert import inserted
from svc_api.exchange.tables import links, orders

_l = links.c
_o = orders.c


def link(conn: Connection, svc_id: str) -> Row[Any] | None:
    """The exchange link of an account."""
    return conn.execute(sa.select(links).where(_l.svc_id == svc_id)).first()


def link_of_account(conn: Connection, exchange: str, account_id: str) -> Row[Any] | None:
    """The link of an exchange account ID (for logging in by it)."""
    return conn.execute(sa.select(links).where(_l.exchange == exchange, _l.account_id == account_id)).first()


def save_link(conn: Connection, **values: Any) -> None:
    """Link (or re-link) an account's exchange account."""
    conn.execute(links.delete().where(_l.svc_id == values["svc_id"]))
    conn.execute(links.insert().values(**values))


def delete_link(conn: Connection, svc_id: str) -> bool:
    """Unlink; False when there was no link."""
    return conn.execute(links.delete().where(_l.svc_id == svc_id)).rowcount == 1


def all_links(conn: Connection) -> list[Row[Any]]:
    """Every link (for re-encrypting)."""
    return list(conn.execute(sa.select(links)))


def set_secrets(conn: Connection, svc_id: str, api_key_enc: str, api_secret_enc: str) -> None:
    """Replace the encrypted key and secret of a link."""
    conn.execute(
        links.update()
        .where(_l.svc_id == svc_id)
        .values(api_key_enc=api_key_enc, api_secret_enc=api_secret_enc)
    )


def claim_order(conn: Connection, values: dict[str, Any]) -> bool:
    """Insert an order under its idempotency key; False when the key has one."""
    return inserted(conn, orders, values, ["svc_id", "idempotency_key"])


def order(conn: Connection, svc_id: str, key: str) -> Row[Any] | None:
    """The order of an idempotency key."""
    return conn.execute(sa.select(orders).where(_o.svc_id == svc_id, _o.idempotency_key == key)).first()


def update_order(conn: Connection, svc_id: str, key: str, **values: Any) -> None:
    """Change an order."""
    conn.execute(orders.update().where(_o.svc_id == svc_id, _o.idempotency_key == key).values(**values))


def settle_order(conn: Connection, svc_id: str, key: str, *, from_state: str, **values: Any) -> bool:
    """Change an order still in ``from_state``; False when another worker moved it first."""
    update = orders.update().where(_o.svc_id == svc_id, _o.idempotency_key == key, _o.state == from_state)
    return conn.execute(update.values(**values)).rowcount == 1


def drop_order(conn: Connection, svc_id: str, key: str) -> None:
    """Forget an order that was never placed (its key may be used again)."""
    conn.execute(
        orders.delete().where(_o.svc_id == svc_id, _o.idempotency_key == key, _o.state == "processing")
    )


def orders_to_reconcile(conn: Connection, *, before: int, limit: int) -> list[Row[Any]]:
    """Orders whose outcome is unknown, or placed and still working, last looked at before ``before``."""
    open_ = sa.or_(_o.state == "processing", sa.and_(_o.state == "submitted", _o.exchange_status == "NEW"))
    query = sa.select(orders).where(open_, _o.updated_at < before).order_by(_o.updated_at).limit(limit)
    return list(conn.execute(query))


def history_after(
    conn: Connection, svc_id: str, *, status: str | None, limit: int, after: tuple[int, str] | None
) -> list[Row[Any]]:
    """Orders newest first, after ``(created_at, order_history_id)``, of one exchange status or all."""
    query = sa.select(orders).where(_o.svc_id == svc_id)
    if status is not None:
        query = query.where(_o.exchange_status == status)
    if after is not None:
        query = query.where(sa.tuple_(_o.created_at, _o.order_history_id) < sa.tuple_(*after))
    return list(conn.execute(query.order_by(_o.created_at.desc(), _o.order_history_id.desc()).limit(limit)))
