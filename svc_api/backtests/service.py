"""Backtests as records: parsing requests, sizing and pricing jobs, the jobs' rows and results.

The engine computes everything (sizes through ``svc_engine.sim.estimate``, results through the
drivers run by :mod:`svc_api.backtests.jobs`); this module checks requests, charges credits, keeps
the ``backtest_jobs`` rows and reads the stored results back.

Request fields the spec leaves unnamed: the settings are the engine's names (``commission_pct``,
``position_size_pct``, ``min_candles_between_signals``, ``max_wait_days``, ``min_loss_pct`` next to
``min_profit_pct``, ``max_profit_pct``, ``max_loss_pct``, ``signal_filter_mode``); the dataset
namespace is ``market``; the portfolio start is ``start_ts``; ``coin_result`` takes ``job_id`` and
``coin`` (or ``symbol``).

Example:
    >>> settings_from({"commission_pct": 0.1, "coin": "BTC"})
    {'commission_pct': 0.1}
    >>> settings_from({"max_wait_days": 0})
    Traceback (most recent call last):
    ...
    svc_api.core.errors.Invalid: max_wait_days must be a finite number > 0 (got 0.0)
"""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from svc_api.backtests import pricing
from svc_api.backtests.tables import backtest_jobs
from svc_api.core.errors import Conflict, DomainError, Invalid, NotFound
from svc_api.core.objectstore import ObjectNotFound, ObjectStore
from svc_api.credits import service as credits
from svc_api.strategies import service as strategies
from svc_engine.data import Catalog
from svc_engine.instruments import Instrument, UnknownInstrumentError, resolve
from svc_engine.sim import Settings

SETTINGS = (
    "commission_pct",
    "position_size_pct",
    "min_candles_between_signals",
    "max_wait_days",
    "min_profit_pct",
    "max_profit_pct",
    "min_loss_pct",
    "max_loss_pct",
    "signal_filter_mode",
    "initial_balance",
    "leverage",
)
BOUNDS = {"initial_balance": (0.0, 1e12), "leverage": (1.0, 125.0)}
"""The API's bounds (exclusive low for the balance, inclusive otherwise) on settings the engine
would take wider: a balance must be positive, leverage at most an exchange's 125x."""
PORTFOLIO_SETTINGS = ("commission_pct",)
METADATA = ("asset_class", "provider", "market", "exchange")
KINDS = ("run", "full_range", "portfolio")


RETRY_AFTER = {"backtest_concurrency_limit": 10, "backtest_capacity_exceeded": 2}
"""Seconds a client is told to wait, per reason a launch is refused."""


class LaunchRejected(DomainError):
    """A launch refused for load (429 with ``Retry-After``); ``reason`` is also the ``error``.

    Example:
        >>> LaunchRejected("backtest_capacity_exceeded", "busy").body()
        {'error': 'backtest_capacity_exceeded', 'reason': 'backtest_capacity_exceeded', 'retry_after': 2, \
'message': 'busy'}
    """

    status = 429

    def __init__(self, reason: str, message: str, extra: Mapping[str, Any] | None = None) -> None:
        super().__init__(message, reason=reason, retry_after=RETRY_AFTER[reason], extra=extra)
        self.error = reason


# ----------------------------------------------------------------------------------------------------
# Strategies


def load_strategy(conn: Connection, svc_id: str, strategy_name: str) -> Any:
    """The caller's strategy record (``.compiled()``, ``.version``, ``.timeframe``); 404 when absent.

    Example:
        >>> load_strategy.__name__
        'load_strategy'
    """
    return strategies.load_strategy(conn, svc_id, strategy_name)


def strategy_name_of(params: Mapping[str, Any]) -> str:
    """The required ``strategy_name``.

    Example:
        >>> strategy_name_of({})
        Traceback (most recent call last):
        ...
        svc_api.core.errors.Invalid: strategy_name is required
    """
    name = params.get("strategy_name")
    if name is None or name == "":
        raise Invalid("strategy_name is required")
    if not isinstance(name, str) or len(name) > 64:
        raise Invalid("strategy_name must be a string of at most 64 characters")
    return name


# ----------------------------------------------------------------------------------------------------
# Request fields


