"""Every SQL statement of the signals domain.

Example:
    >>> with store.read() as conn:
    ...     watches(conn), signal_row(conn, "nope") is None
    ([], True)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Row

from svc_api.core.bulk import insert_rows, key_filters
from svc_api.core.prepared import Prepared
from svc_api.core.upsert import insert_new
from svc_api.signals.tables import signal_deliveries, signal_watches, signal_workers, signals

_w, _s, _d = signal_watches.c, signals.c, signal_deliveries.c


# ---- watches ----------------------------------------------------------------------------------------


Watch = NamedTuple("Watch", [(c.name, Any) for c in signal_watches.columns])  # type: ignore[misc]
"""A watch row as a plain named tuple: a pass reads each field of 100,000 watches several times,
and a tuple's fields are several times faster to read than a ``Row``'s."""


def watches(conn: Connection) -> list[Any]:
    """Every watch (a :data:`Watch`), by owner, strategy and coin."""
    query = sa.select(signal_watches).order_by(_w.svc_id, _w.strategy_name, _w.coin)
    return [Watch._make(r) for r in conn.execute(query)]


def add_watches(conn: Connection, rows: Sequence[Mapping[str, Any]]) -> None:
    """New watches (a key that exists is skipped: concurrent workers add each once)."""
    if rows:
        conn.execute(insert_new(conn, signal_watches), list(rows))


def drop_watches(conn: Connection, keys: Sequence[tuple[str, str, str]]) -> None:
    """Stop watching the ``(svc_id, strategy_name, coin)`` keys, in one statement."""
    if keys:
        conn.execute(sa.delete(signal_watches).where(_KEY), [_key_params(k) for k in keys])


def move_watches(
    conn: Connection, keys: Sequence[tuple[str, str, str]], *, seen_ms: int, evaluated_ms: int, now: int
) -> int:
    """Move many watches from ``seen_ms`` to ``evaluated_ms``; how many moved, fewer than ``keys``
    when another worker moved some first. Moved rows stay locked to this transaction, so
    :func:`set_anchors` may follow without a condition.

    On PostgreSQL one statement joins the keys sent as three arrays (``unnest``): a statement per
    watch, even pipelined, cost 19 us a row at 100,000 watches a close. On SQLite one keyed
    statement per watch goes to the driver's ``executemany`` in one call: a row-value ``IN`` list
    scans the whole table there, and in-process statements are cheap.
    """
    if not keys:
        return 0
    if conn.dialect.name == "postgresql":
        sql = (
            f"UPDATE {signal_watches.name} AS w SET evaluated_ms = %s, updated_at = %s "
            "FROM unnest(%s::text[], %s::text[], %s::text[]) AS k(svc_id, strategy_name, coin) "
            "WHERE w.svc_id = k.svc_id AND w.strategy_name = k.strategy_name AND w.coin = k.coin "
            "AND w.evaluated_ms = %s"
        )
        svc, name, coin = (list(column) for column in zip(*keys, strict=True))
        return int(conn.exec_driver_sql(sql, (evaluated_ms, now, svc, name, coin, seen_ms)).rowcount)
    sql = (
        f"UPDATE {signal_watches.name} SET evaluated_ms = ?, updated_at = ? "
        "WHERE svc_id = ? AND strategy_name = ? AND coin = ? AND evaluated_ms = ?"
    )
    rows = [(evaluated_ms, now, k[0], k[1], k[2], seen_ms) for k in keys]
    return int(conn.exec_driver_sql(sql, rows).rowcount)  # type: ignore[arg-type]


def set_anchors(conn: Connection, anchors: Mapping[tuple[str, str, str], int]) -> None:
    """Set the anchor (the candle of the newest order) of watches this transaction moved."""
    if anchors:
        stmt = sa.update(signal_watches).where(_KEY).values(anchor_ms=sa.bindparam("k_anchor"))
        conn.execute(stmt, [_key_params(k) | {"k_anchor": a} for k, a in anchors.items()])


_KEY = sa.and_(
    _w.svc_id == sa.bindparam("k_svc"),
    _w.strategy_name == sa.bindparam("k_name"),
    _w.coin == sa.bindparam("k_coin"),
)


def _key_params(key: tuple[str, str, str]) -> dict[str, str]:
    return {"k_svc": key[0], "k_name": key[1], "k_coin": key[2]}


def _watch_key(svc_id: str, strategy_name: str, coin: str) -> tuple[Any, ...]:
    return (_w.svc_id == svc_id, _w.strategy_name == strategy_name, _w.coin == coin)


# ---- worker leases ---------------------------------------------------------------------------------


def renew_worker(conn: Connection, holder: str, *, alive_until: int, now: int) -> None:
    """Record (or renew) a worker process's lease."""
    t = signal_workers.c
    done = conn.execute(sa.update(signal_workers).where(t.holder == holder).values(alive_until=alive_until))
    if done.rowcount == 0:
        conn.execute(
            insert_new(conn, signal_workers).values(holder=holder, alive_until=alive_until, started_at=now)
        )


