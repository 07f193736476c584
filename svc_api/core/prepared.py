"""Hot-path reads: a SQLAlchemy Core statement compiled once per dialect and run straight on the
driver connection of the caller's transaction.

SQLAlchemy's execution path (statement cache look-up, parameter processing, ``Result`` building)
costs ~20x the database's own time for a one-row primary-key read on SQLite, and the reads that
authenticate every request and answer the most frequent operations run thousands of times a second.
A :class:`Prepared` statement keeps the query written in SQLAlchemy Core, compiles it once per
dialect, and executes it with the DBAPI cursor of the same connection, inside the same
transaction; result columns get the type's result processors (SQLite's 0/1 become booleans), and a
driver outage surfaces as SQLAlchemy's ``OperationalError``, so :class:`~svc_api.core.store.Store`
reports it as ``StoreUnavailable`` like any other.

Example:
    >>> import sqlalchemy as sa
    >>> from svc_api.core.store import Store
    >>> t = sa.table("t", sa.column("x", sa.Integer), sa.column("ok", sa.Boolean))
    >>> by_x = Prepared(sa.select(t.c.x, t.c.ok).where(t.c.x == sa.bindparam("x")))
    >>> store = Store("sqlite:///:memory:")
    >>> with store.write() as conn:
    ...     _ = conn.execute(sa.text("create table t (x integer, ok boolean)"))
    ...     _ = conn.execute(sa.text("insert into t values (1, 1), (2, 0)"))
    >>> with store.read() as conn:
    ...     by_x.first(conn, {"x": 1}), by_x.first(conn, {"x": 3}), by_x.all(conn, {"x": 2})
    (Row(x=1, ok=True), None, [Row(x=2, ok=False)])
"""

from __future__ import annotations

import threading
from collections import namedtuple
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Dialect


@dataclass(frozen=True)
class _Compiled:
    sql: str
    names: tuple[str, ...] | None  # positional parameter order; None for named (pyformat) styles
    defaults: dict[str, Any]  # values bound in the statement itself (literals)
    row: Callable[..., Any]
    processors: tuple[tuple[int, Callable[[Any], Any]], ...]


class Prepared:
    """A read statement compiled once per dialect; see the module docstring.

    Parameters are ``bindparam`` names (values given at each call) or literals bound in the statement;
    not for expanding ``IN`` lists: a list of keys goes into fixed slots (:func:`key_slots`,
    :meth:`all_keyed`).
    """

    def __init__(self, statement: sa.Select[Any]) -> None:
        self.statement = statement
        self._compiled: dict[str, _Compiled] = {}
        self._lock = threading.Lock()

    def first(self, conn: Connection, params: Mapping[str, Any]) -> Any:
        """The first row (a named tuple with attribute access), or None."""
        rows = self._run(conn, params, one=True)
        return rows[0] if rows else None

    def all(self, conn: Connection, params: Mapping[str, Any]) -> list[Any]:
        """Every row, as named tuples."""
        return self._run(conn, params, one=False)

    def all_keyed(
        self, conn: Connection, keys: Sequence[Any], params: Mapping[str, Any] | None = None
    ) -> list[Any]:
        """Every row of a statement whose condition is :func:`key_slots`, for ``keys`` (any count:
        one execution per ``SLOTS`` keys, the empty slots bound to NULL, which matches nothing).

        Example:
            >>> t = sa.table("t", sa.column("x", sa.Integer))
            >>> from svc_api.core.store import Store
            >>> store = Store("sqlite:///:memory:")
            >>> with store.write() as conn:
            ...     _ = conn.execute(sa.text("create table t (x integer)"))
            ...     _ = conn.execute(sa.text("insert into t values (1), (2), (3)"))
            >>> some = Prepared(sa.select(t.c.x).where(t.c.x.in_(key_slots())).order_by(t.c.x))
            >>> with store.read() as conn:
            ...     [r.x for r in some.all_keyed(conn, [3, 1, 9])], some.all_keyed(conn, [])
            ([1, 3], [])
        """
        out: list[Any] = []
        for start in range(0, len(keys), SLOTS):
            chunk = list(keys[start : start + SLOTS])
            chunk += [None] * (SLOTS - len(chunk))
            slots = {f"_k{i}": k for i, k in enumerate(chunk)}
            out += self._run(conn, {**(params or {}), **slots}, one=False)
        return out

    def _run(self, conn: Connection, params: Mapping[str, Any], *, one: bool) -> list[Any]:
        compiled = self._for(conn.dialect)
        merged = {**compiled.defaults, **params} if compiled.defaults else params
        args: Any = merged if compiled.names is None else tuple(merged[n] for n in compiled.names)
        driver: Any = conn.connection.driver_connection  # never None on a checked-out connection
        cursor = driver.cursor()
        try:
            cursor.execute(compiled.sql, args)
            raw = cursor.fetchmany(1) if one else cursor.fetchall()
        except conn.dialect.loaded_dbapi.Error as exc:
            dbapi_error = conn.dialect.loaded_dbapi.Error
            raise sa.exc.DBAPIError.instance(compiled.sql, args, exc, dbapi_error) from exc
        finally:
            cursor.close()
        if compiled.processors:
            out = []
            for values in raw:
                values = list(values)
                for i, process in compiled.processors:
                    values[i] = process(values[i])
                out.append(compiled.row(*values))
            return out
        return [compiled.row(*values) for values in raw]

    def _for(self, dialect: Dialect) -> _Compiled:
        found = self._compiled.get(dialect.name)
        if found is None:
            with self._lock:
                found = self._compiled.setdefault(dialect.name, _compile(self.statement, dialect))
        return found


SLOTS = 50
"""Keys bound per execution of a :meth:`Prepared.all_keyed` statement (a page of most lists)."""


def key_slots() -> list[sa.BindParameter[Any]]:
    """The ``SLOTS`` parameters of a keyed :class:`Prepared` statement: ``column.in_(key_slots())``."""
    return [sa.bindparam(f"_k{i}") for i in range(SLOTS)]


def _compile(statement: sa.Select[Any], dialect: Dialect) -> _Compiled:
    compiled = statement.compile(dialect=dialect)
    names = tuple(compiled.positiontup or ()) if compiled.positional else None
    columns = [c for c in statement.selected_columns]
    processors = []
    for i, column in enumerate(columns):
        process = column.type.result_processor(dialect, None)
        if process is not None:
            processors.append((i, process))
    row = namedtuple("Row", [c.key for c in columns])  # type: ignore[misc]
    return _Compiled(str(compiled), names, dict(compiled.params), row, tuple(processors))


__all__ = ["SLOTS", "Prepared", "key_slots"]