def settings_from(params: Mapping[str, Any], names: Sequence[str] = SETTINGS) -> dict[str, Any]:
    """The simulation settings given in the request, validated by the engine's ``Settings``.

    Example:
        >>> settings_from({"signal_filter_mode": "reject"})
        {'signal_filter_mode': 'reject'}
    """
    given = {name: params[name] for name in names if params.get(name) is not None}
    for name, (low, high) in BOUNDS.items():
        value = given.get(name)
        if value is None:
            continue
        number = not isinstance(value, bool) and isinstance(value, int | float)
        inside = number and (low < value <= high or (name == "leverage" and value == low))
        if not inside:
            raise Invalid(f"{name} must be a number in ({low:g}, {high:g}], got {str(value)[:40]!r}")
    try:
        Settings.from_kwargs(**given)
    except ValueError as error:
        raise Invalid(str(error)) from None
    return given


def metadata_of(params: Mapping[str, Any]) -> dict[str, str]:
    """The optional instrument metadata fields (strings).

    Example:
        >>> metadata_of({"market": "crypto", "coin": "BTC"})
        {'market': 'crypto'}
    """
    out = {}
    for name in METADATA:
        value = params.get(name)
        if value is None or value == "":
            continue
        if not isinstance(value, str):
            raise Invalid(f"{name} must be a string")
        out[name] = value
    return out


# ----------------------------------------------------------------------------------------------------
# Instruments


def stored_series(catalog: Catalog) -> list[tuple[str, str]]:
    """Every ``(market, symbol)`` with candles in the data store.

    Example:
        >>> from svc_engine.data import DataStore
        >>> stored_series(Catalog(DataStore("/nonexistent")))
        []
    """
    rows = catalog.entries().select("market", "symbol").unique().sort("market", "symbol")
    return [(m, s) for m, s in rows.iter_rows()]


def instrument_of(
    catalog: Catalog, coin: Any = None, symbol: Any = None, metadata: Mapping[str, str] | None = None
) -> Instrument:
    """The instrument a request names, which must have data in the store; 400 otherwise, with the
    instruments module's message.

    Example:
        >>> from svc_engine.data import DataStore
        >>> instrument_of(Catalog(DataStore("/nonexistent")), "BTX")
        Traceback (most recent call last):
        ...
        svc_api.core.errors.Invalid: unknown instrument: coin='BTX'; did you mean TRX, BTC?
    """
    for name, value in (("coin", coin), ("symbol", symbol)):
        if value is not None and not isinstance(value, str):
            raise Invalid(f"{name} must be a string")
    series = stored_series(catalog)
    try:
        inst = resolve(coin, symbol, stored=series, **dict(metadata or {}))
    except (UnknownInstrumentError, ValueError) as error:
        raise Invalid(str(error)) from None
    if (inst.market, inst.symbol) not in series:
        raise Invalid(f"no data for {inst.display} ({inst.symbol}) in market {inst.market}")
    return inst


def instrument_fields(inst: Instrument) -> dict[str, str]:
    """The legacy ``coin`` and the instrument metadata of replies.

    Example:
        >>> instrument_fields(resolve("ETH"))["coin"]
        'ETH'
    """
    return {
        "coin": inst.display,
        "symbol": inst.symbol,
        "asset_class": inst.asset_class,
        "provider": inst.provider,
        "market": inst.market,
        "exchange": inst.exchange,
    }


def instruments_of(catalog: Catalog, coins: Sequence[str], metadata: Mapping[str, str]) -> list[Instrument]:
    """Each coin resolved (with the shared metadata); duplicates are refused.

    Example:
        >>> from svc_engine.data import DataStore
        >>> instruments_of(Catalog(DataStore("/nonexistent")), ["NOPE"], {})
        Traceback (most recent call last):
        ...
        svc_api.core.errors.Invalid: unknown instrument: coin='NOPE'; did you mean OP?
    """
    found = [instrument_of(catalog, coin, None, metadata) for coin in coins]
    symbols = [i.symbol for i in found]
    twice = sorted({s for s in symbols if symbols.count(s) > 1})
    if twice:
        raise Invalid(f"coins lists {', '.join(twice)} more than once")
    return found


# ----------------------------------------------------------------------------------------------------
# Sizing and pricing


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


# ----------------------------------------------------------------------------------------------------
# Jobs


def new_job_id(now: float | None = None) -> str:
    """A job id: ``bt_`` + launch time in milliseconds (13 digits) + 10 random hex digits.

    Example:
        >>> new_job_id(1_700_000_000.5)[:16]
        'bt_1700000000500'
    """
    now = time.time() if now is None else now
    return f"bt_{int(now * 1000):013d}{secrets.token_hex(5)}"


