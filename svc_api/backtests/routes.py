"""``POST /backtest?action=...`` (estimate, info, list_timeframes, run, full_range, portfolio,
coin_result, status, result, delete_backtest) and ``/user`` ``backtest_history``.

Launches are asynchronous: the job row is written and charged, the app's job runner
(:mod:`svc_api.backtests.jobs`) executes the engine, and the reply says ``status: dispatched`` with
the ``poll_actions``. Field names and rules: ``docs/backtests-api.md``.

Example:
    >>> sorted(BACKTEST)[:4]
    ['coin_result', 'delete_backtest', 'estimate', 'full_range']
    >>> sorted(USER)
    ['backtest_history']
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from svc_api.backtests import jobs, pricing
from svc_api.backtests import service as bt
from svc_api.core.dispatch import Call, Operation
from svc_api.core.errors import Invalid
from svc_api.core.fields import coins_of, timeframe_of, timestamp_of
from svc_api.credits import service as credits
from svc_engine.data import DataNotFoundError
from svc_engine.data.derived import source_timeframe
from svc_engine.data.schema import TIMEFRAMES
from svc_engine.instruments import Instrument


def _runner(call: Call) -> jobs.JobRunner:
    return jobs.runner_of(call.services)


def _instrument(call: Call, runner: jobs.JobRunner) -> Instrument:
    p = call.params
    if not p.get("coin") and not p.get("symbol"):
        raise Invalid("coin or symbol is required")
    return bt.instrument_of(runner.catalog(), p.get("coin"), p.get("symbol"), bt.metadata_of(p))


def _instruments(call: Call, runner: jobs.JobRunner, lo: int, hi: int) -> list[Instrument]:
    return bt.instruments_of(runner.catalog(), coins_of(call.params, lo, hi), bt.metadata_of(call.params))


def _market(found: list[Instrument]) -> str | None:
    markets = {i.market for i in found}
    return markets.pop() if len(markets) == 1 else None


def _strategy(call: Call) -> Any:
    name = bt.strategy_name_of(call.params)
    with call.store.read() as conn:
        record = bt.load_strategy(conn, call.svc_id, name)
        balance = credits.balance(conn, call.svc_id)
    return name, record, balance


def _poll(job_id: str) -> dict[str, str]:
    return {"status": f"?action=status&job_id={job_id}", "result": f"?action=result&job_id={job_id}"}


# ----------------------------------------------------------------------------------------------------
# Reading


def _estimate(call: Call) -> dict[str, Any]:
    p = call.params
    timeframe = timeframe_of(p)
    start, end = timestamp_of(p, "start_ts"), timestamp_of(p, "end_ts")
    runner = _runner(call)
    found = _instruments(call, runner, 1, 50)
    _, record, balance = _strategy(call)
    sized = bt.size_job(
        "estimate", record.compiled(), [i.symbol for i in found], timeframe, start, end,
        market=_market(found), catalog=runner.catalog(), workers=runner.workers(),
    )  # fmt: skip
    out = {
        "action": "estimate",
        "mode": sized["mode"],
        "total_candles": sized["total_candles"],
        "estimated_cost_credits": sized["cost_credits"],
        "estimated_duration_seconds": sized["estimated_duration_seconds"],
        "chunks": sized["chunks"],
        "current_credits": balance,
        "can_afford": credits.to_units(balance) >= credits.to_units(sized["cost_credits"]),
        "coins": [i.display for i in found],
        "symbols": [i.symbol for i in found],
        "timeframe": timeframe,
    }
    if sized["mode"] == "range":
        out |= {"start_ts": sized["start_ts"], "end_ts": sized["end_ts"]}
    return out


def _info(call: Call) -> dict[str, Any]:
    timeframe = timeframe_of(call.params)
    runner = _runner(call)
    inst = _instrument(call, runner)
    name, record, balance = _strategy(call)
    try:
        data_range = runner.catalog().data_range(inst.symbol, timeframe, inst.market)
    except (DataNotFoundError, ValueError) as error:
        raise Invalid(str(error)) from None
    full = pricing.price("full_range", total_candles=int(data_range["total_candles"]), chunks=1)
    return {
        "action": "info",
        **bt.instrument_fields(inst),
        "instrument": inst.metadata(),
        "timeframe": timeframe,
        "data_range": dict(data_range),
        "strategy": {"slug": name, "candle_count": int(record.compiled().candle_count)},
        "cost_preview": {"credits_if_full": full},
        "current_credits": balance,
    }


def _list_timeframes(call: Call) -> dict[str, Any]:
    runner = _runner(call)
    inst = _instrument(call, runner)
    store = runner.datastore
    out = []
    for timeframe in TIMEFRAMES:
        try:
            source = source_timeframe(store, inst.market, inst.symbol, timeframe)
        except (DataNotFoundError, ValueError):
            continue
        out.append(
            {
                "timeframe": timeframe,
                "suffix": f"-{timeframe}",
                "s3_key": store.key(inst.market, inst.symbol, source),
                "stored": source == timeframe,
            }
        )
    return {
        "action": "list_timeframes",
        **bt.instrument_fields(inst),
        "instrument": inst.metadata(),
        "timeframes": out,
    }


def _status(call: Call) -> dict[str, Any]:
    with call.store.read() as conn:
        row = bt.get_job(conn, call.svc_id, call.params.get("job_id"))
    return bt.job_status(row)


def _result(call: Call) -> dict[str, Any]:
    with call.store.read() as conn:
        row = bt.get_job(conn, call.svc_id, call.params.get("job_id"))
    return bt.job_result(row, _runner(call).objects)


def _coin_result(call: Call) -> dict[str, Any]:
    runner = _runner(call)
    with call.store.read() as conn:
        row = bt.get_job(conn, call.svc_id, call.params.get("job_id"))
    if not call.params.get("coin") and not call.params.get("symbol"):
        raise Invalid("coin (or symbol) is required")
    inst = bt.instrument_of(runner.catalog(), call.params.get("coin"), call.params.get("symbol"), {})
    return bt.coin_result(row, inst.symbol, runner.objects)


def _delete(call: Call) -> dict[str, Any]:
    runner = _runner(call)
    with call.store.write() as conn:
        row = bt.find_for_delete(conn, call.svc_id, call.params)
        removed = bt.delete_rows(conn, [row], runner.objects)
    return {"action": "delete_backtest", "success": True, "job_id": row.job_id, "deleted_objects": removed}


# ----------------------------------------------------------------------------------------------------
# Launching


def _launch(call: Call, runner: jobs.JobRunner, launch: bt.Launch, work: jobs.Work) -> dict[str, Any]:
    try:
        with runner.reserve():  # held until the job is queued, so the queue never overfills
            with call.store.write() as conn:
                made = bt.create_job(conn, call.svc_id, launch, limit=runner.limit_now())
            work.job_id, work.svc_id = made["job_id"], call.svc_id
            runner.submit(work)
    except jobs.CapacityExceeded:
        full = "the backtest queue is full; retry shortly"
        raise bt.LaunchRejected("backtest_capacity_exceeded", full) from None
    return {
        "action": launch.kind,
        "job_id": made["job_id"],
        "cost_credits": launch.cost_credits,
        "remaining_credits": made["remaining_credits"],
        "chunks": launch.chunks,
        "status": "dispatched",
        "poll_actions": _poll(made["job_id"]),
    }


def _settings(record: Any, params: Mapping[str, Any], names: tuple[str, ...] = bt.SETTINGS) -> dict[str, Any]:
    return bt.settings_from(params, names) | {"market_type": record.market_type}


def _prepare(
    call: Call, kind: str, found: list[Instrument], timeframe: str, start: Any, end: Any, settings_names: Any
) -> tuple[jobs.JobRunner, bt.Launch, jobs.Work, dict[str, Any]]:
    runner = _runner(call)
    name, record, _ = _strategy(call)
    strategy = record.compiled()
    settings = _settings(record, call.params, settings_names)
    market = _market(found)
    symbols = [i.symbol for i in found]
    sized = bt.size_job(
        kind, strategy, symbols, timeframe, start, end, market=market, catalog=runner.catalog(),
        workers=runner.workers(),
    )  # fmt: skip
    params = {"start_ts": start, "end_ts": end, "settings": settings}
    launch = bt.Launch(
        kind, name, record.version, symbols, market, timeframe, params, int(sized["chunks"]),
        int(sized["cost_credits"]), float(sized["estimated_duration_seconds"]),
    )  # fmt: skip
    work = jobs.Work(
        "", "", kind, strategy, symbols, market, timeframe, start_ts=start, end_ts=end,
        chunks=int(sized["chunks"]), settings=settings, strategy_name=name,
    )  # fmt: skip
    return runner, launch, work, sized


def _run(call: Call) -> dict[str, Any]:
    p = call.params
    timeframe = timeframe_of(p)
    start = timestamp_of(p, "start_ts", required=True)
    end = timestamp_of(p, "end_ts", required=True)
    bt.settings_from(p, bt.SETTINGS)  # bad settings are a 400 before any look-up
    runner = _runner(call)
    inst = _instrument(call, runner)
    runner, launch, work, _ = _prepare(call, "run", [inst], timeframe, start, end, bt.SETTINGS)
    reply = _launch(call, runner, launch, work)
    extra = {**bt.instrument_fields(inst), "timeframe": timeframe, "start_ts": start, "end_ts": end}
    return {"action": "run", "mode": "async_chunked"} | reply | extra


def _full_range(call: Call) -> dict[str, Any]:
    timeframe = timeframe_of(call.params)
    runner = _runner(call)
    found = _instruments(call, runner, 1, 50)
    runner, launch, work, _ = _prepare(call, "full_range", found, timeframe, None, None, bt.SETTINGS)
    reply = _launch(call, runner, launch, work)
    return reply | _coins_fields(found, timeframe)


def _portfolio(call: Call) -> dict[str, Any]:
    p = call.params
    timeframe = timeframe_of(p)
    start = timestamp_of(p, "start_ts")
    runner = _runner(call)
    found = _instruments(call, runner, 2, 50)
    divide = _divide(p.get("divide"), len(found))
    balance = _initial_balance(p.get("initial_balance"))
    runner, launch, work, _ = _prepare(
        call, "portfolio", found, timeframe, start, None, bt.PORTFOLIO_SETTINGS
    )
    launch.params |= {"divide": divide, "initial_balance": balance}
    work.divide, work.initial_balance = divide, balance
    reply = _launch(call, runner, launch, work)
    return reply | _coins_fields(found, timeframe) | {"divide": divide, "initial_balance": balance}


def _coins_fields(found: list[Instrument], timeframe: str) -> dict[str, Any]:
    out: dict[str, Any] = {"coins": [i.display for i in found], "symbols": [i.symbol for i in found]}
    market = _market(found)
    if market is not None:
        first = found[0]
        out |= {"asset_class": first.asset_class, "provider": first.provider, "market": market}
        out["exchange"] = first.exchange
    return out | {"timeframe": timeframe}


def _divide(value: Any, coins: int) -> int:
    if value is None:
        return min(coins, 20)
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 20:
        raise Invalid(f"divide must be an integer from 1 to 20, got {value!r}")
    return value


def _initial_balance(value: Any) -> float:
    if value is None:
        return 100.0
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value < 1e12:
        raise Invalid(f"initial_balance must be a positive number, got {value!r}")
    return float(value)


# ----------------------------------------------------------------------------------------------------
# /user backtest_history


def _history(call: Call) -> dict[str, Any]:
    p = call.params
    limit = call.page(25, 1, 100)
    position = call.cursor("backtest_history")
    after = None
    if position is not None:
        t, i = position.get("t"), position.get("i")
        if not isinstance(t, int) or isinstance(t, bool) or not isinstance(i, str):
            raise Invalid("cursor is not valid for this list")
        after = (t, i)
    name = p.get("strategy_name") or None
    if name is not None and not isinstance(name, str):
        raise Invalid("strategy_name must be a string")
    timeframe = timeframe_of(p) if p.get("timeframe") else None
    symbol = None
    if p.get("coin"):
        symbol = bt.instrument_of(_runner(call).catalog(), p.get("coin"), None, bt.metadata_of(p)).symbol
    with call.store.read() as conn:
        rows, more = bt.history(
            conn,
            call.svc_id,
            limit=limit,
            after=after,
            strategy_name=name,
            symbol=symbol,
            timeframe=timeframe,
        )
    last = {"t": int(rows[-1].created_at), "i": rows[-1].job_id} if more else None
    return call.user_page("backtest_history", "backtests", [bt.history_entry(r) for r in rows], more, last)


BACKTEST: dict[str, Operation] = {
    "estimate": Operation(_estimate),
    "info": Operation(_info),
    "list_timeframes": Operation(_list_timeframes),
    "run": Operation(_run, idempotent=True),
    "full_range": Operation(_full_range, idempotent=True),
    "portfolio": Operation(_portfolio, idempotent=True),
    "coin_result": Operation(_coin_result),
    "status": Operation(_status),
    "result": Operation(_result),
    "delete_backtest": Operation(_delete),
}

USER: dict[str, Operation] = {"backtest_history": Operation(_history)}
