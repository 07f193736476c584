"""Reading jobs back: the status resource, the stored result, one coin's part, history entries.

Example:
    >>> from types import SimpleNamespace
    >>> row = SimpleNamespace(job_id="bt_1", status="running", progress_pct=0.0, started_at=None,
    ...                       finished_at=None, estimated_seconds=4.0, coin_progress=None)
    >>> job_status(row, now=10.0)["estimated_remaining_seconds"]
    4.0
"""

from __future__ import annotations

import json
from typing import Any

from svc_api.backtests.artifacts import coin_key, read_json
from svc_api.backtests.coins import displayed, names_of
from svc_api.backtests.instruments import display_name
from svc_api.core.errors import Conflict, Invalid, NotFound
from svc_api.core.objectstore import ObjectStore
from svc_api.credits import service as credits


def job_status(row: Any, now: float) -> dict[str, Any]:
    """The job status resource: progress, elapsed and estimated remaining seconds, coin progress.

    Remaining: ``elapsed * (100 - p) / p`` once progress ``p`` is above 0, before that the launch
    estimate minus the elapsed time; 0 once finished. See the module example.
    """
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
        out["coin_progress"] = displayed({"coin_progress": json.loads(row.coin_progress)}, names_of(row))[
            "coin_progress"
        ]
    if row.status == "failed":
        out["error"] = row.error or "failed"
    return out


def require_completed(row: Any) -> None:
    """409 unless the job has completed (a failed one says why).

    Example:
        >>> from types import SimpleNamespace
        >>> require_completed(SimpleNamespace(job_id="bt_1", status="running", progress_pct=40.0))
        Traceback (most recent call last):
        ...
        svc_api.core.errors.Conflict: backtest bt_1 is running (40% done); poll action=status
    """
    if row.status == "completed":
        return
    detail = f": {row.error}" if row.status == "failed" else f" ({row.progress_pct:.0f}% done)"
    raise Conflict(f"backtest {row.job_id} is {row.status}{detail}; poll action=status")


def job_result(row: Any, objects: ObjectStore) -> dict[str, Any]:
    """The Backtest result: ``action``, ``job_id``, ``cost_credits``, ``kind`` and the engine's
    ``to_dict()`` of the result with its coins as the request named them (:mod:`.coins`); 409 while
    the job is not completed.

    Example:
        >>> from types import SimpleNamespace
        >>> job_result(SimpleNamespace(job_id="bt_1", status="failed", error="boom"), None)
        Traceback (most recent call last):
        ...
        svc_api.core.errors.Conflict: backtest bt_1 is failed: boom; poll action=status
    """
    require_completed(row)
    payload = read_json(objects, row.result_key)
    head = {
        "action": "result",
        "job_id": row.job_id,
        "kind": row.kind,
        "strategy_name": row.strategy_name,
        "timeframe": row.timeframe,
        "cost_credits": credits.from_units(row.cost_credits),
    }
    return head | displayed(payload, names_of(row))


def coin_result(row: Any, symbol: str, objects: ObjectStore) -> dict[str, Any]:
    """One coin of a portfolio (or full_range) job: the single-coin shape (summary, trades).

    Example:
        >>> from types import SimpleNamespace
        >>> row = SimpleNamespace(job_id="bt_1", status="completed", coins='["BTCUSDT"]', kind="run")
        >>> coin_result(row, "ETHUSDT", None)
        Traceback (most recent call last):
        ...
        svc_api.core.errors.NotFound: ETHUSDT is not a coin of backtest bt_1 (BTCUSDT)
    """
    require_completed(row)
    symbols = json.loads(row.coins)
    if symbol not in symbols:
        raise NotFound(f"{symbol} is not a coin of backtest {row.job_id} ({', '.join(symbols)})")
    if row.kind == "portfolio":
        part = read_json(objects, coin_key(row.svc_id, row.job_id, symbol))
    elif row.kind == "full_range":
        payload = read_json(objects, row.result_key)
        if symbol not in payload["results"]:
            raise NotFound(f"{symbol} did not run in backtest {row.job_id}: {payload['errors'].get(symbol)}")
        part = payload["results"][symbol]
    else:
        raise Invalid("coin_result needs a portfolio or full_range job")
    return {"action": "coin_result", "job_id": row.job_id} | displayed(part, names_of(row))


def history_entry(row: Any) -> dict[str, Any]:
    """A Backtest history entry (plus ``kind``, ``status``, ``coins`` and ``symbol`` for multi-coin jobs).

    Example:
        >>> from types import SimpleNamespace
        >>> row = SimpleNamespace(job_id="bt_1700000000500abcdeabcde", strategy_name="s", kind="run",
        ...     status="completed", coins='["BTCUSDT"]', market="crypto", timeframe="1h", cost_credits=20000,
        ...     created_at=1700000000, total_trades=2, win_rate=50.0, total_return_pct=1.0)
        >>> entry = history_entry(row)
        >>> entry["coin"], entry["created_at"], entry["cost_credits"]
        ('BTC', 1700000000, 2)
    """
    symbols = json.loads(row.coins)
    coins = [display_name(s, row.market) for s in symbols]
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
        # NOT NULL since the baseline migration: no row of this store lacks it, so no job id is
        # ever parsed for a time (the spec's "legacy ids recover their timestamp" has no such row).
        "created_at": int(row.created_at),
        # Numbers, as the spec has them: 0 until a job has completed (its status says which).
        "summary": {
            "total_trades": int(row.total_trades or 0),
            "win_rate": float(row.win_rate or 0.0),
            "total_return_pct": float(row.total_return_pct or 0.0),
        },
    }