def created_of(job_id: str) -> int | None:
    """The launch time (seconds) in a job id, for rows without ``created_at``.

    Example:
        >>> created_of("bt_1700000000500abcdeabcde"), created_of("legacy")
        (1700000000, None)
    """
    digits = job_id[3:16] if job_id.startswith("bt_") else ""
    return int(digits) // 1000 if digits.isdigit() and len(digits) == 13 else None


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


def create_job(
    conn: Connection, svc_id: str, launch: Launch, *, limit: int, now: float | None = None
) -> dict[str, Any]:
    """Charge the launch and write its row (status ``running``), in the caller's transaction.

    The charge comes first: it updates (locks) the account row, so concurrent launches of one
    account count each other's jobs. Raises ``InsufficientCredits`` (402) or
    :class:`LaunchRejected` ``backtest_concurrency_limit`` when ``limit`` jobs already run.

    Example:
        >>> create_job.__name__
        'create_job'
    """
    now = time.time() if now is None else now
    job_id = new_job_id(now)
    description = f"{launch.kind} backtest of {launch.strategy_name} ({launch.timeframe})"
    charge = credits.spend_credits(conn, svc_id, launch.cost_credits, "backtest", description)
    b = backtest_jobs.c
    running = conn.execute(
        sa.select(sa.func.count()).where(b.svc_id == svc_id, b.status == "running")
    ).scalar_one()
    if running >= limit:
        raise LaunchRejected(
            "backtest_concurrency_limit",
            f"{running} backtests are running; at most {limit} at a time now",
            {"current_running": int(running), "max_concurrent": int(limit)},
        )
    coin_progress = None
    if len(launch.symbols) > 1:
        coin_progress = json.dumps({s: {"status": "running", "progress_pct": 0.0} for s in launch.symbols})
    conn.execute(
        backtest_jobs.insert().values(
            job_id=job_id,
            svc_id=svc_id,
            kind=launch.kind,
            strategy_name=launch.strategy_name,
            strategy_version=launch.strategy_version,
            coins=json.dumps(launch.symbols),
            coins_key="," + ",".join(launch.symbols) + ",",
            market=launch.market,
            timeframe=launch.timeframe,
            params=json.dumps(launch.params),
            status="running",
            progress_pct=0.0,
            coin_progress=coin_progress,
            chunks=launch.chunks,
            cost_credits=credits.to_units(launch.cost_credits),
            estimated_seconds=launch.estimated_seconds,
            created_at=int(now),
            heartbeat_at=now,
        )
    )
    return {"job_id": job_id, "remaining_credits": charge["balance"]}


def get_job(conn: Connection, svc_id: str, job_id: Any) -> Any:
    """The caller's job row; 404 for an unknown id or a job of another user.

    Example:
        >>> get_job(None, "AB12CD", "")
        Traceback (most recent call last):
        ...
        svc_api.core.errors.Invalid: job_id is required
    """
    if job_id is None or job_id == "":
        raise Invalid("job_id is required")
    if not isinstance(job_id, str) or len(job_id) > 40:
        raise Invalid("job_id must be a string of at most 40 characters")
    row = conn.execute(
        sa.select(backtest_jobs).where(backtest_jobs.c.job_id == job_id, backtest_jobs.c.svc_id == svc_id)
    ).first()
    if row is None:
        raise NotFound(f"unknown backtest job {job_id!r}")
    return row


def job_status(row: Any, now: float | None = None) -> dict[str, Any]:
    """The job status resource: progress, elapsed and estimated remaining seconds, coin progress.

    Remaining: ``elapsed * (100 - p) / p`` once progress ``p`` is above 0, before that the launch
    estimate minus the elapsed time; 0 once finished.

    Example:
        >>> job_status.__name__
        'job_status'
    """
    now = time.time() if now is None else now
    started = row.started_at
    end = row.finished_at if row.finished_at is not None else now
    elapsed = max(0.0, end - started) if started is not None else 0.0
    pct = float(row.progress_pct)
    if row.status != "running":
        remaining = 0.0
    elif pct > 0:
        remaining = elapsed * (100.0 - pct) / pct
    else:
        remaining = max(0.0, float(row.estimated_seconds) - elapsed)
    out: dict[str, Any] = {
        "action": "status",
        "job_id": row.job_id,
        "status": row.status,
        "progress_pct": round(pct, 2),
        "elapsed_seconds": round(elapsed, 3),
        "estimated_remaining_seconds": round(remaining, 3),
    }
    if row.coin_progress is not None:
        out["coin_progress"] = json.loads(row.coin_progress)
    if row.status == "failed":
        out["error"] = row.error or "failed"
    return out


