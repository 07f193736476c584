"""One job's execution: what the engine is asked, and what a finished job keeps of its answer.

The service computes nothing itself: :func:`run_engine` calls the engine driver of the job's kind
(``svc_engine.sim.drivers.backtest``, ``full_range`` or ``portfolio``); the history figures and a
portfolio's per-coin parts are read from the engine's result.

Example:
    >>> Work("j", "AB12CD", "run", object(), ["BTCUSDT"], "crypto", "1h").coins_total
    1
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import polars as pl

from svc_api.core.errors import is_disk_full
from svc_engine.data import DataStore
from svc_engine.data.times import ms_columns
from svc_engine.executors import Executor
from svc_engine.sim.stats import finite

STORAGE_FULL = "the service's storage is full; credits refunded, run it again later"
"""The ``error`` of a job whose result could not be written for want of disk space."""


@dataclass
class Work:
    """One job to execute: what the engine needs, resolved at launch.

    ``symbols`` are data symbols; ``settings`` go to the driver as keyword arguments.

    Example:
        >>> Work("j", "AB12CD", "full_range", None, ["BTCUSDT", "ETHUSDT"], None, "1h").coins_total
        2
    """

    job_id: str
    svc_id: str
    kind: str
    strategy: Any
    symbols: list[str]
    market: str | None
    timeframe: str
    start_ts: float | None = None
    end_ts: float | None = None
    chunks: int | None = None
    settings: dict[str, Any] = field(default_factory=dict)
    divide: int | None = None
    initial_balance: float = 100.0
    strategy_name: str = ""

    @property
    def coins_total(self) -> int:
        """How many coins the job covers."""
        return len(self.symbols)


def run_engine(
    work: Work, *, executor: Executor, store: DataStore, progress: Callable[[dict[str, Any]], None] | None
) -> Any:
    """Call the engine driver of ``work.kind``.

    Example:
        >>> run_engine(Work("j", "AB12CD", "walk", None, [], None, "1h"), executor=None, store=None,
        ...            progress=None)
        Traceback (most recent call last):
        ...
        ValueError: unknown job kind 'walk'
    """
    from svc_engine.sim import drivers

    common: dict[str, Any] = {
        "executor": executor,
        "progress": progress,
        "store": store,
        "market": work.market,
    }
    if work.kind == "run":
        return drivers.backtest(
            work.strategy,
            work.symbols[0],
            work.timeframe,
            work.start_ts,
            work.end_ts,
            chunks=work.chunks,
            **common,
            **work.settings,
        )
    if work.kind == "full_range":
        return drivers.full_range(work.strategy, work.symbols, work.timeframe, **common, **work.settings)
    if work.kind == "portfolio":
        return drivers.portfolio(
            work.strategy,
            work.symbols,
            work.timeframe,
            divide=work.divide,
            initial_balance=work.initial_balance,
            start_ts=work.start_ts,
            **common,
            **work.settings,
        )
    raise ValueError(f"unknown job kind {work.kind!r}")


def history_figures(kind: str, payload: Mapping[str, Any]) -> dict[str, Any]:
    """The figures a history entry shows, read from the engine's result: ``total_trades``,
    ``win_rate``, ``total_return_pct`` (for ``full_range``: the average return over coins and the
    win rate over every coin's trades), and ``returns_by_coin`` of ``full_range`` jobs.

    Example:
        >>> history_figures("run", {"summary": {"total_trades": 3, "win_rate": 66.7,
        ...                                     "total_return_pct": 1.5}})
        {'total_trades': 3, 'win_rate': 66.7, 'total_return_pct': 1.5}
    """
    summary = payload.get("summary", {})
    if kind != "full_range":
        return {k: summary.get(k) for k in ("total_trades", "win_rate", "total_return_pct")}
    results = payload.get("results", {})
    returns = {c: r["summary"]["total_return_pct"] for c, r in results.items()}
    trades = sum(int(r["summary"].get("total_trades") or 0) for r in results.values())
    gains = sum(int(r["summary"].get("gain_count") or 0) for r in results.values())
    return {
        "total_trades": summary.get("total_trades"),
        "win_rate": round(100.0 * gains / trades, 2) if trades else 0.0,
        "total_return_pct": summary.get("avg_return_pct"),
        "returns_by_coin": json.dumps(returns),
    }


def portfolio_coin_results(result: Any) -> dict[str, dict[str, Any]]:
    """Each coin's part of a portfolio result: ``{coin, timeframe, summary, trades, total_trades}``
    with every trade of that coin (the engine's ``coin_results`` summary and trades frame).

    Example:
        >>> from types import SimpleNamespace
        >>> trades = pl.DataFrame({"coin": ["BTCUSDT"], "pnl": [1.5]})
        >>> book = SimpleNamespace(coins=["BTCUSDT"], trades=trades, timeframe="1h", coin_results={})
        >>> portfolio_coin_results(book)["BTCUSDT"]["total_trades"]
        1
    """
    out: dict[str, dict[str, Any]] = {}
    for coin in result.coins:
        trades = result.trades.filter(pl.col("coin") == coin)
        out[coin] = finite(
            {
                "coin": coin,
                "timeframe": result.timeframe,
                "summary": result.coin_results.get(coin, {}),
                "trades": ms_columns(trades).to_dicts(),
                "total_trades": trades.height,
            }
        )
    return out


def failure_message(error: BaseException) -> str:
    """The ``error`` a failed job shows: the exception's type and text, and its notes.

    Example:
        >>> failure_message(ValueError("no candles"))
        'ValueError: no candles'
        >>> failure_message(OSError(28, "No space left on device"))
        "the service's storage is full; credits refunded, run it again later"
    """
    if is_disk_full(error):
        return STORAGE_FULL
    text = f"{type(error).__name__}: {error}" if str(error) else type(error).__name__
    notes = getattr(error, "__notes__", None)
    return f"{text} ({'; '.join(notes)})" if notes else text
