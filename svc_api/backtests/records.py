"""The job rows of an account: find one, the history page, delete (objects queued), and
what the strategies domain asks about a strategy's jobs.

Example:
    >>> with store.write() as conn:
    ...     full_range_returns(conn, "AB12CD", "mystrat"), delete_for_strategy(conn, "AB12CD", "s", now=1)
    (None, 0)
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy.engine import Connection, Row

from svc_api.backtests import queries
from svc_api.backtests.artifacts import job_keys
from svc_api.backtests.fields import job_id_of
from svc_api.core.cursors import keyset_page
from svc_api.core.errors import Conflict, Invalid, NotFound
from svc_api.core.objectqueue import queue_deletes


def get_job(conn: Connection, svc_id: str, job_id: Any) -> Row[Any]:
    """The caller's job row; 404 for an unknown id or a job of another user.

    Example:
        >>> get_job(None, "AB12CD", "")
        Traceback (most recent call last):
        ...
        svc_api.core.errors.Invalid: job_id is required
    """
    row = queries.find_job(conn, svc_id, job_id_of(job_id))
    if row is None:
        raise NotFound(f"unknown backtest job {job_id!r}")
    return row


def find_for_delete(conn: Connection, svc_id: str, params: Mapping[str, Any]) -> Row[Any]:
    """The job ``delete_backtest`` names: ``job_id``, or the legacy ``strategy_name`` + ``backtest_key``
    (a job id or a result object key); 409 while it runs.

    Example:
        >>> find_for_delete(None, "AB12CD", {})
        Traceback (most recent call last):
        ...
        svc_api.core.errors.Invalid: give job_id, or strategy_name and backtest_key
    """
    if params.get("job_id"):
        row = get_job(conn, svc_id, params["job_id"])
    elif params.get("strategy_name") and params.get("backtest_key"):
        name, key = params["strategy_name"], params["backtest_key"]
        if not isinstance(name, str) or not isinstance(key, str):
            raise Invalid("strategy_name and backtest_key must be strings")
        found = queries.find_job_by_key(conn, svc_id, name, key)
        if found is None:
            raise NotFound(f"no backtest {key!r} of strategy {name!r}")
        row = found
    else:
        raise Invalid("give job_id, or strategy_name and backtest_key")
    if row.status == "running":
        raise Conflict(f"backtest {row.job_id} is running; delete it once it has finished")
    return row


def queue_rows(conn: Connection, rows: Sequence[Any], *, now: int) -> list[str]:
    """Delete job rows and queue their objects for deletion in the same transaction; the keys (the
    caller deletes them after the commit with :func:`svc_api.core.objectqueue.delete_queued`, so a
    rolled-back delete never leaves a row without its objects).

    Example:
        >>> queue_rows(None, [], now=1)
        []
    """
    keys: list[str] = []
    for row in rows:
        queries.delete_job(conn, row.job_id)
        keys += job_keys(row.svc_id, row.job_id, json.loads(row.coins), row.kind)
    queue_deletes(conn, keys, now=now)
    return keys


def history(
    conn: Connection,
    svc_id: str,
    *,
    limit: int,
    after: tuple[int, str] | None = None,
    strategy_name: str | None = None,
    symbol: str | None = None,
    timeframe: str | None = None,
) -> tuple[list[Any], bool]:
    """The caller's jobs newest first, keyset-paged after ``(created_at, job_id)``, filtered first.

    Example:
        >>> with store.read() as conn:
        ...     history(conn, "AB12CD", limit=5)
        ([], False)
    """
    return keyset_page(
        lambda n: queries.history_page(
            conn,
            svc_id,
            limit=n,
            after=after,
            strategy_name=strategy_name,
            symbol=symbol,
            timeframe=timeframe,
        ),
        limit,
    )


def full_range_returns(
    conn: Connection, svc_id: str, strategy_name: str, timeframe: str | None = None
) -> dict[str, float] | None:
    """Data symbol -> ``total_return_pct`` of the latest completed ``full_range`` job of the strategy
    (of ``timeframe`` when given); None when there is none. Coins that did not run are absent. See
    the module example.
    """
    found = queries.latest_full_range_returns(conn, svc_id, strategy_name, timeframe)
    if found is None:
        return None
    return {coin: float(v) for coin, v in json.loads(found).items() if v is not None}


def full_range_returns_of(
    conn: Connection, svc_ids: Sequence[str]
) -> dict[tuple[str, str, str], dict[str, float]]:
    """:func:`full_range_returns` of every strategy and timeframe of many accounts at once, keyed by
    ``(svc_id, strategy_name, timeframe)``; a strategy with no completed ``full_range`` is absent.

    Example:
        >>> with store.read() as conn:
        ...     full_range_returns_of(conn, ["AB12CD"])
        {}
    """
    return {
        (r.svc_id, r.strategy_name, r.timeframe): {
            coin: float(v) for coin, v in json.loads(r.returns_by_coin).items() if v is not None
        }
        for r in queries.latest_full_range_returns_of(conn, sorted(set(svc_ids)))
    }


def delete_for_strategy(conn: Connection, svc_id: str, strategy_name: str, *, now: int) -> int:
    """Delete every job of a strategy in the caller's transaction, queueing their result objects
    for the retention worker (the objects go after the strategy's deletion commits, never before);
    returns how many jobs. Running jobs are deleted too: their runner then discards the result it
    computes. See the module example.
    """
    rows = queries.jobs_of_strategy(conn, svc_id, strategy_name)
    queue_rows(conn, rows, now=now)
    return len(rows)