def _require_completed(row: Any) -> None:
    if row.status == "completed":
        return
    detail = f": {row.error}" if row.status == "failed" else f" ({row.progress_pct:.0f}% done)"
    raise Conflict(f"backtest {row.job_id} is {row.status}{detail}; poll action=status")


def read_json(objects: ObjectStore, key: str) -> Any:
    """A stored JSON object; 404 when it is gone.

    Example:
        >>> import tempfile
        >>> from svc_api.core.objectstore import LocalObjectStore
        >>> read_json(LocalObjectStore(tempfile.mkdtemp()), "x.json")
        Traceback (most recent call last):
        ...
        svc_api.core.errors.NotFound: the result object of this job is gone
    """
    try:
        return json.loads(objects.get(key))
    except ObjectNotFound:
        raise NotFound("the result object of this job is gone") from None


def job_result(row: Any, objects: ObjectStore) -> dict[str, Any]:
    """The Backtest result: ``action``, ``job_id``, ``cost_credits``, ``kind`` and the engine's
    ``to_dict()`` of the result, unchanged; 409 while the job is not completed.

    Example:
        >>> job_result.__name__
        'job_result'
    """
    _require_completed(row)
    payload = read_json(objects, row.result_key)
    head = {
        "action": "result",
        "job_id": row.job_id,
        "kind": row.kind,
        "strategy_name": row.strategy_name,
        "timeframe": row.timeframe,
        "cost_credits": credits.from_units(row.cost_credits),
    }
    return head | payload


def coin_result(row: Any, symbol: str, objects: ObjectStore) -> dict[str, Any]:
    """One coin of a portfolio (or full_range) job: the single-coin shape (summary, trades).

    Example:
        >>> coin_result.__name__
        'coin_result'
    """
    _require_completed(row)
    symbols = json.loads(row.coins)
    if symbol not in symbols:
        raise NotFound(f"{symbol} is not a coin of backtest {row.job_id} ({', '.join(symbols)})")
    if row.kind == "portfolio":
        from svc_api.backtests.jobs import coin_key

        part = read_json(objects, coin_key(row.svc_id, row.job_id, symbol))
    elif row.kind == "full_range":
        payload = read_json(objects, row.result_key)
        if symbol not in payload["results"]:
            raise NotFound(f"{symbol} did not run in backtest {row.job_id}: {payload['errors'].get(symbol)}")
        part = payload["results"][symbol]
    else:
        raise Invalid("coin_result needs a portfolio or full_range job")
    return {"action": "coin_result", "job_id": row.job_id} | part


def delete_rows(conn: Connection, rows: Sequence[Any], objects: ObjectStore | None) -> int:
    """Delete job rows and their objects; returns how many objects were removed.

    Example:
        >>> delete_rows(None, [], None)
        0
    """
    from svc_api.backtests.jobs import job_keys

    removed = 0
    for row in rows:
        conn.execute(backtest_jobs.delete().where(backtest_jobs.c.job_id == row.job_id))
        if objects is not None:
            keys = job_keys(row.svc_id, row.job_id, json.loads(row.coins), row.kind)
            removed += sum(objects.delete(k) for k in keys)
    return removed


