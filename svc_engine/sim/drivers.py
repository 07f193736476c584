"""Drivers: load candles, evaluate a strategy in parallel chunks, and hand the signals to the kernels.

``backtest`` cuts one series into time chunks; ``full_range`` and ``portfolio`` use one chunk per
coin. Every chunk (and a range's first chunk) is evaluated with :func:`warmup_of` candles of warm-up
before it and keeps only the signals inside it: a strategy's ``warmup_candles`` (enough history for
its recursive EMA/Wilder indicators to reach the whole history's values bit for bit), else its
``candle_count``. So a chunked job equals the same job in one piece, trade for trade. Work runs on
any :class:`~svc_engine.executors.Executor` (threads by default, Ray, or in process).

The chunk machinery lives in :mod:`svc_engine.sim.chunks` and ``estimate`` (sizing a job without
running it) in :mod:`svc_engine.sim.estimate`; both are re-exported here.

Example:
    >>> import polars as pl
    >>> t = pl.DataFrame({"open_time": [0, 1, 2, 3]})
    >>> first_and_stop(t, 0.001, 0.002)
    (1, 3)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import SimpleNamespace
from typing import Any

from svc_engine.data import DataStore, load_klines
from svc_engine.data.frames import as_klines, is_frame
from svc_engine.data.times import to_seconds
from svc_engine.executors import Executor, ProgressFn
from svc_engine.sim.chunks import (
    CHUNK_CANDLES,
    StrategyLike,
    as_strategy,
    chunk_bounds,
    data_span,
    evaluate_chunk,
    evaluate_signals,
    executor_for,
    first_and_stop,
    plan_chunks,
    warmup_of,
)
from svc_engine.sim.estimate import (
    CANDLES_PER_SECOND_PER_WORKER,
    CREDIT_CANDLES,
    MODES,
    OVERHEAD_SECONDS,
    coin_list,
    estimate,
    estimate_cost_credits,
    estimate_duration_seconds,
)
from svc_engine.sim.results import FullRangeResult

__all__ = [
    "CANDLES_PER_SECOND_PER_WORKER",
    "CHUNK_CANDLES",
    "CREDIT_CANDLES",
    "MODES",
    "OVERHEAD_SECONDS",
    "FullRangeResult",
    "StrategyLike",
    "as_strategy",
    "backtest",
    "chunk_bounds",
    "data_span",
    "estimate",
    "estimate_cost_credits",
    "estimate_duration_seconds",
    "evaluate_signals",
    "first_and_stop",
    "full_range",
    "plan_chunks",
    "portfolio",
    "warmup_of",
]

# ----------------------------------------------------------------------------------------------------
# The simulators, imported late (their kernels are heavy to import); a seam the drivers' tests fill
# with a recording fake.


def _sim() -> Any:
    from svc_engine.sim.multi import simulate_portfolio
    from svc_engine.sim.single import simulate

    return SimpleNamespace(simulate=simulate, simulate_portfolio=simulate_portfolio)


def _check_settings(settings: Mapping[str, Any]) -> None:
    """Refuse bad settings before any candle is loaded (the kernels check them again)."""
    from svc_engine.sim.single import resolve_settings

    resolve_settings(dict(settings))


def _store(store: DataStore | None) -> DataStore:
    return store if store is not None else DataStore()


# ----------------------------------------------------------------------------------------------------
# backtest


def backtest(
    strategy: Any,
    symbol_or_klines: Any,
    timeframe: str | None = None,
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
    warm-up before ``start_ts``; ``timeframe`` needed) or a kline frame, polars or pandas (its
    candles before ``start_ts`` are the warm-up; any case of the columns, the time as a column or
    a ``DatetimeIndex``, datetimes or Unix ms or s: `svc_engine.data.frames`); a frame's
    ``timeframe`` defaults to its spacing, and one that disagrees with it is refused.
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
    if is_frame(symbol_or_klines):
        klines = as_klines(symbol_or_klines)  # converted once for every chunk
    elif timeframe is None:
        raise ValueError(f"backtest of the stored symbol {symbol_or_klines!r} needs a timeframe, e.g. '1h'")
    else:
        symbol, store = symbol_or_klines, _store(store)
        market = market or store.find_market(symbol)
        klines = load_klines(symbol, timeframe, start_ts, end_ts, market, warmup_of(strategy), store=store)
    first, stop = first_and_stop(klines, start_ts, end_ts)
    signals = evaluate_signals(
        strategy, klines, first, stop, chunks=chunks, executor=executor, progress=progress
    )
    where = {"market": market} if market else {}
    result = _sim().simulate(
        klines if (first, stop) == (0, klines.height) else klines.slice(first, stop - first),
        signals,
        timeframe=timeframe,
        symbol=symbol,
        start_ts=start_ts,
        end_ts=end_ts,
        data_span=data_span(klines),
        **where,
        **settings,
    )
    result.strategy = strategy  # so that result.plot() draws its lines and says its words
    return result


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
    coins = coin_list(coins)
    strategy = as_strategy(strategy)
    _check_settings(settings)
    shared = (strategy, timeframe, market, _store(store), settings)
    with executor_for(executor, len(coins)) as ex:
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


def _portfolio_coin(shared: tuple[Any, ...], coin: str) -> tuple[Any, ...]:
    strategy, timeframe, start_ts, end_ts, market, store = shared
    market = market or store.find_market(coin)
    klines = load_klines(coin, timeframe, start_ts, end_ts, market, warmup_of(strategy), store=store)
    first, stop = first_and_stop(klines, start_ts, end_ts)
    signals = evaluate_chunk((strategy, klines), (first, stop))
    return klines.slice(first, stop - first), signals, market, data_span(klines)


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
    coins = coin_list(coins)
    strategy = as_strategy(strategy)
    _check_settings(settings)
    shared = (strategy, timeframe, start_ts, end_ts, market, _store(store))
    with executor_for(executor, len(coins)) as ex:
        loaded = ex.map(_portfolio_coin, coins, shared=shared, labels=coins, progress=progress)
    markets = {part[2] for part in loaded}
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
        data_spans={coin: part[3] for coin, part in zip(coins, loaded, strict=True)},
        **where,
        **settings,
    )
