"""Launching a job: size and price it, charge it, write its row, hand it to the app's runner.

A launch is checked (instruments, strategy, settings), sized by the engine's ``estimate`` and priced
by :mod:`svc_api.backtests.pricing`; :func:`create_job` then charges the credits and writes the row
(status ``running``) in one transaction, and :func:`dispatch` queues the work on the runner.

Example:
    >>> new_job_id(1_700_000_000.5)[:16]
    'bt_1700000000500'
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy.engine import Connection

from svc_api.backtests import pricing, queries
from svc_api.backtests.config import CapacityExceeded
from svc_api.backtests.errors import LaunchRejected
from svc_api.backtests.execution import Work
from svc_api.backtests.fields import PORTFOLIO_SETTINGS, SETTINGS, settings_from, strategy_name_of
from svc_api.backtests.instruments import market_of
from svc_api.backtests.jobs import JobRunner
from svc_api.backtests.progress import initial_coin_progress
from svc_api.core.errors import Invalid
from svc_api.core.liveness import HOLDER
from svc_api.core.store import Store
from svc_api.credits import service as credits
from svc_api.strategies import service as strategies
from svc_engine.data import Catalog
from svc_engine.instruments import Instrument


@dataclass
class Launch:
    """A checked launch, ready to be charged and written.

    Example:
        >>> Launch("run", "s", 1, ["BTCUSDT"], "crypto", "1h", {}, 2, 3, 1.0).kind
        'run'
    """

    kind: str
    strategy_name: str
    strategy_version: int | None
    symbols: list[str]
    market: str | None
    timeframe: str
    params: dict[str, Any]
    chunks: int
    cost_credits: int
    estimated_seconds: float
    extra: dict[str, Any] = field(default_factory=dict)


def new_job_id(now: float) -> str:
    """A job id: ``bt_`` + launch time in milliseconds (13 digits) + 10 random hex digits.

    Example:
        >>> len(new_job_id(1_700_000_000.0))
        26
    """
    return f"bt_{int(now * 1000):013d}{secrets.token_hex(5)}"


def size_job(
    kind: str,
    strategy: Any,
    symbols: Sequence[str],
    timeframe: str,
    start_ts: float | None,
    end_ts: float | None,
    *,
    market: str | None,
    catalog: Catalog,
    workers: int,
) -> dict[str, Any]:
    """The engine's ``estimate`` of a job plus its price (``cost_credits``); 400 on the engine's
    ``ValueError``/``LookupError``. A portfolio is sized on each coin's whole history.

    Example:
        >>> from svc_engine.data import DataStore
        >>> size_job("run", "close > open", ["BTCUSDT"], "1h", 5, None, market=None,
        ...          catalog=Catalog(DataStore("/nonexistent")), workers=1)
        Traceback (most recent call last):
        ...
        svc_api.core.errors.Invalid: give both start_ts and end_ts (range mode) or neither \
(full_range mode); got only start_ts
    """
    from svc_engine.sim.drivers import estimate

    if kind == "portfolio":
        start_ts = end_ts = None
    try:
        sized = estimate(
            strategy,
            list(symbols),
            timeframe,
            start_ts,
            end_ts,
            market=market,
            catalog=catalog,
            workers=workers,
        )
    except (ValueError, LookupError) as error:
        raise Invalid(str(error)) from None
    chunks = len(symbols) if kind == "portfolio" else int(sized["chunks"])
    mode = {"run": "range"}.get(kind, kind) if kind != "estimate" else sized["mode"]
    sized["cost_credits"] = pricing.price(mode, total_candles=int(sized["total_candles"]), chunks=chunks)
    sized["chunks"] = chunks
    return sized


def create_job(conn: Connection, svc_id: str, launch: Launch, *, limit: int, now: float) -> dict[str, Any]:
    """Charge the launch and write its row (status ``running``), in the caller's transaction.

    The charge comes first: it updates (locks) the account row, so concurrent launches of one
    account count each other's jobs. Raises ``InsufficientCredits`` (402) or
    :class:`LaunchRejected` ``backtest_concurrency_limit`` when ``limit`` jobs already run.

    Example:
        >>> launch = Launch("run", "s", 1, ["BTCUSDT"], "crypto", "1h", {}, 1, 2, 1.0)
        >>> with store.write() as conn:
        ...     create_job(conn, "NOPE00", launch, limit=3, now=0.0)
        Traceback (most recent call last):
        ...
        svc_api.core.errors.NotFound: unknown account NOPE00
    """
    job_id = new_job_id(now)
    description = f"{launch.kind} backtest of {launch.strategy_name} ({launch.timeframe})"
    charge = credits.spend_credits(conn, svc_id, launch.cost_credits, "backtest", description, now=int(now))
    running = queries.count_running(conn, svc_id)
    if running >= limit:
        raise LaunchRejected(
            "backtest_concurrency_limit",
            f"{running} backtests are running; at most {limit} at a time now",
            {"current_running": int(running), "max_concurrent": int(limit)},
        )
    coin_progress = None
    if len(launch.symbols) > 1:
        coin_progress = json.dumps(initial_coin_progress(launch.symbols))
    queries.insert_job(conn, _row(job_id, svc_id, launch, coin_progress, now))
    return {"job_id": job_id, "remaining_credits": charge["balance"]}


def _row(job_id: str, svc_id: str, launch: Launch, coin_progress: str | None, now: float) -> dict[str, Any]:
    return {
        "job_id": job_id,
        "svc_id": svc_id,
        "kind": launch.kind,
        "strategy_name": launch.strategy_name,
        "strategy_version": launch.strategy_version,
        "coins": json.dumps(launch.symbols),
        "coins_key": "," + ",".join(launch.symbols) + ",",
        "market": launch.market,
        "timeframe": launch.timeframe,
        "params": json.dumps(launch.params),
        "status": "running",
        "progress_pct": 0.0,
        "coin_progress": coin_progress,
        "chunks": launch.chunks,
        "cost_credits": credits.to_units(launch.cost_credits),
        "estimated_seconds": launch.estimated_seconds,
        "created_at": int(now),
        "heartbeat_at": now,
        "runner": HOLDER,
    }


def strategy_and_balance(store: Store, svc_id: str, strategy_name: Any) -> tuple[str, Any, Any]:
    """The request's ``strategy_name`` (checked here, as sent: the instruments answer first), its
    active record and the caller's balance (one read).

    Example:
        >>> strategy_and_balance(None, "AB12CD", None)
        Traceback (most recent call last):
        ...
        svc_api.core.errors.Invalid: strategy_name is required
    """
    name = strategy_name_of(strategy_name)
    with store.read() as conn:
        record = strategies.load_strategy(conn, svc_id, name)
        balance = credits.balance(conn, svc_id)
    return name, record, balance


@dataclass(frozen=True)
class Portfolio:
    """The portfolio-only fields of a launch.

    Example:
        >>> Portfolio(2, 1000.0).as_params()
        {'divide': 2, 'initial_balance': 1000.0}
    """

    divide: int
    initial_balance: float

    def as_params(self) -> dict[str, Any]:
        """The fields as stored in the job's ``params``."""
        return {"divide": self.divide, "initial_balance": self.initial_balance}