def find_for_delete(conn: Connection, svc_id: str, params: Mapping[str, Any]) -> Any:
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
        b = backtest_jobs.c
        row = conn.execute(
            sa.select(backtest_jobs).where(
                b.svc_id == svc_id, b.strategy_name == name, sa.or_(b.job_id == key, b.result_key == key)
            )
        ).first()
        if row is None:
            raise NotFound(f"no backtest {key!r} of strategy {name!r}")
    else:
        raise Invalid("give job_id, or strategy_name and backtest_key")
    if row.status == "running":
        raise Conflict(f"backtest {row.job_id} is running; delete it once it has finished")
    return row


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
        >>> history.__name__
        'history'
    """
    b = backtest_jobs.c
    query = sa.select(backtest_jobs).where(b.svc_id == svc_id)
    if strategy_name is not None:
        query = query.where(b.strategy_name == strategy_name)
    if symbol is not None:
        query = query.where(b.coins_key.contains(f",{symbol},", autoescape=True))
    if timeframe is not None:
        query = query.where(b.timeframe == timeframe)
    if after is not None:
        at, job_id = after
        query = query.where(sa.or_(b.created_at < at, sa.and_(b.created_at == at, b.job_id < job_id)))
    rows = conn.execute(query.order_by(b.created_at.desc(), b.job_id.desc()).limit(limit + 1)).all()
    return rows[:limit], len(rows) > limit


def history_entry(row: Any) -> dict[str, Any]:
    """A Backtest history entry (plus ``kind``, ``status``, ``coins`` and ``symbol`` for multi-coin jobs).

    Example:
        >>> history_entry.__name__
        'history_entry'
    """
    symbols = json.loads(row.coins)
    coins = [_display(s, row.market) for s in symbols]
    created = row.created_at if row.created_at is not None else created_of(row.job_id)
    return {
        "job_id": row.job_id,
        "strategy_name": row.strategy_name,
        "kind": row.kind,
        "status": row.status,
        "coin": coins[0] if len(coins) == 1 else ",".join(coins),
        "coins": coins,
        "symbol": symbols[0] if len(symbols) == 1 else None,
        "timeframe": row.timeframe,
        "cost_credits": credits.from_units(row.cost_credits),
        "created_at": int(created) if created is not None else None,
        "summary": {
            "total_trades": row.total_trades,
            "win_rate": row.win_rate,
            "total_return_pct": row.total_return_pct,
        },
    }


def _display(symbol: str, market: str | None) -> str:
    from svc_engine.instruments import display_symbol

    try:
        return display_symbol(market or "crypto", symbol)
    except (LookupError, ValueError):
        return symbol


# ----------------------------------------------------------------------------------------------------
# For the strategies domain


def full_range_returns(
    conn: Connection, svc_id: str, strategy_name: str, timeframe: str | None = None
) -> dict[str, float] | None:
    """Data symbol -> ``total_return_pct`` of the latest completed ``full_range`` job of the strategy
    (of ``timeframe`` when given); None when there is none. Coins that did not run are absent.

    Example:
        >>> from svc_api.core.store import Store
        >>> from svc_api.migrations import migrate
        >>> store = Store("sqlite:///:memory:"); _ = migrate(store)
        >>> with store.read() as conn:
        ...     full_range_returns(conn, "AB12CD", "mystrat") is None
        True
    """
    b = backtest_jobs.c
    query = sa.select(b.returns_by_coin).where(
        b.svc_id == svc_id, b.strategy_name == strategy_name, b.kind == "full_range", b.status == "completed"
    )
    if timeframe is not None:
        query = query.where(b.timeframe == timeframe)
    found = conn.execute(query.order_by(b.created_at.desc(), b.job_id.desc()).limit(1)).scalar()
    if found is None:
        return None
    return {coin: float(v) for coin, v in json.loads(found).items() if v is not None}


def delete_for_strategy(
    conn: Connection, svc_id: str, strategy_name: str, objects: ObjectStore | None = None
) -> int:
    """Delete every job of a strategy (rows and result objects); returns how many jobs.

    ``objects`` defaults to the object store of the running app's job runner. Running jobs are
    deleted too: their runner then discards the result it computes.

    Example:
        >>> from svc_api.core.store import Store
        >>> from svc_api.migrations import migrate
        >>> store = Store("sqlite:///:memory:"); _ = migrate(store)
        >>> with store.write() as conn:
        ...     delete_for_strategy(conn, "AB12CD", "mystrat")
        0
    """
    from svc_api.backtests.jobs import active_objects

    b = backtest_jobs.c
    rows = conn.execute(
        sa.select(backtest_jobs).where(b.svc_id == svc_id, b.strategy_name == strategy_name)
    ).all()
    delete_rows(conn, rows, objects if objects is not None else active_objects())
    return len(rows)


strategies.register_backtest_hooks(
    full_range_returns=lambda conn, svc_id, name, timeframe: full_range_returns(
        conn, svc_id, name, timeframe=timeframe
    ),
    delete_for_strategy=lambda conn, svc_id, name: delete_for_strategy(conn, svc_id, name),
)
