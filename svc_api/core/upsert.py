"""``INSERT ... ON CONFLICT DO NOTHING`` on either store: SQLAlchemy has it per dialect only.

Example:
    >>> import sqlalchemy as sa
    >>> from svc_api.core.store import Store
    >>> t = sa.Table("t", sa.MetaData(), sa.Column("k", sa.Integer, primary_key=True))
    >>> store = Store("sqlite:///:memory:")
    >>> with store.write() as conn:
    ...     t.create(conn)
    ...     _ = conn.execute(insert_new(conn, t, ["k"]).values(k=1))
    ...     _ = conn.execute(insert_new(conn, t, ["k"]).values(k=1))
    ...     conn.execute(sa.select(sa.func.count()).select_from(t)).scalar()
    1
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Connection


def insert_new(conn: Connection, table: sa.Table, keys: Sequence[str] | None = None) -> Any:
    """An insert into ``table`` that skips rows whose key (``keys``: the conflict target; the
    primary key when None) exists already, for the connection's dialect."""
    insert = postgresql.insert if conn.dialect.name == "postgresql" else sqlite.insert
    return insert(table).on_conflict_do_nothing(index_elements=list(keys) if keys else None)


def inserted(
    conn: Connection, table: sa.Table, values: Mapping[str, Any], keys: Sequence[str] | None = None
) -> bool:
    """Insert one row unless its key exists; whether it was inserted. (``rowcount`` cannot tell:
    psycopg reports -1 for ``ON CONFLICT DO NOTHING``; a ``RETURNING`` row can.)

    Example:
        >>> import sqlalchemy as sa
        >>> from svc_api.core.store import Store
        >>> t = sa.Table("u", sa.MetaData(), sa.Column("k", sa.Integer, primary_key=True))
        >>> with Store("sqlite:///:memory:").write() as conn:
        ...     t.create(conn)
        ...     inserted(conn, t, {"k": 1}), inserted(conn, t, {"k": 1})
        (True, False)
    """
    returned = next(iter(table.primary_key.columns))
    statement = insert_new(conn, table, keys).values(**values).returning(returned)
    return conn.execute(statement).first() is not None
