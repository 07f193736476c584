"""Every SQL statement of the backtests domain (SQLAlchemy Core), one small function each.

The functions take an open connection and join the caller's transaction; they hold no rules. The
job row is the truth about a job: written at launch, updated by the runner while it is ``running``.

Example:
    >>> with store.read() as conn:
    ...     find_job(conn, "AB12CD", "bt_1") is None, count_running(conn, "AB12CD")
    (True, 0)
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Row

from svc_api.backtests.tables import backtest_jobs
from svc_api.core.bulk import key_filters
from svc_api.core.prepared import Prepared

_b = backtest_jobs.c


def latest_full_range_job(conn: Connection, svc_id: str, strategy_name: str, timeframe: str) -> str | None:
    """The id of the latest completed ``full_range`` job of a strategy on ``timeframe`` (None: none).

    Example:
        >>> with store.read() as conn:
        ...     latest_full_range_job(conn, "AB12CD", "mystrat", "1h") is None
        True
    """
    query = sa.select(_b.job_id).where(
        _b.svc_id == svc_id,
        _b.strategy_name == strategy_name,
        _b.kind == "full_range",
        _b.status == "completed",
        _b.timeframe == timeframe,
    )
    return conn.execute(query.order_by(_b.created_at.desc(), _b.job_id.desc()).limit(1)).scalar()


def latest_full_range_returns_of(conn: Connection, svc_ids: Sequence[str]) -> list[Row[Any]]:
    """``(svc_id, strategy_name, timeframe, returns_by_coin)`` of the latest completed ``full_range``
    job of each strategy and timeframe of the accounts ``svc_ids``, a round trip per chunk of ids."""
    newest = sa.func.row_number().over(
        partition_by=(_b.svc_id, _b.strategy_name, _b.timeframe),
        order_by=(_b.created_at.desc(), _b.job_id.desc()),
    )
    out: list[Row[Any]] = []
    for among in key_filters(conn, _b.svc_id, svc_ids):
        ranked = (
            sa.select(_b.svc_id, _b.strategy_name, _b.timeframe, _b.returns_by_coin, newest.label("n"))
            .where(among, _b.kind == "full_range", _b.status == "completed")
            .subquery()
        )
        cols = (ranked.c.svc_id, ranked.c.strategy_name, ranked.c.timeframe, ranked.c.returns_by_coin)
        out += conn.execute(sa.select(*cols).where(ranked.c.n == 1))
    return out


# ----------------------------------------------------------------------------------------------------
# Launching and finding jobs


def count_running(conn: Connection, svc_id: str) -> int:
    """Jobs of ``svc_id`` still ``running``; see the module example."""
    query = sa.select(sa.func.count()).where(_b.svc_id == svc_id, _b.status == "running")
    return int(conn.execute(query).scalar_one())


def insert_job(conn: Connection, values: Mapping[str, Any]) -> None:
    """A new job row with the given column values.

    Example:
        >>> from svc_api.accounts.identity import register
        >>> with store.write() as conn:
        ...     sid = register(conn, "a@example.com", "password1", ip="::1", ttl=60, now=0).svc_id
        ...     insert_job(conn, {"job_id": "bt_1", "svc_id": sid, "kind": "run", "strategy_name": "s",
        ...         "coins": '["BTCUSDT"]', "coins_key": ",BTCUSDT,", "timeframe": "1h", "params": "{}",
        ...         "status": "running", "chunks": 1, "cost_credits": 10000, "estimated_seconds": 1.0,
        ...         "created_at": 1})
        ...     count_running(conn, sid), find_job(conn, sid, "bt_1").kind
        (1, 'run')
    """
    conn.execute(backtest_jobs.insert().values(**values))


def find_job(conn: Connection, svc_id: str, job_id: str) -> Row[Any] | None:
    """The job ``job_id`` of ``svc_id`` (None for an unknown id or another user's job); see the
    module example."""
    query = sa.select(backtest_jobs).where(_b.job_id == job_id, _b.svc_id == svc_id)
    return conn.execute(query).first()


def find_job_by_key(conn: Connection, svc_id: str, strategy_name: str, key: str) -> Row[Any] | None:
    """The job of a strategy of ``svc_id`` whose id or result object key is ``key``.

    Example:
        >>> with store.read() as conn:
        ...     find_job_by_key(conn, "AB12CD", "mystrat", "bt_1") is None
        True
    """
    query = sa.select(backtest_jobs).where(
        _b.svc_id == svc_id, _b.strategy_name == strategy_name, sa.or_(_b.job_id == key, _b.result_key == key)
    )
    return conn.execute(query).first()


def jobs_of_strategy(conn: Connection, svc_id: str, strategy_name: str) -> Sequence[Row[Any]]:
    """Every job of a strategy of ``svc_id``.

    Example:
        >>> with store.read() as conn:
        ...     list(jobs_of_strategy(conn, "AB12CD", "mystrat"))
        []
    """
    query = sa.select(backtest_jobs).where(_b.svc_id == svc_id, _b.strategy_name == strategy_name)
    return conn.execute(query).all()


def delete_job(conn: Connection, job_id: str) -> None:
    """Delete a job row.

    Example:
        >>> with store.write() as conn:
        ...     delete_job(conn, "bt_1")  # an unknown id deletes nothing
    """
    conn.execute(backtest_jobs.delete().where(_b.job_id == job_id))


# ----------------------------------------------------------------------------------------------------
# Reading history and results


def history_page(
    conn: Connection,
    svc_id: str,
    *,
    limit: int,
    after: tuple[int, str] | None,
    strategy_name: str | None,
    symbol: str | None,
    timeframe: str | None,
) -> Sequence[Any]:
    """Up to ``limit`` jobs of ``svc_id`` newest first, after ``(created_at, job_id)``, filtered.

    Example:
        >>> with store.read() as conn:
        ...     list(history_page(conn, "AB12CD", limit=5, after=(9, "bt_9"), strategy_name="s",
        ...                       symbol="BTCUSDT", timeframe="1h"))
        []
    """
    if symbol is None:
        params: dict[str, Any] = {
            "svc_id": svc_id,
            "name": strategy_name,
            "timeframe": timeframe,
            "limit": limit,
        }
        if after is not None:
            params.update(t=after[0], k=after[1])
        statement = _history(strategy_name is not None, timeframe is not None, after is not None)
        return statement.all(conn, {k: v for k, v in params.items() if v is not None})
    query = sa.select(backtest_jobs).where(_b.svc_id == svc_id)
    if strategy_name is not None:
        query = query.where(_b.strategy_name == strategy_name)
    if symbol is not None:
        query = query.where(_b.coins_key.contains(f",{symbol},", autoescape=True))
    if timeframe is not None:
        query = query.where(_b.timeframe == timeframe)
    if after is not None:
        at, job_id = after
        query = query.where(sa.or_(_b.created_at < at, sa.and_(_b.created_at == at, _b.job_id < job_id)))
    return conn.execute(query.order_by(_b.created_at.desc(), _b.job_id.desc()).limit(limit)).all()


@functools.cache
def _history(name: bool, timeframe: bool, after: bool) -> Prepared:
    # One statement per shape, compiled once: backtest_history without a coin filter (its usual form)
    # skips SQLAlchemy's per-call statement building and result set-up.
    query = sa.select(backtest_jobs).where(_b.svc_id == sa.bindparam("svc_id"))
    if name:
        query = query.where(_b.strategy_name == sa.bindparam("name"))
    if timeframe:
        query = query.where(_b.timeframe == sa.bindparam("timeframe"))
    if after:
        at, job_id = sa.bindparam("t"), sa.bindparam("k")
        query = query.where(sa.or_(_b.created_at < at, sa.and_(_b.created_at == at, _b.job_id < job_id)))
    return Prepared(query.order_by(_b.created_at.desc(), _b.job_id.desc()).limit(sa.bindparam("limit")))


def latest_full_range_returns(
    conn: Connection, svc_id: str, strategy_name: str, timeframe: str | None
) -> str | None:
    """The ``returns_by_coin`` JSON of the latest completed ``full_range`` job of a strategy (of
    ``timeframe`` when given); None when there is none.

    Example:
        >>> with store.read() as conn:
        ...     latest_full_range_returns(conn, "AB12CD", "mystrat", "1h") is None
        True
    """
    query = sa.select(_b.returns_by_coin).where(
        _b.svc_id == svc_id,
        _b.strategy_name == strategy_name,
        _b.kind == "full_range",
        _b.status == "completed",
    )
    if timeframe is not None:
        query = query.where(_b.timeframe == timeframe)
    return conn.execute(query.order_by(_b.created_at.desc(), _b.job_id.desc()).limit(1)).scalar()


# ----------------------------------------------------------------------------------------------------
# The runner's updates


def update_running(conn: Connection, job_id: str, values: Mapping[str, Any]) -> bool:
    """Write ``values`` on a job still ``running``; False when it is not (finished or deleted).

    Example:
        >>> with store.write() as conn:
        ...     update_running(conn, "bt_1", {"progress_pct": 5.0})
        False
    """
    query = backtest_jobs.update().where(_b.job_id == job_id, _b.status == "running").values(**values)
    return conn.execute(query).rowcount == 1


def running_charge(conn: Connection, job_id: str) -> Row[Any] | None:
    """``svc_id`` and ``cost_credits`` (units) of a job still ``running`` (None otherwise).

    Example:
        >>> with store.read() as conn:
        ...     running_charge(conn, "bt_1") is None
        True
    """
    query = sa.select(_b.svc_id, _b.cost_credits).where(_b.job_id == job_id, _b.status == "running")
    return conn.execute(query).first()


def stale_running(conn: Connection, *, beat_before: float) -> list[str]:
    """Ids of ``running`` jobs whose last heartbeat (or launch) is older than ``beat_before``.

    Example:
        >>> with store.read() as conn:
        ...     stale_running(conn, beat_before=0.0)
        []
    """
    beat = sa.func.coalesce(_b.heartbeat_at, _b.created_at)
    query = sa.select(_b.job_id).where(_b.status == "running", beat < beat_before)
    return list(conn.execute(query).scalars())


def running_runners(conn: Connection) -> list[tuple[str, str | None]]:
    """``(job_id, runner)`` of every ``running`` job.

    Example:
        >>> with store.read() as conn:
        ...     running_runners(conn)
        []
    """
    query = sa.select(_b.job_id, _b.runner).where(_b.status == "running")
    return [(str(job_id), runner) for job_id, runner in conn.execute(query)]


def beat(conn: Connection, job_ids: Sequence[str], *, now: float) -> None:
    """Refresh the heartbeat of those of ``job_ids`` still ``running``.

    Example:
        >>> with store.write() as conn:
        ...     beat(conn, ["bt_1"], now=1.0)
    """
    query = backtest_jobs.update().where(_b.job_id.in_(job_ids), _b.status == "running")
    conn.execute(query.values(heartbeat_at=now))


def finished_before(
    conn: Connection, before: int, *, after: tuple[int, str] | None, limit: int
) -> list[Row[Any]]:
    """Up to ``limit`` finished (not ``running``) jobs launched before ``before``, oldest first,
    after ``(created_at, job_id)``: the candidates of a retention pass.

    Example:
        >>> with store.read() as conn:
        ...     finished_before(conn, 10, after=None, limit=5)
        []
    """
    query = sa.select(backtest_jobs).where(_b.status != "running", _b.created_at < before)
    if after is not None:
        at, job_id = after
        query = query.where(sa.or_(_b.created_at > at, sa.and_(_b.created_at == at, _b.job_id > job_id)))
    return list(conn.execute(query.order_by(_b.created_at, _b.job_id).limit(limit)).all())


def delete_finished(conn: Connection, job_id: str) -> bool:
    """Delete a job row unless it is ``running``; whether a row went."""
    done = conn.execute(backtest_jobs.delete().where(_b.job_id == job_id, _b.status != "running"))
    return bool(done.rowcount)
