"""``POST /backtest?action=...`` (estimate, info, list_timeframes, run, full_range, portfolio,
coin_result, status, result, delete_backtest) and ``/user`` ``backtest_history``.

Launches are asynchronous: the job row is written and charged, the app's job runner
(:mod:`svc_api.backtests.jobs`) executes the engine, and the reply says ``status: dispatched`` with
the ``poll_actions``. Each handler hands the checked request (its model in
:mod:`svc_api.backtests.contract`) to a use case of :mod:`svc_api.backtests.service` and shapes its
reply (:mod:`svc_api.backtests.replies`). Field names and rules: ``docs/backtests-api.md``.

Example:
    >>> sorted(BACKTEST)[:4]
    ['coin_result', 'delete_backtest', 'estimate', 'full_range']
    >>> sorted(USER)
    ['backtest_history']
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from svc_api.backtests import contract as c
from svc_api.backtests import replies as r
from svc_api.backtests import service as backtests
from svc_api.backtests.fields import history_after, optional_name, timeframe
from svc_api.backtests.instruments import instrument_fields, market_of
from svc_api.core.dispatch import Call, Operation
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


def _estimate(call: Call, req: c.BacktestEstimateQuery) -> dict[str, Any]:
    return backtests.estimate_job(call.services, call.svc_id, req)


def _info(call: Call, req: c.BacktestInfoQuery) -> dict[str, Any]:
    return backtests.instrument_info(call.services, call.svc_id, req)


def _list_timeframes(call: Call, req: c.BacktestTimeframesQuery) -> dict[str, Any]:
    return backtests.instrument_timeframes(call.services, req)


def _status(call: Call, req: c.BacktestJobRef) -> dict[str, Any]:
    return backtests.status(call.services, call.svc_id, req.job_id)


def _result(call: Call, req: c.BacktestJobRef) -> dict[str, Any]:
    return backtests.result(call.services, call.svc_id, req.job_id)


def _coin_result(call: Call, req: c.BacktestCoinRef) -> dict[str, Any]:
    return backtests.one_coin_result(call.services, call.svc_id, req.job_id, req.coin, req.symbol)


def _delete(call: Call, req: c.DeleteBacktest) -> dict[str, Any]:
    legacy = None if req.strategy_name is None else (req.strategy_name, req.backtest_key)
    job_id, removed = backtests.delete_backtest(call.services, call.svc_id, req.job_id, legacy)
    return {"action": "delete_backtest", "success": True, "job_id": job_id, "deleted_objects": removed}


# ----------------------------------------------------------------------------------------------------
# Launching


def _run(call: Call, req: c.RunLaunch) -> dict[str, Any]:
    made, inst = backtests.launch_run(call.services, call.svc_id, req)
    start, end = req.start_ts, req.end_ts
    extra = {**instrument_fields(inst), "timeframe": req.timeframe, "start_ts": start, "end_ts": end}
    return {"action": "run", "mode": "async_chunked"} | _dispatched("run", made) | extra


def _full_range(call: Call, req: c.FullRangeLaunch) -> dict[str, Any]:
    made, found = backtests.launch_full_range(call.services, call.svc_id, req)
    return _dispatched("full_range", made) | _coins_fields(found, req.timeframe)


def _portfolio(call: Call, req: c.PortfolioLaunch) -> dict[str, Any]:
    made, found, book = backtests.launch_portfolio(call.services, call.svc_id, req)
    return _dispatched("portfolio", made) | _coins_fields(found, req.timeframe) | book.as_params()


# ----------------------------------------------------------------------------------------------------
# /user backtest_history


def _history(call: Call, req: c.BacktestHistoryQuery) -> dict[str, Any]:
    # The filters are checked after the cursor, as before the models (the cursor needs the call).
    after = history_after(call.cursor("backtest_history"))
    name = optional_name(req.strategy_name)
    frame = timeframe(req.timeframe) if req.timeframe else None
    entries, more = backtests.history_entries(
        call.services,
        call.svc_id,
        limit=req.limit,
        after=after,
        strategy_name=name,
        timeframe=frame,
        coin=req.coin,
        metadata=req.sent_metadata(),
    )
    last = {"t": entries[-1]["created_at"], "i": entries[-1]["job_id"]} if more else None
    return call.user_page("backtest_history", "backtests", entries, more, last)


def _op(handler: Any, request: type, reply: type, summary: str, errors: tuple = (), **more: Any) -> Operation:
    return Operation(handler, request=request, reply=reply, summary=summary, errors=errors, **more)


_LAUNCH = {"idempotent": True, "limit_group": LAUNCH}
BACKTEST: dict[str, Operation] = {
    "estimate": _op(
        _estimate,
        c.BacktestEstimateQuery,
        r.BacktestEstimate,
        "The cost and duration of a job.",
        c.PREVIEW_ERRORS,
    ),
    "info": _op(
        _info,
        c.BacktestInfoQuery,
        r.BacktestInfo,
        "An instrument's data range, the strategy and a price.",
        c.PREVIEW_ERRORS,
    ),
    "list_timeframes": _op(
        _list_timeframes, c.BacktestTimeframesQuery, r.BacktestTimeframes, "The timeframes an instrument has."
    ),
    "run": _op(
        _run, c.RunLaunch, r.BacktestLaunch, "Launch one coin over a time range.", c.LAUNCH_ERRORS, **_LAUNCH
    ),
    "full_range": _op(
        _full_range,
        c.FullRangeLaunch,
        r.BacktestLaunch,
        "Launch each coin over its whole history.",
        c.LAUNCH_ERRORS,
        **_LAUNCH,
    ),
    "portfolio": _op(
        _portfolio,
        c.PortfolioLaunch,
        r.BacktestLaunch,
        "Launch the coins sharing one balance split `divide` ways.",
        c.LAUNCH_ERRORS,
        **_LAUNCH,
    ),
    "coin_result": _op(
        _coin_result,
        c.BacktestCoinRef,
        r.BacktestCoinResult,
        "One coin of the caller's completed multi-coin job.",
        c.RESULT_ERRORS,
    ),
    "status": _op(
        _status, c.BacktestJobRef, r.BacktestStatus, "A job's status and progress.", (c.NOT_FOUND,)
    ),
    "result": _op(_result, c.BacktestJobRef, r.BacktestResult, "A completed job's result.", c.RESULT_ERRORS),
    "delete_backtest": _op(
        _delete,
        c.DeleteBacktest,
        r.BacktestDeleted,
        "Delete a finished job and its results.",
        c.DELETE_ERRORS,
    ),
}

# A coin filter looks the coin up in the data catalog (files): only then the thread pool.
USER: dict[str, Operation] = {
    "backtest_history": _op(
        _history,
        c.BacktestHistoryQuery,
        r.BacktestHistoryPage,
        "The caller's backtests, newest first.",
        inline=lambda params: not params.get("coin"),
    )
}