def live_workers(conn: Connection, *, now: int) -> list[str]:
    """The workers whose lease runs, by holder; the expired ones are deleted."""
    t = signal_workers.c
    conn.execute(sa.delete(signal_workers).where(t.alive_until < now))
    return [r.holder for r in conn.execute(sa.select(t.holder).order_by(t.holder))]


def drop_worker(conn: Connection, holder: str) -> None:
    """A worker that stops gives its coins back at once."""
    conn.execute(sa.delete(signal_workers).where(signal_workers.c.holder == holder))


# ---- signals ----------------------------------------------------------------------------------------


def signal_row(conn: Connection, position_key: str) -> Row[Any] | None:
    """One signal by its key."""
    return conn.execute(sa.select(signals).where(_s.position_key == position_key)).first()


def signal_rows(conn: Connection, position_keys: Sequence[str]) -> dict[str, Row[Any]]:
    """The signals of many keys (absent keys are absent)."""
    out: dict[str, Row[Any]] = {}
    for keyed in key_filters(conn, _s.position_key, position_keys):
        out.update((r.position_key, r) for r in conn.execute(sa.select(signals).where(keyed)))
    return out


class Raced(Exception):
    """Another worker wrote first a row this transaction read or meant to write: the transaction
    rolls back and the pass is redone from the store."""


def insert_signals(conn: Connection, rows: Sequence[Mapping[str, Any]]) -> None:
    """New signal rows, in one statement; :class:`Raced` when another worker inserted one of them
    first (on PostgreSQL the insert waits for that worker's commit)."""
    if insert_rows(conn, signals, rows, skip_existing=True) != len(rows):
        raise Raced


def update_signals(
    conn: Connection, changes: Mapping[str, Mapping[str, Any]], was: Mapping[str, tuple[str, int | None]]
) -> None:
    """Change many signals (their fill, their close) by key, each from the ``(status, fill_ms)`` it
    was read with; every change sets the same columns. :class:`Raced` when another worker changed
    one first."""
    if changes:
        columns = next(iter(changes.values())).keys()
        stmt = (
            sa.update(signals)
            .where(
                _s.position_key == sa.bindparam("k_key"),
                _s.status == sa.bindparam("k_status"),
                _s.fill_ms.is_not_distinct_from(sa.bindparam("k_fill", type_=sa.BigInteger)),
            )
            .values({c: sa.bindparam(f"v_{c}") for c in columns})
        )
        params = [
            {"k_key": k, "k_status": was[k][0], "k_fill": was[k][1]} | {f"v_{c}": v[c] for c in columns}
            for k, v in changes.items()
        ]
        if conn.execute(stmt, params).rowcount != len(params):
            raise Raced


def visible(svc_id: str | sa.BindParameter[str]) -> sa.ColumnElement[bool]:
    """Signals ``svc_id`` may read: their own, and those delivered to them (``svc_id`` may be a
    bound parameter, for a statement compiled once)."""
    delivered = sa.select(_d.position_key).where(_d.svc_id == svc_id)
    return sa.or_(_s.svc_id == svc_id, _s.position_key.in_(delivered))


def active_page(
    conn: Connection, svc_id: str, names: Sequence[str] | None, *, limit: int, after: tuple[int, str] | None
) -> list[Any]:
    """Live signals (waiting or open) visible to ``svc_id``, newest first, after ``(created_at, key)``."""
    if not names:  # the usual request: one statement compiled once (an IN list is built each time)
        return _prepared_page(_ACTIVE, conn, svc_id, limit, after)
    query = sa.select(signals).where(visible(svc_id), _s.status != "closed")
    query = query.where(_s.strategy_name.in_(list(names)))
    return _page(conn, query, _s.created_at, limit, after)


