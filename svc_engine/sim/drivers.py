"""Drivers: load candles, evaluate a strategy in parallel chunks, and hand the signals to the kernels.

``backtest`` cuts one series into time chunks; ``full_range`` and ``portfolio`` use one chunk per
coin. Every chunk (and a range's first chunk) is evaluated with :func:`warmup_of` candles of warm-up
before it and keeps only the signals inside it: a strategy's ``warmup_candles`` (enough history for
its recursive EMA/Wilder indicators to reach the whole history's values bit for bit), else its
``candle_count``. So a chunked job equals the same job in one piece, trade for trade. Work runs on
any :class:`~svc_engine.executors.Executor` (threads by default, Ray, or in process).

``estimate`` sizes a job without running it, with the 400-style checks of the API's ``estimate``.

Example:
    >>> import polars as pl
    >>> t = pl.DataFrame({"open_time": [0, 1, 2, 3]})
    >>> first_and_stop(t, 0.001, 0.002)
    (1, 3)
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any, Protocol, runtime_checkable

import numpy as np
import polars as pl

from svc_engine.data import Catalog, DataStore, load_klines
from svc_engine.data.times import to_seconds
from svc_engine.executors import Executor, LocalExecutor, ProgressFn, SerialExecutor
from svc_engine.sim.results import FullRangeResult

#: Candles per time chunk of a ``backtest``: big enough that a chunk's warm-up and dispatch are noise.
CHUNK_CANDLES = 100_000
#: Credits: one per chunk dispatched plus one per started block of this many candles.
CREDIT_CANDLES = 100_000
#: Duration model: fixed overhead plus candles at this rate on each worker (measured, see docs).
OVERHEAD_SECONDS = 0.5
CANDLES_PER_SECOND_PER_WORKER = 1_500_000.0
MODES = ("range", "full_range", "portfolio")


@runtime_checkable
class StrategyLike(Protocol):
    """Anything the drivers can run: ``candle_count`` warm-up and ``evaluate(klines) -> signals``."""

    candle_count: int

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

        return compile_strategy(strategy) if isinstance(strategy, str) else compile_strategy(**strategy)
    if isinstance(strategy, StrategyLike):
        return strategy
    raise TypeError(
        f"not a strategy: {type(strategy).__name__}"
        " (want a Strategy, a condition str/dict, or candle_count + evaluate)"
    )


# ----------------------------------------------------------------------------------------------------
# Chunks


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
    times = klines["open_time"].to_numpy()
    first = 0 if start_ts is None else int(np.searchsorted(times, math.ceil(start_ts * 1000), "left"))
    stop = len(times) if end_ts is None else int(np.searchsorted(times, math.floor(end_ts * 1000), "right"))
    if stop <= first:
        raise ValueError(f"range [{start_ts}, {end_ts}] selects no candle of the series")
    return first, stop


def _evaluate_chunk(shared: tuple[StrategyLike, pl.DataFrame], bounds: tuple[int, int]) -> pl.DataFrame:
    strategy, klines = shared
    lo, hi = bounds
    begin = max(0, lo - warmup_of(strategy))
    signals = strategy.evaluate(klines.slice(begin, hi - begin))
    times = klines["open_time"]
    return signals.filter(pl.col("open_time").is_between(times[lo], times[hi - 1]))


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
    with _executor(executor, len(bounds)) as ex:
        parts = ex.map(_evaluate_chunk, bounds, shared=(strategy, klines), labels=labels, progress=progress)
    return pl.concat(parts, how="vertical_relaxed")


@contextmanager
def _executor(executor: Executor | None, items: int) -> Iterator[Executor]:
    """The caller's executor, or a private one (threads when there is more than one item)."""
    if executor is not None:
        yield executor
        return
    with SerialExecutor() if items <= 1 else LocalExecutor() as own:
        yield own


# ----------------------------------------------------------------------------------------------------
# Kernels, imported late: ``svc_engine.sim`` imports this module.


def _sim() -> Any:
    import svc_engine.sim as sim

    return sim


def _check_settings(settings: Mapping[str, Any]) -> None:
    """Refuse bad settings before any candle is loaded (the kernels check them again)."""
    from svc_engine.sim.single import resolve_settings

    resolve_settings(dict(settings))


