"""Evaluating a strategy in time chunks: what a runnable strategy is, its warm-up, how many chunks a
series gets and where they start and stop. Every chunk is evaluated with :func:`warmup_of` candles of
warm-up before it and keeps only the signals inside it, so a chunked job equals the same job in one
piece, trade for trade. Work runs on any :class:`~svc_engine.executors.Executor`.

Example:
    >>> chunk_bounds(0, 10, 2), plan_chunks(250_000)
    ([(0, 5), (5, 10)], 3)
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any, Protocol, runtime_checkable

import numpy as np
import polars as pl

from svc_engine.data.times import as_time, ms_array
from svc_engine.executors import Executor, LocalExecutor, ProgressFn, SerialExecutor

#: Candles per time chunk of a ``backtest``: big enough that a chunk's warm-up and dispatch are noise.
CHUNK_CANDLES = 100_000


@runtime_checkable
class StrategyLike(Protocol):
    """Anything the drivers can run: ``candle_count`` warm-up and ``evaluate(klines) -> signals``."""

    @property
    def candle_count(self) -> int: ...

    def evaluate(self, klines: pl.DataFrame) -> pl.DataFrame: ...


def warmup_of(strategy: StrategyLike) -> int:
    """Candles of warm-up a chunk gets: ``warmup_candles`` when the strategy has it (compiled
    strategies do), else ``candle_count`` (a strategy of plain windows needs no more).

    Example:
        >>> warmup_of(as_strategy("RSI(14) crosses above 30")), warmup_of(as_strategy("close > SMA(20)"))
        (1416, 20)
    """
    warmup = getattr(strategy, "warmup_candles", None)
    return int(strategy.candle_count if warmup is None else max(warmup, strategy.candle_count))


def as_strategy(strategy: Any) -> StrategyLike:
    """A runnable strategy from a Strategy, an entry condition string, a dict of conditions or any
    object with ``candle_count`` and ``evaluate``.

    Example:
        >>> as_strategy(42)
        Traceback (most recent call last):
        ...
        TypeError: not a strategy: int (want a Strategy, a condition str/dict, or candle_count + evaluate)
    """
    if isinstance(strategy, str | Mapping):
        from svc_engine.strategy import compile_strategy
        from svc_engine.strategy.sides import long_short_of

        if isinstance(strategy, str):
            return compile_strategy(strategy)
        if any(k in strategy for k in ("long", "short", "long_entry", "short_entry")):  # two sides
            return long_short_of(strategy)
        return compile_strategy(**strategy)
    if isinstance(strategy, StrategyLike):
        return strategy
    raise TypeError(
        f"not a strategy: {type(strategy).__name__}"
        " (want a Strategy, a condition str/dict, or candle_count + evaluate)"
    )


def plan_chunks(total_candles: int, chunk_candles: int = CHUNK_CANDLES) -> int:
    """How many time chunks a ``backtest`` of ``total_candles`` uses: one per started ``chunk_candles``.

    Example:
        >>> plan_chunks(1), plan_chunks(100_000), plan_chunks(100_001)
        (1, 1, 2)
    """
    return max(1, math.ceil(total_candles / chunk_candles))


def chunk_bounds(first: int, stop: int, chunks: int) -> list[tuple[int, int]]:
    """Split rows ``[first, stop)`` into at most ``chunks`` contiguous, non-empty, near-equal parts.

    Example:
        >>> chunk_bounds(2, 12, 3)
        [(2, 5), (5, 9), (9, 12)]
    """
    if chunks < 1:
        raise ValueError(f"chunks must be at least 1, got {chunks}")
    edges = np.linspace(first, stop, min(chunks, stop - first) + 1).round().astype(int)
    return [(int(a), int(b)) for a, b in itertools.pairwise(edges)]


def first_and_stop(klines: pl.DataFrame, start_ts: float | None, end_ts: float | None) -> tuple[int, int]:
    """Rows ``[first, stop)`` of the candles whose ``open_time`` lies in ``[start_ts, end_ts]`` (seconds).

    Example:
        >>> first_and_stop(pl.DataFrame({"open_time": [0, 1000]}), 5, 1)
        Traceback (most recent call last):
        ...
        ValueError: inverted range: start_ts 5 is after end_ts 1
    """
    if start_ts is not None and end_ts is not None and start_ts > end_ts:
        raise ValueError(f"inverted range: start_ts {start_ts} is after end_ts {end_ts}")
    times = ms_array(klines["open_time"])
    first = 0 if start_ts is None else int(np.searchsorted(times, math.ceil(start_ts * 1000), "left"))
    stop = len(times) if end_ts is None else int(np.searchsorted(times, math.floor(end_ts * 1000), "right"))
    if stop <= first:
        from svc_engine.sim.coverage import iso

        held = f"{iso(times[0])} .. {iso(times[-1])} UTC (candle opens)" if len(times) else "no candles"
        raise ValueError(
            f"range [{start_ts}, {end_ts}] selects no candle of the series; the data covers {held}"
        )
    return first, stop


def data_span(klines: pl.DataFrame) -> tuple[int, int] | None:
    """(first, last open time, Unix ms) of a kline frame, for ``simulate(..., data_span=)`` of a cut of it.

    Example:
        >>> data_span(pl.DataFrame({"open_time": [5, 9]}))
        (5, 9)
    """
    t = ms_array(klines["open_time"])
    return (int(t[0]), int(t[-1])) if t.size else None


def evaluate_chunk(shared: tuple[StrategyLike, pl.DataFrame], bounds: tuple[int, int]) -> pl.DataFrame:
    """The signals of ``strategy`` on rows ``bounds = (lo, hi)`` of ``klines`` (``shared``), evaluated
    with :func:`warmup_of` rows of warm-up before ``lo``; one executor task.

    Example:
        >>> class Every:
        ...     candle_count = 1
        ...     def evaluate(self, k):
        ...         return k.select("open_time")
        >>> evaluate_chunk((Every(), pl.DataFrame({"open_time": [0, 1, 2]})), (1, 3))["open_time"].to_list()
        [1, 2]
    """
    strategy, klines = shared
    lo, hi = bounds
    begin = max(0, lo - warmup_of(strategy))
    signals = strategy.evaluate(klines.slice(begin, hi - begin))
    times = ms_array(klines["open_time"])
    try:  # compared in Unix ms, whatever integer or datetime form either frame has
        at = as_time(signals["open_time"]).to_physical()
    except TypeError:
        return signals  # not times at all: prepare_signals refuses them with its message
    return signals.filter(at.is_between(int(times[lo]), int(times[hi - 1])))


def evaluate_signals(
    strategy: Any,
    klines: pl.DataFrame,
    first: int = 0,
    stop: int | None = None,
    *,
    chunks: int | None = None,
    executor: Executor | None = None,
    progress: ProgressFn | None = None,
) -> pl.DataFrame:
    """The strategy's signals on rows ``[first, stop)`` of ``klines``, evaluated in time chunks.

    Rows before ``first`` serve as warm-up. ``chunks=None`` uses :func:`plan_chunks`.

    Example:
        >>> class Every:  # fires on every candle whose close exceeds the previous one
        ...     candle_count = 1
        ...     def evaluate(self, k):
        ...         return k.filter(pl.col("close") > pl.col("close").shift(1)).select("open_time")
        >>> k = pl.DataFrame({"open_time": [0, 1, 2, 3, 4], "close": [1.0, 2.0, 1.0, 2.0, 3.0]})
        >>> evaluate_signals(Every(), k, 1, chunks=3)["open_time"].to_list()
        [1, 3, 4]
    """
    strategy = as_strategy(strategy)
    stop = klines.height if stop is None else stop
    if not 0 <= first < stop <= klines.height:
        raise ValueError(f"rows [{first}, {stop}) select no candle of {klines.height}")
    bounds = chunk_bounds(first, stop, chunks or plan_chunks(stop - first))
    labels = [f"chunk {i + 1}/{len(bounds)}" for i in range(len(bounds))]
    with executor_for(executor, len(bounds)) as ex:
        parts = ex.map(evaluate_chunk, bounds, shared=(strategy, klines), labels=labels, progress=progress)
    return pl.concat(parts, how="vertical_relaxed")


@contextmanager
def executor_for(executor: Executor | None, items: int) -> Iterator[Executor]:
    """The caller's executor, or a private one (threads when there is more than one item).

    Example:
        >>> with executor_for(None, 1) as ex:
        ...     type(ex).__name__
        'SerialExecutor'
    """
    if executor is not None:
        yield executor
        return
    with SerialExecutor() if items <= 1 else LocalExecutor() as own:
        yield own
