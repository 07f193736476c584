"""Every SQL statement of the strategies domain (SQLAlchemy Core), one small function each.

The functions take an open connection and join the caller's transaction; they hold no rules (the
callers decide what a missing row or a count means). A strategy's *head* is its ``strategies`` row,
its versions are ``strategy_versions`` rows; the current version is the head's ``current_version``.

Example:
    >>> with store.read() as conn:
    ...     find_strategy(conn, "NOPE00", "rsidip") is None, count_generating(conn, "NOPE00")
    (True, 0)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Row

from svc_api.core.prepared import Prepared
from svc_api.strategies.tables import strategies, strategy_versions

_v = strategy_versions.c
_s = strategies.c

# The version a head points at: the join of the status-bearing row to its strategy.
_CURRENT = sa.and_(_v.svc_id == _s.svc_id, _v.name == _s.name, _v.version == _s.current_version)

# Built and compiled once: account_info (one of the most frequent reads) runs it on every call, and
# building the select and going through SQLAlchemy's execution path cost more than running it.
_ACCOUNT_SECTION = Prepared(
    sa.select(_s.name, _s.leverage, _v.status, _v.candle_count, _v.market_type)
    .join(strategy_versions, _CURRENT)
    .where(_s.svc_id == sa.bindparam("svc_id"))
    .order_by(_s.name)
)


# ----------------------------------------------------------------------------------------------------
# Heads and versions


def find_strategy(conn: Connection, svc_id: str, name: str) -> Row[Any] | None:
    """The head row of a strategy of ``svc_id`` (None when there is none); see the module example."""
    query = sa.select(strategies).where(_s.svc_id == svc_id, _s.name == name)
    return conn.execute(query).first()


def find_version(conn: Connection, svc_id: str, name: str, version: int) -> Row[Any] | None:
    """One version row of a strategy (None when there is none).

    Example:
        >>> with store.read() as conn:
        ...     find_version(conn, "NOPE00", "rsidip", 1) is None
        True
    """
    query = sa.select(strategy_versions).where(_v.svc_id == svc_id, _v.name == name, _v.version == version)
    return conn.execute(query).first()


def last_version(conn: Connection, svc_id: str, name: str) -> int:
    """The highest version number of a strategy (0 when it has none).

    Example:
        >>> with store.read() as conn:
        ...     last_version(conn, "NOPE00", "rsidip")
        0
    """
    query = sa.select(sa.func.max(_v.version)).where(_v.svc_id == svc_id, _v.name == name)
    return int(conn.execute(query).scalar() or 0)


def version_page(
    conn: Connection, svc_id: str, name: str, *, limit: int, before: int | None
) -> Sequence[Row[Any]]:
    """Up to ``limit`` versions of a strategy below ``before`` (all when None), newest first.

    Example:
        >>> with store.read() as conn:
        ...     list(version_page(conn, "NOPE00", "rsidip", limit=3, before=None))
        []
    """
    query = sa.select(strategy_versions).where(_v.svc_id == svc_id, _v.name == name)
    if before is not None:
        query = query.where(_v.version < before)
    return conn.execute(query.order_by(_v.version.desc()).limit(limit)).all()


def insert_strategy(conn: Connection, svc_id: str, name: str, *, now: int) -> None:
    """A new head at version 1 (private; the version row is written by :func:`insert_version`).

    Example:
        >>> from svc_api.accounts.identity import register
        >>> with store.write() as conn:
        ...     sid = register(conn, "a@example.com", "password1", ip="::1", ttl=60, now=0).svc_id
        ...     insert_strategy(conn, sid, "rsidip", now=1)
        ...     find_strategy(conn, sid, "rsidip").current_version
        1
    """
    conn.execute(
        strategies.insert().values(
            svc_id=svc_id, name=name, current_version=1, created_at=now, updated_at=now
        )
    )


def insert_version(conn: Connection, values: Mapping[str, Any]) -> None:
    """A new version row with the given column values.

    Example:
        >>> from svc_api.accounts.identity import register
        >>> with store.write() as conn:
        ...     sid = register(conn, "a@example.com", "password1", ip="::1", ttl=60, now=0).svc_id
        ...     insert_strategy(conn, sid, "rsidip", now=1)
        ...     insert_version(conn, {"svc_id": sid, "name": "rsidip", "version": 1, "generation_id": "g1",
        ...         "status": "generating", "market_type": "spot", "position_side": "long",
        ...         "signal_mode": "signal_only", "timeframe": "1h", "entry_condition": "close > open",
        ...         "created_at": 1, "updated_at": 1})
        ...     last_version(conn, sid, "rsidip"), count_generating(conn, sid)
        (1, 1)
    """
    conn.execute(strategy_versions.insert().values(**values))


def update_strategy(conn: Connection, svc_id: str, name: str, **values: Any) -> None:
    """Set columns of a strategy's head.

    Example:
        >>> from svc_api.accounts.identity import register
        >>> with store.write() as conn:
        ...     sid = register(conn, "a@example.com", "password1", ip="::1", ttl=60, now=0).svc_id
        ...     insert_strategy(conn, sid, "rsidip", now=1)
        ...     update_strategy(conn, sid, "rsidip", leverage=3)
        ...     find_strategy(conn, sid, "rsidip").leverage
        3
    """
    conn.execute(strategies.update().where(_s.svc_id == svc_id, _s.name == name).values(**values))


def delete_strategy(conn: Connection, svc_id: str, name: str) -> int:
    """Delete a strategy's versions and head; returns how many versions were removed.

    Example:
        >>> with store.write() as conn:
        ...     delete_strategy(conn, "NOPE00", "rsidip")
        0
    """
    removed = conn.execute(strategy_versions.delete().where(_v.svc_id == svc_id, _v.name == name)).rowcount
    conn.execute(strategies.delete().where(_s.svc_id == svc_id, _s.name == name))
    return int(removed)


# ----------------------------------------------------------------------------------------------------
# Counts and the account section


def count_live(conn: Connection, svc_id: str, live: Sequence[str], *, exclude: str | None) -> int:
    """Strategies of ``svc_id`` whose current version's status is in ``live`` (``exclude`` not counted).

    Example:
        >>> with store.read() as conn:
        ...     count_live(conn, "NOPE00", ("active",), exclude=None)
        0
    """
    query = (
        sa.select(sa.func.count())
        .select_from(strategies.join(strategy_versions, _CURRENT))
        .where(_s.svc_id == svc_id, _v.status.in_(live))
    )
    if exclude is not None:
        query = query.where(_s.name != exclude)
    return int(conn.execute(query).scalar_one())


def count_generating(conn: Connection, svc_id: str) -> int:
    """Versions of ``svc_id`` still generating; see the module example."""
    query = sa.select(sa.func.count()).where(_v.svc_id == svc_id, _v.status == "generating")
    return int(conn.execute(query).scalar_one())


def current_versions(conn: Connection, svc_id: str) -> list[Any]:
    """Name, leverage, status, candle count and market type of each strategy of ``svc_id`` by name.

    Example:
        >>> with store.read() as conn:
        ...     list(current_versions(conn, "NOPE00"))
        []
    """
    return _ACCOUNT_SECTION.all(conn, {"svc_id": svc_id})


# ----------------------------------------------------------------------------------------------------
# Generation claims (see svc_api.strategies.generation)


def oldest_unclaimed(conn: Connection) -> Row[Any] | None:
    """The oldest ``generating`` version nobody claimed, locked (rows locked by others are skipped).

    Example:
        >>> with store.write() as conn:
        ...     oldest_unclaimed(conn) is None
        True
    """
    query = (
        sa.select(strategy_versions)
        .where(_v.status == "generating", _v.claimed_by.is_(None))
        .order_by(_v.created_at, _v.generation_id)
        .limit(1)
        .with_for_update(skip_locked=True)
    )
    return conn.execute(query).first()


def take_claim(conn: Connection, generation_id: str, worker: str, *, now: int) -> bool:
    """Claim an unclaimed ``generating`` version for ``worker`` (one more attempt); False when taken.

    Example:
        >>> with store.write() as conn:
        ...     take_claim(conn, "g" * 32, "w1", now=0)
        False
    """
    taken = conn.execute(
        strategy_versions.update()
        .where(_v.generation_id == generation_id, _v.status == "generating", _v.claimed_by.is_(None))
        .values(claimed_by=worker, claimed_at=now, attempts=_v.attempts + 1)
    ).rowcount
    return taken == 1


def finish_claim(conn: Connection, generation_id: str, worker: str, values: Mapping[str, Any]) -> bool:
    """Write ``values`` on a version still ``generating`` and claimed by ``worker``; False otherwise.

    Example:
        >>> with store.write() as conn:
        ...     finish_claim(conn, "g" * 32, "w1", {"status": "active"})
        False
    """
    done = conn.execute(
        strategy_versions.update()
        .where(_v.generation_id == generation_id, _v.status == "generating", _v.claimed_by == worker)
        .values(**values)
    ).rowcount
    return done == 1


def stale_claims(conn: Connection, *, claimed_before: int) -> list[tuple[str, int]]:
    """``(generation_id, attempts)`` of ``generating`` versions claimed before ``claimed_before``.

    Example:
        >>> with store.read() as conn:
        ...     stale_claims(conn, claimed_before=0)
        []
    """
    query = sa.select(_v.generation_id, _v.attempts).where(
        _v.status == "generating", _v.claimed_by.is_not(None), _v.claimed_at < claimed_before
    )
    return [(str(g), int(a)) for g, a in conn.execute(query).all()]


def release_claim(conn: Connection, generation_id: str, values: Mapping[str, Any]) -> bool:
    """Write ``values`` on a claimed, still ``generating`` version; False when it no longer is.

    Example:
        >>> with store.write() as conn:
        ...     release_claim(conn, "g" * 32, {"claimed_by": None})
        False
    """
    match = (_v.generation_id == generation_id) & (_v.status == "generating") & _v.claimed_by.is_not(None)
    return conn.execute(strategy_versions.update().where(match).values(**values)).rowcount == 1


def version_of_generation(conn: Connection, generation_id: str) -> Row[Any] | None:
    """The version row of a generation (None when it was deleted).

    Example:
        >>> with store.read() as conn:
        ...     version_of_generation(conn, "g" * 32) is None
        True
    """
    return conn.execute(sa.select(strategy_versions).where(_v.generation_id == generation_id)).first()


def mark_refunded(conn: Connection, generation_id: str) -> None:
    """Record that a generation's charge was refunded.

    Example:
        >>> with store.write() as conn:
        ...     mark_refunded(conn, "g" * 32)  # no such generation: nothing to mark
    """
    conn.execute(strategy_versions.update().where(_v.generation_id == generation_id).values(refunded=True))


def live_strategies(conn: Connection, svc_id: str | None = None) -> list[Row[Any]]:
    """Every strategy whose current version is ``active`` (of ``svc_id`` when given), with what the
    signal worker needs, by owner and name.

    Example:
        >>> with store.read() as conn:
        ...     live_strategies(conn)
        []
    """
    s, v = strategies, strategy_versions
    query = (
        sa.select(
            s.c.svc_id,
            s.c.name,
            v.c.version,
            v.c.timeframe,
            v.c.signal_mode,
            v.c.market_type,
            v.c.program_json,
            s.c.visibility,
            s.c.public_coins,
            s.c.credits_per_signal,
        )
        .join(v, sa.and_(v.c.svc_id == s.c.svc_id, v.c.name == s.c.name, v.c.version == s.c.current_version))
        .where(v.c.status == "active")
        .order_by(s.c.svc_id, s.c.name)
    )
    if svc_id is not None:
        query = query.where(s.c.svc_id == svc_id)
    return list(conn.execute(query))


def credits_per_signal(conn: Connection, svc_id: str, name: str) -> int | None:
    """The price per signal (credit units) of a strategy; None when it does not exist.

    Example:
        >>> with store.read() as conn:
        ...     credits_per_signal(conn, "NOPE00", "rsidip") is None
        True
    """
    query = sa.select(_s.credits_per_signal).where(_s.svc_id == svc_id, _s.name == name)
    found = conn.execute(query).scalar()
    return None if found is None else int(found)
