"""``POST /backtest?action=...`` (estimate, info, list_timeframes, run, full_range, portfolio,
coin_result, status, result, delete_backtest) and ``/user`` ``backtest_history``.

Launches are asynchronous: the job row is written and charged, the app's job runner
(:mod:`svc_api.backtests.jobs`) executes the engine, and the reply says ``status: dispatched`` with
the ``poll_actions``. Each handler reads the request's fields, calls a use case of
:mod:`svc_api.backtests.service` and shapes its reply. Field names and rules: ``docs/backtests-api.md``.

Example:
    >>> sorted(BACKTEST)[:4]
    ['coin_result', 'delete_backtest', 'estimate', 'full_range']
    >>> sorted(USER)
    ['backtest_history']
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from svc_api.backtests import service as backtests
from svc_api.backtests.fields import SETTINGS, history_after, optional_name, settings_from
from svc_api.backtests.instruments import instrument_fields, market_of
from svc_api.core.dispatch import Call, Operation
from svc_api.core.fields import coins_of, timeframe_of, timestamp_of
from svc_engine.instruments import Instrument

LAUNCH = "backtest_launch"
"""The rate-limit endpoint group of the three launches (each costs engine time, not a read)."""


def _dispatched(kind: str, made: dict[str, Any]) -> dict[str, Any]:
    job_id = made["job_id"]
    poll = {"status": f"?action=status&job_id={job_id}", "result": f"?action=result&job_id={job_id}"}
    return {"action": kind, **made, "status": "dispatched", "poll_actions": poll}


def _coins_fields(found: Sequence[Instrument], timeframe: str) -> dict[str, Any]:
    out: dict[str, Any] = {"coins": [i.display for i in found], "symbols": [i.symbol for i in found]}
    market = market_of(found)
    if market is not None:
        first = found[0]
        out |= {"asset_class": first.asset_class, "provider": first.provider, "market": market}
        out["exchange"] = first.exchange
    return out | {"timeframe": timeframe}


# ----------------------------------------------------------------------------------------------------
# Reading


def _estimate(call: Call) -> dict[str, Any]:
    p = call.params
    timeframe = timeframe_of(p)
    start, end = timestamp_of(p, "start_ts"), timestamp_of(p, "end_ts")
    return backtests.estimate_job(
        call.services, call.svc_id, coins_of(p, 1, 50), p, timeframe=timeframe, start_ts=start, end_ts=end
    )


def _info(call: Call) -> dict[str, Any]:
    timeframe = timeframe_of(call.params)
    return backtests.instrument_info(call.services, call.svc_id, call.params, timeframe=timeframe)


def _list_timeframes(call: Call) -> dict[str, Any]:
    return backtests.instrument_timeframes(call.services, call.params)


def _status(call: Call) -> dict[str, Any]:
    return backtests.status(call.services, call.svc_id, call.params.get("job_id"))


def _result(call: Call) -> dict[str, Any]:
    return backtests.result(call.services, call.svc_id, call.params.get("job_id"))


def _coin_result(call: Call) -> dict[str, Any]:
    return backtests.one_coin_result(call.services, call.svc_id, call.params)


def _delete(call: Call) -> dict[str, Any]:
    job_id, removed = backtests.delete_backtest(call.services, call.svc_id, call.params)
    return {"action": "delete_backtest", "success": True, "job_id": job_id, "deleted_objects": removed}


# ----------------------------------------------------------------------------------------------------
# Launching


def _run(call: Call) -> dict[str, Any]:
    p = call.params
    timeframe = timeframe_of(p)
    start = timestamp_of(p, "start_ts", required=True)
    end = timestamp_of(p, "end_ts", required=True)
    settings_from(p, SETTINGS)  # bad settings are a 400 before any look-up
    made, inst = backtests.launch_run(
        call.services, call.svc_id, p, timeframe=timeframe, start_ts=start, end_ts=end
    )
    extra = {**instrument_fields(inst), "timeframe": timeframe, "start_ts": start, "end_ts": end}
    return {"action": "run", "mode": "async_chunked"} | _dispatched("run", made) | extra


def _full_range(call: Call) -> dict[str, Any]:
    timeframe = timeframe_of(call.params)
    coins = coins_of(call.params, 1, 50)
    made, found = backtests.launch_full_range(
        call.services, call.svc_id, coins, call.params, timeframe=timeframe
    )
    return _dispatched("full_range", made) | _coins_fields(found, timeframe)


def _portfolio(call: Call) -> dict[str, Any]:
    p = call.params
    timeframe = timeframe_of(p)
    start = timestamp_of(p, "start_ts")
    made, found, book = backtests.launch_portfolio(
        call.services, call.svc_id, coins_of(p, 2, 50), p, timeframe=timeframe, start_ts=start
    )
    return _dispatched("portfolio", made) | _coins_fields(found, timeframe) | book.as_params()


# ----------------------------------------------------------------------------------------------------
# /user backtest_history


def _history(call: Call) -> dict[str, Any]:
    p = call.params
    limit = call.page(25, 1, 100)
    after = history_after(call.cursor("backtest_history"))
    name = optional_name(p.get("strategy_name"))
    timeframe = timeframe_of(p) if p.get("timeframe") else None
    entries, more = backtests.history_entries(
        call.services, call.svc_id, p, limit=limit, after=after, strategy_name=name, timeframe=timeframe
    )
    last = {"t": entries[-1]["created_at"], "i": entries[-1]["job_id"]} if more else None
    return call.user_page("backtest_history", "backtests", entries, more, last)


BACKTEST: dict[str, Operation] = {
    "estimate": Operation(_estimate),
    "info": Operation(_info),
    "list_timeframes": Operation(_list_timeframes),
    "run": Operation(_run, idempotent=True, limit_group=LAUNCH),
    "full_range": Operation(_full_range, idempotent=True, limit_group=LAUNCH),
    "portfolio": Operation(_portfolio, idempotent=True, limit_group=LAUNCH),
    "coin_result": Operation(_coin_result),
    "status": Operation(_status),
    "result": Operation(_result),
    "delete_backtest": Operation(_delete),
}

# A coin filter looks the coin up in the data catalog (files): only then the thread pool.
USER: dict[str, Operation] = {
    "backtest_history": Operation(_history, inline=lambda params: not params.get("coin"))
}