def closed_page(conn: Connection, svc_id: str, *, limit: int, after: tuple[int, str] | None) -> list[Any]:
    """Up to ``limit`` closed signals visible to ``svc_id``, newest first, after ``(closed_at, key)``
    (filters are the service's, applied per page)."""
    return _prepared_page(_CLOSED, conn, svc_id, limit, after)


def _page(
    conn: Connection, query: Any, column: Any, limit: int, after: tuple[int, str] | None
) -> list[Row[Any]]:
    if after is not None:
        query = query.where(sa.tuple_(column, _s.position_key) < sa.tuple_(*after))
    return list(conn.execute(query.order_by(column.desc(), _s.position_key.desc()).limit(limit)))


def _keyset(query: Any, column: Any, after: bool) -> sa.Select[Any]:
    """``query`` newest first by ``(column, position_key)``, from bound ``t``/``k`` when ``after``,
    ``limit`` rows (a bound parameter)."""
    if after:
        query = query.where(
            sa.tuple_(column, _s.position_key) < sa.tuple_(sa.bindparam("t"), sa.bindparam("k"))
        )
    return query.order_by(column.desc(), _s.position_key.desc()).limit(sa.bindparam("limit"))


_BOUND_SVC_ID = sa.bindparam("svc_id", type_=sa.String())
_LIVE = sa.select(signals).where(visible(_BOUND_SVC_ID), _s.status != "closed")
_DONE = sa.select(signals).where(visible(_BOUND_SVC_ID), _s.status == "closed")
# The first page and the pages after a position of each list: the reads of active_signals and
# signal_history, run thousands of times a second, skip SQLAlchemy's per-call statement building.
_ACTIVE = {after: Prepared(_keyset(_LIVE, _s.created_at, after)) for after in (False, True)}
_CLOSED = {after: Prepared(_keyset(_DONE, _s.closed_at, after)) for after in (False, True)}


def _prepared_page(
    statements: Mapping[bool, Prepared],
    conn: Connection,
    svc_id: str,
    limit: int,
    after: tuple[int, str] | None,
) -> list[Any]:
    params: dict[str, Any] = {"svc_id": svc_id, "limit": limit}
    if after is not None:
        params.update(t=after[0], k=after[1])
    return statements[after is not None].all(conn, params)


def live_by_key(conn: Connection, svc_id: str, position_key: str) -> Row[Any] | None:
    """A waiting or open signal visible to ``svc_id``."""
    query = sa.select(signals).where(visible(svc_id), _s.position_key == position_key, _s.status != "closed")
    return conn.execute(query).first()


# ---- deliveries -------------------------------------------------------------------------------------


def add_delivery(conn: Connection, values: Mapping[str, Any]) -> bool:
    """Record that a signal reached a user; False when it had already."""
    stmt = insert_new(conn, signal_deliveries).values(**values).returning(_d.svc_id)
    return bool(conn.execute(stmt).all())


def add_deliveries(conn: Connection, rows: list[dict[str, Any]]) -> None:
    """Record that a signal reached many users (each at most once)."""
    insert_rows(conn, signal_deliveries, rows, skip_existing=True)


def delivered_to(conn: Connection, position_key: str) -> set[str]:
    """Who already received a signal."""
    return {r.svc_id for r in conn.execute(sa.select(_d.svc_id).where(_d.position_key == position_key))}


def receivers_of(conn: Connection, position_keys: Sequence[str]) -> dict[str, list[str]]:
    """Per signal, who received it and was not yet told it closed (signals nobody received are absent)."""
    out: dict[str, list[str]] = {}
    for keyed in key_filters(conn, _d.position_key, position_keys):
        query = sa.select(_d.position_key, _d.svc_id).where(keyed, _d.closed_sent.is_(False))
        for r in conn.execute(query.order_by(_d.position_key, _d.svc_id)):
            out.setdefault(r.position_key, []).append(r.svc_id)
    return out


def mark_closed_sent(conn: Connection, position_keys: Sequence[str]) -> None:
    """Every receiver of these signals has been told they closed."""
    for keyed in key_filters(conn, _d.position_key, position_keys):
        conn.execute(sa.update(signal_deliveries).where(keyed).values(closed_sent=True))


def delivered_counts(conn: Connection, svc_id: str) -> int:
    """How many signals ``svc_id`` received from others' strategies."""
    return int(conn.execute(sa.select(sa.func.count()).where(_d.svc_id == svc_id)).scalar() or 0)