def dispatch(
    store: Store,
    runner: JobRunner,
    svc_id: str,
    kind: str,
    found: list[Instrument],
    timeframe: str,
    strategy_name: Any,
    settings: Mapping[str, Any],
    *,
    start_ts: float | None = None,
    end_ts: float | None = None,
    portfolio: Portfolio | None = None,
) -> dict[str, Any]:
    """Size, charge and write a launch, then queue it: ``{job_id, cost_credits, remaining_credits,
    chunks}``. ``strategy_name`` and the simulation ``settings`` are as sent (checked once the
    strategy is found). 429 :class:`LaunchRejected` when the runner's queue is full or too many jobs run.

    Example:
        >>> dispatch(None, None, "AB12CD", "run", [], "1h", None, {})
        Traceback (most recent call last):
        ...
        svc_api.core.errors.Invalid: strategy_name is required
    """
    name, record, _ = strategy_and_balance(store, svc_id, strategy_name)
    strategy = record.compiled()
    names = PORTFOLIO_SETTINGS if kind == "portfolio" else SETTINGS
    checked = settings_from(settings, names) | {"market_type": record.market_type}
    market, symbols = market_of(found), [i.symbol for i in found]
    sized = size_job(
        kind,
        strategy,
        symbols,
        timeframe,
        start_ts,
        end_ts,
        market=market,
        catalog=runner.catalog(),
        workers=runner.workers(),
    )
    stored = {"start_ts": start_ts, "end_ts": end_ts, "settings": checked}
    launch = Launch(
        kind,
        name,
        record.version,
        symbols,
        market,
        timeframe,
        stored,
        int(sized["chunks"]),
        int(sized["cost_credits"]),
        float(sized["estimated_duration_seconds"]),
    )
    work = Work(
        "",
        svc_id,
        kind,
        strategy,
        symbols,
        market,
        timeframe,
        start_ts=start_ts,
        end_ts=end_ts,
        chunks=int(sized["chunks"]),
        settings=checked,
        strategy_name=name,
    )
    if portfolio is not None:
        launch.params |= portfolio.as_params()
        work.divide, work.initial_balance = portfolio.divide, portfolio.initial_balance
    made = _queue(store, runner, svc_id, launch, work)
    return {
        "job_id": made["job_id"],
        "cost_credits": launch.cost_credits,
        "remaining_credits": made["remaining_credits"],
        "chunks": launch.chunks,
    }


def _queue(store: Store, runner: JobRunner, svc_id: str, launch: Launch, work: Work) -> dict[str, Any]:
    try:
        with runner.reserve():  # held until the job is queued, so the queue never overfills
            with store.write() as conn:
                made = create_job(
                    conn, svc_id, launch, limit=runner.limit_now(svc_id), now=runner.clock.seconds()
                )
            work.job_id = made["job_id"]
            runner.submit(work)
    except CapacityExceeded:
        raise LaunchRejected(
            "backtest_capacity_exceeded", "the backtest queue is full; retry shortly"
        ) from None
    return made
