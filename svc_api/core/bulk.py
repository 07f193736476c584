"""Statements over many keys or rows at once: an ``IN`` list is cut into chunks that every backend
takes (SQLite's bound-parameter limit, PostgreSQL's plan cache for lists of similar length), and
thousands of rows go to the driver's ``executemany`` in one call (:func:`insert_rows`).

Example:
    >>> [list(c) for c in chunks(["a", "b", "c"], 2)]
    [['a', 'b'], ['c']]
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, TypeVar

import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import ARRAY
from sqlalchemy.engine import Connection

T = TypeVar("T")

IN_CHUNK = 500
"""Keys bound in one ``IN (...)`` list."""


def chunks(items: Sequence[T], size: int = IN_CHUNK) -> Iterator[Sequence[T]]:
    """``items`` in consecutive slices of at most ``size``; see the module example."""
    for start in range(0, len(items), size):
        yield items[start : start + size]


def key_filters(
    conn: Connection, column: sa.ColumnElement[Any], keys: Sequence[T]
) -> Iterator[sa.ColumnElement[bool]]:
    """Conditions that together select the rows whose ``column`` is one of ``keys``: on PostgreSQL
    one ``= ANY(ARRAY[...])`` with the keys written into the statement, elsewhere an ``IN`` list
    per chunk. Run the statement once per condition.

    Why literal keys on PostgreSQL: a list of constants is matched through a hash table, rows +
    keys. Keys sent as parameters are matched by a linear search once the driver prepares the
    statement and the server keeps its generic plan, rows x keys: 3 s for one signal's 10,000
    subscribers, 24 s for a 100,000-pair close. The keys are escaped by the dialect.

    Example:
        >>> c = sa.column("k")
        >>> engine = sa.create_engine("sqlite://")
        >>> with engine.connect() as conn:
        ...     [str(f) for f in key_filters(conn, c, [1, 2])]
        ['k IN (__[POSTCOMPILE_k_1])']
    """
    if not keys:
        return
    if conn.dialect.name == "postgresql":
        yield column == sa.any_(
            sa.bindparam("keys", list(keys), type_=ARRAY(column.type), literal_execute=True)
        )
        return
    for chunk in chunks(keys):
        yield column.in_(chunk)


def insert_rows(
    conn: Connection, table: sa.Table, rows: Sequence[Mapping[str, Any]], *, skip_existing: bool = False
) -> int:
    """Insert ``rows`` (dicts of column values; a column left out takes its server default) with
    the driver's ``executemany``, one call per set of columns; how many were inserted.
    ``skip_existing`` skips rows whose key or unique columns exist (``ON CONFLICT DO NOTHING``).

    For the fan-outs that write tens of thousands of rows in one transaction (a signal to every
    subscriber): SQLAlchemy's own ``executemany`` processes each row's parameters in Python, which
    cost more than the database's work. Only for plain columns (text, numbers, booleans): no
    Python-side defaults or type conversions are applied.

    Example:
        >>> t = sa.Table("t", sa.MetaData(), sa.Column("k", sa.Integer, primary_key=True))
        >>> engine = sa.create_engine("sqlite://")
        >>> with engine.begin() as conn:
        ...     t.create(conn)
        ...     insert_rows(conn, t, [{"k": 1}, {"k": 2}])
        ...     insert_rows(conn, t, [{"k": 2}, {"k": 3}], skip_existing=True)
        ...     conn.execute(sa.select(sa.func.count()).select_from(t)).scalar()
        2
        1
        3
    """
    shapes: dict[tuple[str, ...], list[Mapping[str, Any]]] = defaultdict(list)
    for row in rows:
        shapes[tuple(row)].append(row)
    quote = conn.dialect.identifier_preparer.quote
    mark = "?" if conn.dialect.paramstyle == "qmark" else "%s"
    inserted = 0
    for columns, group in shapes.items():
        sql = (
            f"INSERT INTO {quote(table.name)} ({', '.join(quote(c) for c in columns)}) "
            f"VALUES ({', '.join([mark] * len(columns))})"
        ) + (" ON CONFLICT DO NOTHING" if skip_existing else "")
        done = conn.exec_driver_sql(sql, [tuple(row[c] for c in columns) for row in group])
        inserted += int(done.rowcount)
    return inserted