def _coins(coins: Sequence[str] | str) -> list[str]:
    listed = [coins] if isinstance(coins, str) else list(coins)
    if not listed:
        raise ValueError("coins is empty: name at least one symbol")
    duplicates = sorted({c for c in listed if listed.count(c) > 1})
    if duplicates:
        raise ValueError(f"coins lists {', '.join(duplicates)} more than once")
    return listed


def _store(store: DataStore | None) -> DataStore:
    return store if store is not None else DataStore()


# ----------------------------------------------------------------------------------------------------
# backtest


def backtest(
    strategy: Any,
    symbol_or_klines: str | pl.DataFrame,
    timeframe: str,
    start_ts: float | None = None,
    end_ts: float | None = None,
    *,
    market: str | None = None,
    executor: Executor | None = None,
    chunks: int | None = None,
    progress: ProgressFn | None = None,
    store: DataStore | None = None,
    **settings: Any,
) -> Any:
    """Backtest a strategy on one series over ``[start_ts, end_ts]`` (Unix seconds, inclusive; a
    ``datetime`` or an ISO string such as ``"2024-01-31"`` works too).

    ``symbol_or_klines`` is a data symbol (loaded from ``store`` with :func:`warmup_of` candles of
    warm-up before ``start_ts``) or a kline frame (its candles before ``start_ts`` are the warm-up).
    Signals are evaluated in ``chunks`` time chunks on ``executor``, then simulated once.
    Returns a :class:`~svc_engine.sim.BacktestResult`.

    Example:
        >>> backtest("close > open", "BTCUSDT", "1h", 10, 5)
        Traceback (most recent call last):
        ...
        ValueError: inverted range: start_ts 10 is after end_ts 5
    """
    start_ts, end_ts = to_seconds(start_ts), to_seconds(end_ts)
    if start_ts is not None and end_ts is not None and start_ts > end_ts:
        raise ValueError(f"inverted range: start_ts {start_ts} is after end_ts {end_ts}")
    strategy = as_strategy(strategy)
    _check_settings(settings)
    symbol = None
    if isinstance(symbol_or_klines, pl.DataFrame):
        klines = symbol_or_klines
    else:
        symbol, store = symbol_or_klines, _store(store)
        market = market or store.find_market(symbol)
        klines = load_klines(symbol, timeframe, start_ts, end_ts, market, warmup_of(strategy), store=store)
    first, stop = first_and_stop(klines, start_ts, end_ts)
    signals = evaluate_signals(
        strategy, klines, first, stop, chunks=chunks, executor=executor, progress=progress
    )
    where = {"market": market} if market else {}
    return _sim().simulate(
        klines.slice(first, stop - first),
        signals,
        timeframe=timeframe,
        symbol=symbol,
        start_ts=start_ts,
        end_ts=end_ts,
        **where,
        **settings,
    )


# ----------------------------------------------------------------------------------------------------
# full_range


def _full_range_coin(shared: tuple[Any, ...], coin: str) -> tuple[bool, Any]:
    strategy, timeframe, market, store, settings = shared
    try:
        market = market or store.find_market(coin)
        klines = load_klines(coin, timeframe, market=market, store=store)
        signals = strategy.evaluate(klines)
        result = _sim().simulate(klines, signals, timeframe=timeframe, symbol=coin, market=market, **settings)
    except (LookupError, ValueError, ArithmeticError) as error:
        return False, f"{type(error).__name__}: {error}"
    return True, result


def _not_ok(outcome: tuple[bool, Any]) -> bool:
    return not outcome[0]


