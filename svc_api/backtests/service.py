"""Backtests: estimate, launch and follow jobs, read their results, list and delete them.

The one door of the backtests domain. The routes call the use cases below with the app's services
(store and job runner); they open the transactions. Other code and tests call the connection-level
functions (:func:`create_job`, :func:`get_job`, :func:`full_range_returns`, ...) in their own
transaction. The engine computes everything (sizes through ``svc_engine.sim.estimate``, results
through the drivers run by :mod:`svc_api.backtests.jobs`).

Where each part lives: request fields in :mod:`~svc_api.backtests.fields`, instruments in
:mod:`~svc_api.backtests.instruments`, sizing, charging and queueing in
:mod:`~svc_api.backtests.launch`, the read-only previews in :mod:`~svc_api.backtests.preview`, job
rows in :mod:`~svc_api.backtests.records`, replies from stored results in
:mod:`~svc_api.backtests.results`, the runner in :mod:`~svc_api.backtests.jobs`, SQL in
:mod:`~svc_api.backtests.queries`.

Example:
    >>> settings_from({"commission_pct": 0.1, "coin": "BTC"})
    {'commission_pct': 0.1}
    >>> settings_from({"max_wait_days": 0})
    Traceback (most recent call last):
    ...
    svc_api.core.errors.Invalid: max_wait_days must be a finite number > 0 (got 0.0)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from svc_api.backtests import jobs, preview, queries
from svc_api.backtests.errors import RETRY_AFTER, LaunchRejected
from svc_api.backtests.fields import (
    KINDS,
    METADATA,
    PORTFOLIO_SETTINGS,
    SETTINGS,
    divide_of,
    initial_balance_of,
    metadata_of,
    settings_from,
    strategy_name_of,
)
from svc_api.backtests.instruments import instrument_of, instruments_of, named_instrument
from svc_api.backtests.launch import Launch, Portfolio, create_job, dispatch, new_job_id, size_job
from svc_api.backtests.records import (
    delete_for_strategy,
    find_for_delete,
    full_range_returns,
    full_range_returns_of,
    get_job,
    history,
    queue_rows,
)
from svc_api.backtests.results import coin_result, history_entry, job_result, job_status
from svc_api.backtests.retention import expire_results
from svc_api.core.objectqueue import delete_queued
from svc_api.strategies import service as strategies
from svc_engine.instruments import Instrument


def runner_of(services: Any) -> jobs.JobRunner:
    """The app's job runner, started on first use (see :func:`svc_api.backtests.jobs.runner_of`).

    Example:
        >>> from types import SimpleNamespace
        >>> runner_of(SimpleNamespace(backtest_runner="the runner"))
        'the runner'
    """
    return jobs.runner_of(services)


# ----------------------------------------------------------------------------------------------------
# Before launching


def estimate_job(
    services: Any,
    svc_id: str,
    coins: list[str],
    params: Mapping[str, Any],
    *,
    timeframe: str,
    start_ts: float | None,
    end_ts: float | None,
) -> dict[str, Any]:
    """The ``estimate`` reply (see :func:`svc_api.backtests.preview.estimate`).

    Example:
        >>> from types import SimpleNamespace
        >>> from svc_engine.data import Catalog, DataStore
        >>> runner = SimpleNamespace(catalog=lambda: Catalog(DataStore("/nonexistent")))
        >>> services = SimpleNamespace(store=None, backtest_runner=runner)
        >>> estimate_job(services, "AB12CD", ["SOL"], {"market": 7}, timeframe="1h", start_ts=None,
        ...              end_ts=None)
        Traceback (most recent call last):
        ...
        svc_api.core.errors.Invalid: market must be a string
    """
    runner = runner_of(services)
    return preview.estimate(
        services.store, runner, svc_id, coins, params, timeframe=timeframe, start_ts=start_ts, end_ts=end_ts
    )


def instrument_info(
    services: Any, svc_id: str, params: Mapping[str, Any], *, timeframe: str
) -> dict[str, Any]:
    """The ``info`` reply (see :func:`svc_api.backtests.preview.info`).

    Example:
        >>> from types import SimpleNamespace
        >>> from svc_engine.data import Catalog, DataStore
        >>> runner = SimpleNamespace(catalog=lambda: Catalog(DataStore("/nonexistent")))
        >>> services = SimpleNamespace(store=None, backtest_runner=runner)
        >>> instrument_info(services, "AB12CD", {"symbol": "ETHUSDT"}, timeframe="1h")
        Traceback (most recent call last):
        ...
        svc_api.core.errors.Invalid: no data for ETH (ETHUSDT) in market crypto
    """
    return preview.info(services.store, runner_of(services), svc_id, params, timeframe=timeframe)


def instrument_timeframes(services: Any, params: Mapping[str, Any]) -> dict[str, Any]:
    """The ``list_timeframes`` reply (see :func:`svc_api.backtests.preview.list_timeframes`).

    Example:
        >>> from types import SimpleNamespace
        >>> from svc_engine.data import Catalog, DataStore
        >>> runner = SimpleNamespace(catalog=lambda: Catalog(DataStore("/nonexistent")))
        >>> services = SimpleNamespace(store=None, backtest_runner=runner)
        >>> instrument_timeframes(services, {})
        Traceback (most recent call last):
        ...
        svc_api.core.errors.Invalid: coin or symbol is required
    """
    return preview.list_timeframes(runner_of(services), params)


# ----------------------------------------------------------------------------------------------------
# Launching: each returns the launch (job_id, cost_credits, remaining_credits, chunks) and the
# instruments it covers.


def launch_run(
    services: Any, svc_id: str, params: Mapping[str, Any], *, timeframe: str, start_ts: float, end_ts: float
) -> tuple[dict[str, Any], Instrument]:
    """Launch a ``run`` job (one coin over a time range).

    Example:
        >>> from types import SimpleNamespace
        >>> from svc_engine.data import Catalog, DataStore
        >>> runner = SimpleNamespace(catalog=lambda: Catalog(DataStore("/nonexistent")))
        >>> services = SimpleNamespace(store=None, backtest_runner=runner)
        >>> launch_run(services, "AB12CD", {}, timeframe="1h", start_ts=0, end_ts=1)
        Traceback (most recent call last):
        ...
        svc_api.core.errors.Invalid: coin or symbol is required
    """
    runner = runner_of(services)
    inst = named_instrument(runner.catalog, params, missing="coin or symbol is required")
    made = dispatch(
        services.store, runner, svc_id, "run", [inst], timeframe, params, start_ts=start_ts, end_ts=end_ts
    )
    return made, inst


def launch_full_range(
    services: Any, svc_id: str, coins: list[str], params: Mapping[str, Any], *, timeframe: str
) -> tuple[dict[str, Any], list[Instrument]]:
    """Launch a ``full_range`` job (each coin over its whole history).

    Example:
        >>> from types import SimpleNamespace
        >>> from svc_engine.data import Catalog, DataStore
        >>> runner = SimpleNamespace(catalog=lambda: Catalog(DataStore("/nonexistent")))
        >>> services = SimpleNamespace(store=None, backtest_runner=runner)
        >>> launch_full_range(services, "AB12CD", ["BTC"], {}, timeframe="1h")
        Traceback (most recent call last):
        ...
        svc_api.core.errors.Invalid: no data for BTC (BTCUSDT) in market crypto
    """
    runner = runner_of(services)
    found = instruments_of(runner.catalog(), coins, metadata_of(params))
    return dispatch(services.store, runner, svc_id, "full_range", found, timeframe, params), found


def launch_portfolio(
    services: Any,
    svc_id: str,
    coins: list[str],
    params: Mapping[str, Any],
    *,
    timeframe: str,
    start_ts: float | None,
) -> tuple[dict[str, Any], list[Instrument], Portfolio]:
    """Launch a ``portfolio`` job (the coins sharing one balance split ``divide`` ways).

    Example:
        >>> from types import SimpleNamespace
        >>> from svc_engine.data import Catalog, DataStore
        >>> runner = SimpleNamespace(catalog=lambda: Catalog(DataStore("/nonexistent")))
        >>> services = SimpleNamespace(store=None, backtest_runner=runner)
        >>> launch_portfolio(services, "AB12CD", ["BTC", "ETH"], {}, timeframe="1h", start_ts=None)
        Traceback (most recent call last):
        ...
        svc_api.core.errors.Invalid: no data for BTC (BTCUSDT) in market crypto
    """
    runner = runner_of(services)
    found = instruments_of(runner.catalog(), coins, metadata_of(params))
    book = Portfolio(
        divide_of(params.get("divide"), len(found)), initial_balance_of(params.get("initial_balance"))
    )
    made = dispatch(
        services.store,
        runner,
        svc_id,
        "portfolio",
        found,
        timeframe,
        params,
        start_ts=start_ts,
        portfolio=book,
    )
    return made, found, book


# ----------------------------------------------------------------------------------------------------
# Following and reading jobs


def status(services: Any, svc_id: str, job_id: Any) -> dict[str, Any]:
    """The ``status`` reply of the caller's job.

    Example:
        >>> from types import SimpleNamespace
        >>> status(SimpleNamespace(store=store), "AB12CD", "bt_1")
        Traceback (most recent call last):
        ...
        svc_api.core.errors.NotFound: unknown backtest job 'bt_1'
    """
    with services.store.read() as conn:
        row = get_job(conn, svc_id, job_id)
    return job_status(row, now=services.clock.seconds())


def result(services: Any, svc_id: str, job_id: Any) -> dict[str, Any]:
    """The ``result`` reply of the caller's completed job.

    Example:
        >>> from types import SimpleNamespace
        >>> services = SimpleNamespace(store=store, backtest_runner=None)
        >>> result(services, "AB12CD", "bt_1")
        Traceback (most recent call last):
        ...
        svc_api.core.errors.NotFound: unknown backtest job 'bt_1'
    """
    with services.store.read() as conn:
        row = get_job(conn, svc_id, job_id)
    return job_result(row, runner_of(services).objects)


def latest_full_range(
    services: Any, svc_id: str, strategy_name: str, timeframe: str
) -> dict[str, Any] | None:
    """Coin (as the job named it) -> ``summary`` of the latest completed ``full_range`` of a strategy on
    ``timeframe``; None when it has none (the marketplace lists coins by it).

    Example:
        >>> from types import SimpleNamespace
        >>> latest_full_range(SimpleNamespace(store=store), "AB12CD", "mystrat", "1h") is None
        True
    """
    with services.store.read() as conn:
        job_id = queries.latest_full_range_job(conn, svc_id, strategy_name, timeframe)
    if job_id is None:
        return None
    reply = result(services, svc_id, job_id)
    return {coin: r["summary"] for coin, r in reply.get("results", {}).items() if "summary" in r}


def one_coin_result(services: Any, svc_id: str, params: Mapping[str, Any]) -> dict[str, Any]:
    """The ``coin_result`` reply: one coin of the caller's completed multi-coin job.

    Example:
        >>> from types import SimpleNamespace
        >>> services = SimpleNamespace(store=store, backtest_runner=SimpleNamespace())
        >>> one_coin_result(services, "AB12CD", {"job_id": 7})
        Traceback (most recent call last):
        ...
        svc_api.core.errors.Invalid: job_id must be a string of at most 40 characters
    """
    runner = runner_of(services)
    with services.store.read() as conn:
        row = get_job(conn, svc_id, params.get("job_id"))
    inst = named_instrument(runner.catalog, params, missing="coin (or symbol) is required", metadata=False)
    return coin_result(row, inst.symbol, runner.objects)


def delete_backtest(services: Any, svc_id: str, params: Mapping[str, Any]) -> tuple[str, int]:
    """Delete the finished job a ``delete_backtest`` names, with its result objects; ``(job_id, objects)``.

    Example:
        >>> from types import SimpleNamespace
        >>> services = SimpleNamespace(store=store, backtest_runner=SimpleNamespace(objects=None))
        >>> delete_backtest(services, "AB12CD", {"job_id": "bt_1"})
        Traceback (most recent call last):
        ...
        svc_api.core.errors.NotFound: unknown backtest job 'bt_1'
    """
    runner = runner_of(services)
    with services.store.write() as conn:
        row = find_for_delete(conn, svc_id, params)
        keys = queue_rows(conn, [row], now=services.clock.now())
    # the objects after the commit: a delete that rolls back keeps its row and its objects
    return row.job_id, delete_queued(services.store, runner.objects, keys)


def history_entries(
    services: Any,
    svc_id: str,
    params: Mapping[str, Any],
    *,
    limit: int,
    after: tuple[int, str] | None,
    strategy_name: str | None,
    timeframe: str | None,
) -> tuple[list[dict[str, Any]], bool]:
    """A page of the caller's history entries (filtered by the request's ``coin``) and whether more follow.

    Example:
        >>> from types import SimpleNamespace
        >>> services = SimpleNamespace(store=store, backtest_runner=None)
        >>> history_entries(services, "AB12CD", {}, limit=5, after=None, strategy_name=None, timeframe=None)
        ([], False)
    """
    symbol = None
    if params.get("coin"):
        symbol = instrument_of(
            runner_of(services).catalog(), params.get("coin"), None, metadata_of(params)
        ).symbol
    with services.store.read() as conn:
        rows, more = history(
            conn,
            svc_id,
            limit=limit,
            after=after,
            strategy_name=strategy_name,
            symbol=symbol,
            timeframe=timeframe,
        )
    return [history_entry(r) for r in rows], more


strategies.register_backtest_hooks(
    full_range_returns=lambda conn, svc_id, name, timeframe: full_range_returns(
        conn, svc_id, name, timeframe=timeframe
    ),
    delete_for_strategy=lambda conn, svc_id, name, now: delete_for_strategy(conn, svc_id, name, now=now),
)

__all__ = [
    "KINDS",
    "METADATA",
    "PORTFOLIO_SETTINGS",
    "RETRY_AFTER",
    "SETTINGS",
    "Launch",
    "LaunchRejected",
    "create_job",
    "delete_backtest",
    "delete_for_strategy",
    "estimate_job",
    "expire_results",
    "full_range_returns",
    "full_range_returns_of",
    "get_job",
    "history_entries",
    "instrument_info",
    "instrument_timeframes",
    "job_result",
    "job_status",
    "latest_full_range",
    "launch_full_range",
    "launch_portfolio",
    "launch_run",
    "new_job_id",
    "one_coin_result",
    "result",
    "runner_of",
    "settings_from",
    "size_job",
    "status",
    "strategy_name_of",
]
