"""Every SQL statement of the signals domain.

Example:
    >>> from svc_api.core.store import Store
    >>> from svc_api.migrations import migrate
    >>> store = Store("sqlite:///:memory:"); _ = migrate(store)
    >>> with store.read() as conn:
    ...     watches(conn), signal_row(conn, "nope") is None
    ([], True)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Row

from svc_api.core.upsert import insert_new
from svc_api.signals.tables import signal_deliveries, signal_watches, signal_workers, signals

_w, _s, _d = signal_watches.c, signals.c, signal_deliveries.c


# ---- watches ----------------------------------------------------------------------------------------


def watches(conn: Connection) -> list[Row[Any]]:
    """Every watch, by owner, strategy and coin."""
    return list(conn.execute(sa.select(signal_watches).order_by(_w.svc_id, _w.strategy_name, _w.coin)))


def add_watch(conn: Connection, values: Mapping[str, Any]) -> None:
    """A new watch (none of that key exists: concurrent workers add it once)."""
    conn.execute(insert_new(conn, signal_watches).values(**values))


def drop_watch(conn: Connection, svc_id: str, strategy_name: str, coin: str) -> None:
    """Stop watching a coin of a strategy."""
    conn.execute(sa.delete(signal_watches).where(*_watch_key(svc_id, strategy_name, coin)))


def advance_watch(
    conn: Connection, key: tuple[str, str, str], *, seen_ms: int, evaluated_ms: int, anchor_ms: int, now: int
) -> bool:
    """Move a watch from ``seen_ms`` to ``evaluated_ms`` unless another worker moved it first (False)."""
    stmt = (
        sa.update(signal_watches)
        .where(*_watch_key(*key), _w.evaluated_ms == seen_ms)
        .values(evaluated_ms=evaluated_ms, anchor_ms=anchor_ms, updated_at=now)
    )
    return bool(conn.execute(stmt).rowcount == 1)


def advance_watches(
    conn: Connection, keys: Sequence[tuple[str, str, str]], *, seen_ms: int, evaluated_ms: int, now: int
) -> int:
    """Move many watches (their anchors unchanged) from ``seen_ms`` to ``evaluated_ms`` in one
    statement; returns how many moved (fewer than ``keys`` when another worker moved some first)."""
    stmt = (
        sa.update(signal_watches)
        .where(sa.tuple_(_w.svc_id, _w.strategy_name, _w.coin).in_(list(keys)), _w.evaluated_ms == seen_ms)
        .values(evaluated_ms=evaluated_ms, updated_at=now)
    )
    return int(conn.execute(stmt).rowcount)


def _watch_key(svc_id: str, strategy_name: str, coin: str) -> tuple[Any, ...]:
    return (_w.svc_id == svc_id, _w.strategy_name == strategy_name, _w.coin == coin)


# ---- worker leases ---------------------------------------------------------------------------------


def renew_worker(conn: Connection, holder: str, *, alive_until: int, now: int) -> None:
    """Record (or renew) a worker process's lease."""
    t = signal_workers.c
    done = conn.execute(sa.update(signal_workers).where(t.holder == holder).values(alive_until=alive_until))
    if done.rowcount == 0:
        conn.execute(insert_new(conn, signal_workers).values(holder=holder, alive_until=alive_until,
                                                             started_at=now))


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


def insert_signal(conn: Connection, values: Mapping[str, Any]) -> None:
    """A new signal row."""
    conn.execute(signals.insert().values(**values))


def update_signal(conn: Connection, position_key: str, values: Mapping[str, Any]) -> None:
    """Change a signal (its fill, its close)."""
    conn.execute(sa.update(signals).where(_s.position_key == position_key).values(**values))


def visible(svc_id: str) -> sa.ColumnElement[bool]:
    """Signals ``svc_id`` may read: their own, and those delivered to them."""
    delivered = sa.select(_d.position_key).where(_d.svc_id == svc_id)
    return sa.or_(_s.svc_id == svc_id, _s.position_key.in_(delivered))


def active_page(
    conn: Connection, svc_id: str, names: Sequence[str] | None, *, limit: int, after: tuple[int, str] | None
) -> list[Row[Any]]:
    """Live signals (waiting or open) visible to ``svc_id``, newest first, after ``(created_at, key)``."""
    query = sa.select(signals).where(visible(svc_id), _s.status != "closed")
    if names:
        query = query.where(_s.strategy_name.in_(list(names)))
    return _page(conn, query, _s.created_at, limit, after)


def closed_page(
    conn: Connection, svc_id: str, *, limit: int, after: tuple[int, str] | None
) -> list[Row[Any]]:
    """Up to ``limit`` closed signals visible to ``svc_id``, newest first, after ``(closed_at, key)``
    (filters are the service's, applied per page)."""
    query = sa.select(signals).where(visible(svc_id), _s.status == "closed")
    return _page(conn, query, _s.closed_at, limit, after)


def _page(
    conn: Connection, query: Any, column: Any, limit: int, after: tuple[int, str] | None
) -> list[Row[Any]]:
    if after is not None:
        query = query.where(sa.tuple_(column, _s.position_key) < sa.tuple_(*after))
    return list(conn.execute(query.order_by(column.desc(), _s.position_key.desc()).limit(limit)))


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
    if rows:
        conn.execute(insert_new(conn, signal_deliveries), rows)


def delivered_to(conn: Connection, position_key: str) -> set[str]:
    """Who already received a signal."""
    return {r.svc_id for r in conn.execute(sa.select(_d.svc_id).where(_d.position_key == position_key))}


def receivers(conn: Connection, position_key: str) -> list[str]:
    """Who received a signal and was not yet told it closed."""
    query = sa.select(_d.svc_id).where(_d.position_key == position_key, _d.closed_sent.is_(False))
    return [r.svc_id for r in conn.execute(query.order_by(_d.svc_id))]


def mark_closed_sent(conn: Connection, position_key: str) -> None:
    """Every receiver of a signal has been told it closed."""
    conn.execute(sa.update(signal_deliveries).where(_d.position_key == position_key).values(closed_sent=True))


def delivered_counts(conn: Connection, svc_id: str) -> int:
    """How many signals ``svc_id`` received from others' strategies."""
    return int(conn.execute(sa.select(sa.func.count()).where(_d.svc_id == svc_id)).scalar() or 0)