def full_range(
    strategy: Any,
    coins: Sequence[str] | str,
    timeframe: str,
    *,
    executor: Executor | None = None,
    progress: ProgressFn | None = None,
    market: str | None = None,
    store: DataStore | None = None,
    **settings: Any,
) -> FullRangeResult:
    """Backtest a strategy on the whole history of each coin, one chunk (one task) per coin.

    A coin that cannot run (no data, a bad series) is reported in ``errors`` with its message and
    the others go on (its progress event says ``failed``); when no coin runs, ``ValueError`` lists
    every reason.

    Example:
        >>> full_range("close > open", [], "1h")
        Traceback (most recent call last):
        ...
        ValueError: coins is empty: name at least one symbol
    """
    coins = _coins(coins)
    strategy = as_strategy(strategy)
    _check_settings(settings)
    shared = (strategy, timeframe, market, _store(store), settings)
    with _executor(executor, len(coins)) as ex:
        outcomes = ex.map(
            _full_range_coin, coins, shared=shared, labels=coins, progress=progress, failed=_not_ok
        )
    done = {coin: value for coin, (ok, value) in zip(coins, outcomes, strict=True) if ok}
    errors = {coin: value for coin, (ok, value) in zip(coins, outcomes, strict=True) if not ok}
    if not done:
        raise ValueError("no coin could be backtested: " + "; ".join(f"{c}: {e}" for c, e in errors.items()))
    return FullRangeResult(results=done, timeframe=timeframe, errors=errors)


# ----------------------------------------------------------------------------------------------------
# portfolio


def _portfolio_coin(shared: tuple[Any, ...], coin: str) -> tuple[pl.DataFrame, pl.DataFrame, str]:
    strategy, timeframe, start_ts, end_ts, market, store = shared
    market = market or store.find_market(coin)
    klines = load_klines(coin, timeframe, start_ts, end_ts, market, warmup_of(strategy), store=store)
    first, stop = first_and_stop(klines, start_ts, end_ts)
    signals = _evaluate_chunk((strategy, klines), (first, stop))
    return klines.slice(first, stop - first), signals, market


def portfolio(
    strategy: Any,
    coins: Sequence[str],
    timeframe: str,
    *,
    divide: int | None = None,
    initial_balance: float = 100,
    start_ts: float | None = None,
    end_ts: float | None = None,
    executor: Executor | None = None,
    progress: ProgressFn | None = None,
    market: str | None = None,
    store: DataStore | None = None,
    **settings: Any,
) -> Any:
    """Trade a strategy on several coins sharing one balance split into ``divide`` slots.

    Each coin is loaded over ``[start_ts, end_ts]`` (Unix seconds, a ``datetime`` or an ISO
    string, as :func:`backtest`; each clipped to its own range; ``None`` = that end of the history)
    with its warm-up and evaluated as one task; then the portfolio sweep runs once. Returns a
    :class:`~svc_engine.sim.PortfolioResult` (with ``recommended_divide``). Coins of several
    markets get the kernel's default market for the spread: pass ``spread_pct`` to be explicit.

    Example:
        >>> portfolio("close > open", ["BTCUSDT", "BTCUSDT"], "1h")
        Traceback (most recent call last):
        ...
        ValueError: coins lists BTCUSDT more than once
    """
    start_ts, end_ts = to_seconds(start_ts), to_seconds(end_ts)
    if start_ts is not None and end_ts is not None and start_ts > end_ts:
        raise ValueError(f"inverted range: start_ts {start_ts} is after end_ts {end_ts}")
    coins = _coins(coins)
    strategy = as_strategy(strategy)
    _check_settings(settings)
    shared = (strategy, timeframe, start_ts, end_ts, market, _store(store))
    with _executor(executor, len(coins)) as ex:
        loaded = ex.map(_portfolio_coin, coins, shared=shared, labels=coins, progress=progress)
    markets = {m for _, _, m in loaded}
    where = {"market": markets.pop()} if len(markets) == 1 else {}
    return _sim().simulate_portfolio(
        {coin: part[0] for coin, part in zip(coins, loaded, strict=True)},
        {coin: part[1] for coin, part in zip(coins, loaded, strict=True)},
        coins=coins,
        divide=divide,
        initial_balance=initial_balance,
        timeframe=timeframe,
        start_ts=start_ts,
        end_ts=end_ts,
        **where,
        **settings,
    )


# ----------------------------------------------------------------------------------------------------
# estimate


def estimate_cost_credits(total_candles: int, chunks: int, mode: str) -> int:
    """Credits a job costs: ``chunks + ceil(total_candles / 100_000)``, plus 2 for a portfolio's
    ``recommended_divide`` search; at least 1.

    Example:
        >>> estimate_cost_credits(250_000, 3, "range"), estimate_cost_credits(5_000, 2, "portfolio")
        (6, 5)
    """
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r}; use one of {', '.join(MODES)}")
    extra = 2 if mode == "portfolio" else 0
    return max(1, chunks + math.ceil(total_candles / CREDIT_CANDLES) + extra)


