"""The unit of work of a sweep: a chunk of (coin, timeframe, block of combinations), how chunks are
planned, and how one runs on a worker (one coin load, one shared indicator cache, the kernels of
:func:`svc_engine.sim.backtest` per combination, summary rows only). `svc_engine.research.sweeper`
sends the chunks to an executor.

Example:
    >>> [c.label for c in plan_chunks(["A", "B"], ["1h"], 4, 1, None)]
    ['A 1h #0-3', 'B 1h #0-3']
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import polars as pl

from svc_engine.data import DataStore, load_klines
from svc_engine.data.times import TIME
from svc_engine.research.overfitting_nb import equity_block_moments_nb
from svc_engine.research.signals import strategy_signals
from svc_engine.sim.drivers import data_span, first_and_stop
from svc_engine.sim.settings import Settings
from svc_engine.sim.single import prepare, run_kernels

#: Summary figures that are counts; every other figure is a Float64 column.
INT_FIGURES: frozenset[str] = frozenset({"total_signals", "total_trades", "gain_count", "loss_count"})
#: The column of a chunk's rows holding each row's block moments (S x 5, flat; see overfitting_nb).
MOMENTS = "_moments"
#: Chunks per wave and worker: a wave's rows are written (or kept) before the next wave starts.
WAVE_PER_WORKER = 2


@dataclass(frozen=True, slots=True)
class Plan:
    """What every chunk needs, sent to the workers once per wave."""

    strategies: tuple[Any, ...]
    settings: tuple[Settings, ...]
    frames: dict[str, pl.DataFrame] | None
    market: str | None
    store: DataStore | None
    start_ts: float | None
    end_ts: float | None
    warmup: int
    blocks: int = 16
    """Blocks of the per-candle return moments kept per row for PBO and the deflated Sharpe (0: none)."""


@dataclass(frozen=True, slots=True)
class Chunk:
    """One task: combinations ``lo .. hi - 1`` on one coin and timeframe."""

    index: int
    coin: str
    timeframe: str
    lo: int
    hi: int

    @property
    def label(self) -> str:
        return f"{self.coin} {self.timeframe} #{self.lo}-{self.hi - 1}"


def plan_chunks(
    coins: Sequence[str], timeframes: Sequence[str], n_combos: int, workers: int, chunk_combos: int | None
) -> list[Chunk]:
    """Chunks in a fixed order (coin, timeframe, combination block). By default a coin's
    combinations stay in one chunk (each indicator computed once per coin) unless there are fewer
    series than ``2 x workers``; then they are split so that every worker has work.

    Example:
        >>> [c.label for c in plan_chunks(["A"], ["1h"], 10, 2, None)]
        ['A 1h #0-1', 'A 1h #2-4', 'A 1h #5-7', 'A 1h #8-9']
    """
    series = len(coins) * len(timeframes)
    if chunk_combos is None:
        blocks = max(1, min(n_combos, math.ceil(WAVE_PER_WORKER * workers / series)))
    else:
        if chunk_combos < 1:
            raise ValueError(f"chunk_combos must be at least 1, got {chunk_combos}")
        blocks = math.ceil(n_combos / chunk_combos)
    edges = np.linspace(0, n_combos, blocks + 1).round().astype(int)
    out: list[Chunk] = []
    for coin in coins:
        for tf in timeframes:
            for lo, hi in itertools.pairwise(edges):
                if hi > lo:
                    out.append(Chunk(len(out), coin, tf, int(lo), int(hi)))
    return out


def _klines(plan: Plan, coin: str, timeframe: str) -> tuple[pl.DataFrame, str | None]:
    if plan.frames is not None:
        return plan.frames[coin], plan.market
    store = plan.store if plan.store is not None else DataStore()
    market = plan.market or store.find_market(coin)
    klines = load_klines(coin, timeframe, plan.start_ts, plan.end_ts, market, plan.warmup, store=store)
    return klines, market


def _prune(ctx: Any) -> None:
    """Keep the indicators (shared by later combinations), drop conditions (one combination's)."""
    from svc_engine.strategy import ast as A

    ctx.cache = {k: v for k, v in ctx.cache.items() if isinstance(k, A.Ind | A.Field)}


def run_chunk(plan: Plan, chunk: Chunk) -> pl.DataFrame:
    """Summary rows (``combo``, ``coin``, ``timeframe``, figures) of one chunk.

    Example:
        >>> run_chunk.__name__
        'run_chunk'
    """
    from svc_engine.strategy.compiler import Context

    klines, market = _klines(plan, chunk.coin, chunk.timeframe)
    first, stop = first_and_stop(klines, plan.start_ts, plan.end_ts)
    where = {"market": market or "crypto"}  # sweeps keep crypto's year when no market is known
    prepared = prepare(
        klines.slice(first, stop - first),
        timeframe=chunk.timeframe,
        symbol=chunk.coin,
        start_ts=plan.start_ts,
        end_ts=plan.end_ts,
        data_span=data_span(klines),
        **where,
        **asdict(plan.settings[chunk.lo]),  # base settings alone may not validate (sizing params)
    )
    ctx = Context(klines)
    rows = []
    moments = np.zeros((chunk.hi - chunk.lo, plan.blocks, 5))
    for k in range(chunk.lo, chunk.hi):
        strategy = plan.strategies[k]
        if hasattr(strategy, "signal_arrays"):
            arrays = strategy.signal_arrays(ctx)
            rules = strategy.rule_arrays(ctx, arrays[0]) if strategy.has_rules else None
            sig = strategy_signals(arrays, first, stop, strategy, rules)
        else:  # two sides (``sv.long_short``): through their merged signal frame
            sig = _frame_signals(strategy, klines, ctx, first, stop, prepared)
        run = run_kernels(prepared, sig, plan.settings[k])
        rows.append({"combo": k, **run.summary})
        if plan.blocks:  # S x 5 sums from the equity the kernels made anyway; the curve is not kept
            equity_block_moments_nb(run.eq, plan.settings[k].initial_balance, moments[k - chunk.lo])
        _prune(ctx)
    frame = _frame(rows, chunk)
    window = prepared.window  # the range this coin actually covered, on every row of it
    frame = frame.with_columns(
        pl.lit(int(window.t[0])).cast(TIME).alias("covered_from"),
        pl.lit(int(window.t[-1]) + window.tf_ms).cast(TIME).alias("covered_to"),
        pl.lit(len(window), dtype=pl.Int64).alias("covered_candles"),
    )
    if plan.blocks:
        flat = moments.reshape(moments.shape[0], -1)
        frame = frame.with_columns(pl.Series(MOMENTS, flat, dtype=pl.Array(pl.Float64, flat.shape[1])))
    return frame


def _frame_signals(
    strategy: Any, klines: pl.DataFrame, ctx: Any, first: int, stop: int, prepared: Any
) -> Any:
    """The kernels' signals of a strategy known by its signal frame only, on rows ``[first, stop)``."""
    from svc_engine.data.times import as_time, ms_array
    from svc_engine.sim.inputs import prepare_signals

    t = ms_array(klines["open_time"])
    frame = strategy.evaluate(klines, context=ctx)
    frame = frame.filter(
        as_time(frame["open_time"]).to_physical().is_between(int(t[first]), int(t[stop - 1]))
    )
    return prepare_signals(frame, prepared.candles, prepared.window)


def _frame(rows: list[dict[str, Any]], chunk: Chunk) -> pl.DataFrame:
    names = list(rows[0])
    schema = {n: pl.Int64 if n in INT_FIGURES or n == "combo" else pl.Float64 for n in names}
    frame = pl.DataFrame(rows, schema=schema)
    return frame.with_columns(pl.lit(chunk.coin).alias("coin"), pl.lit(chunk.timeframe).alias("timeframe"))