def estimate_duration_seconds(total_candles: int, chunks: int, workers: int) -> float:
    """Seconds a job should take: ``0.5 + ceil(chunks / workers) * (total_candles / chunks) / 1.5e6``,
    i.e. chunks run ``workers`` at a time at 1.5 M candles per second each (load, evaluate, simulate).

    Example:
        >>> estimate_duration_seconds(3_000_000, 4, 2)  # two waves of 750 000 candles
        1.5
    """
    if chunks < 1 or workers < 1:
        raise ValueError(f"chunks and workers must be at least 1, got {chunks} and {workers}")
    waves = math.ceil(chunks / workers)
    return round(OVERHEAD_SECONDS + waves * (total_candles / chunks) / CANDLES_PER_SECOND_PER_WORKER, 3)


def estimate(
    strategy: Any,
    coins: Sequence[str] | str,
    timeframe: str,
    start_ts: float | None = None,
    end_ts: float | None = None,
    *,
    market: str | None = None,
    catalog: Catalog | None = None,
    workers: int = 1,
) -> dict[str, Any]:
    """Size a job without running it: ``mode``, ``total_candles``, ``chunks``, cost and duration.

    No timestamps: mode ``full_range`` over every coin's whole history, one chunk per coin. Both
    timestamps: mode ``range`` for exactly one coin, clipped to its data (the clipped ``start_ts``
    and ``end_ts`` are returned), in :func:`plan_chunks` chunks. Anything else raises ``ValueError``.

    Example:
        >>> estimate("close > open", ["BTCUSDT"], "1h", start_ts=0)
        Traceback (most recent call last):
        ...
        ValueError: give both start_ts and end_ts (range mode) or neither (full_range mode); got only start_ts
    """
    _check_range_request(coins, start_ts, end_ts)
    coins = _coins(coins)
    as_strategy(strategy)
    catalog = catalog if catalog is not None else Catalog()
    ranges = {coin: catalog.data_range(coin, timeframe, market) for coin in coins}
    if start_ts is None or end_ts is None:
        per_coin = {coin: int(r["total_candles"]) for coin, r in ranges.items()}
        out: dict[str, Any] = {"mode": "full_range", "chunks": len(coins)}
    else:
        coin = coins[0]
        lo, hi = max(start_ts, ranges[coin]["first_ts"]), min(end_ts, ranges[coin]["last_ts"])
        if lo > hi:
            raise ValueError(
                f"range [{start_ts}, {end_ts}] selects no candle of {coin} {timeframe}; the data covers"
                f" {ranges[coin]['first_date']} .. {ranges[coin]['last_date']}"
            )
        klines = load_klines(coin, timeframe, lo, hi, market, store=catalog.store)
        per_coin = {coin: klines.height}
        out = {"mode": "range", "chunks": plan_chunks(klines.height), "start_ts": lo, "end_ts": hi}
    total = sum(per_coin.values())
    out |= {
        "total_candles": total,
        "candles_by_coin": per_coin,
        "estimated_cost_credits": estimate_cost_credits(total, out["chunks"], out["mode"]),
        "estimated_duration_seconds": estimate_duration_seconds(total, out["chunks"], workers),
    }
    return out


def _check_range_request(coins: Sequence[str] | str, start_ts: float | None, end_ts: float | None) -> None:
    if (start_ts is None) != (end_ts is None):
        given = "start_ts" if end_ts is None else "end_ts"
        raise ValueError(
            f"give both start_ts and end_ts (range mode) or neither (full_range mode); got only {given}"
        )
    if start_ts is not None and end_ts is not None:
        if start_ts > end_ts:
            raise ValueError(f"inverted range: start_ts {start_ts} is after end_ts {end_ts}")
        if not isinstance(coins, str) and len(coins) > 1:
            raise ValueError(f"range mode takes exactly one coin, got {len(coins)}: {', '.join(coins)}")
