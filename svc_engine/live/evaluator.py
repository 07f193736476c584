"""The batched live evaluator: many compiled programs on the coins they watch, every pair advanced
by the newly closed candles in one pass, with the positions ``backtest`` gives over the same range.

A :class:`Watchlist` is the static part (programs, pairs, timeframe, the backtest settings); the
live state is one ``STATE_DTYPE`` record per pair (``svc_engine.live.state``), a NumPy array the
caller keeps between closes. :func:`advance` reads each coin's newest candles once, evaluates the
programs (``svc_engine.live.shared``: each indicator once per coin, each program once over all its
coins) and steps every pair in one kernel call (``svc_engine.live.kernel``); it returns the events
of the step: orders placed, filled, expired, trades closed, with their levels.

Example:
    >>> import polars as pl
    >>> from svc_engine.strategy import compile_strategy
    >>> k = pl.DataFrame({"open_time": [0, 3_600_000, 7_200_000, 10_800_000],
    ...     "open": [10.0, 10.0, 10.5, 11.4], "high": [10.1, 10.6, 11.6, 11.5],
    ...     "low": [9.9, 9.9, 10.4, 11.0], "close": [10.0, 10.5, 11.4, 11.2], "volume": [1.0] * 4})
    >>> w = watchlist([compile_strategy("close rises for 1 candle", "5%", "5%")], [(0, "X")], "1h",
    ...               spread_pct=0, commission_pct=0)
    >>> state = new_state(w)
    >>> ev = events_frame(w, advance(w, state, {"X": k[:2]}))
    >>> ev["event"].to_list(), ev["limit_price"].to_list()
    (['placed'], [10.5])
    >>> events_frame(w, advance(w, state, {"X": k}))["event"].to_list()
    ['filled', 'closed']
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl

from svc_engine.data.schema import timeframe_ms
from svc_engine.live.args import Pairs, Tape, Terms
from svc_engine.live.kernel import advance_nb
from svc_engine.live.shared import CoinCandles, candidates, history_leaves, stacked_context, tails, window_of
from svc_engine.live.state import EVENT_DTYPE, EVENTS, FLAT, STATE_DTYPE, fresh_state
from svc_engine.sim import nb
from svc_engine.sim.chunks import as_strategy
from svc_engine.sim.kernels.args import plain
from svc_engine.sim.run_args import resolve_settings, sizing_args
from svc_engine.sim.settings import Settings
from svc_engine.strategy.compiler import settle
from svc_engine.strategy.program import Strategy

MS_PER_DAY = 86_400_000
REPLAY_CHUNK = 64
"""Candles a replay advances at a time (:func:`rebuild_state`)."""


@dataclass(frozen=True, slots=True)
class Watchlist:
    """Programs, the coins they watch and the settings of their backtests: pair ``i`` is program
    ``program[i]`` on coin ``coins[coin[i]]``. Build it with :func:`watchlist`."""

    programs: tuple[Strategy, ...]
    coins: tuple[str, ...]
    program: np.ndarray
    coin: np.ndarray
    timeframe: str
    settings: Settings
    pair_of: np.ndarray
    """(programs, coins): the pair of a program on a coin, -1 where it is not watched."""
    leaves: tuple[tuple[tuple[Any, int], ...], ...]
    """Per coin: the history nodes of the programs watching it (``shared.history_leaves``), each
    with its ``settle``."""
    lead: int
    """Candles every coin's tail keeps before the new ones: the longest ``candle_count``."""
    rules: np.ndarray
    """Per pair: side, market entry, holding time and ``candle_count`` of its program (int64)."""

    def __len__(self) -> int:
        return int(self.program.shape[0])


def watchlist(
    programs: Sequence[Any], pairs: Sequence[tuple[int, str]], timeframe: str, **settings: Any
) -> Watchlist:
    """Pairs ``(program index, coin)`` of compiled programs (or strategy sentences) on one
    timeframe, with the settings of ``backtest`` (``intrabar="conservative"`` only).

    Example:
        >>> w = watchlist(["close > open"], [(0, "BTCUSDT"), (0, "ETHUSDT")], "1h")
        >>> len(w), w.coins
        (2, ('BTCUSDT', 'ETHUSDT'))
    """
    s = resolve_settings(dict(settings))
    compiled = tuple(as_strategy(p) for p in programs)
    for p in compiled:
        if not isinstance(p, Strategy):  # e.g. sv.long_short: two sides, maybe stop-and-reverse
            reverse = getattr(p, "reverse", False)
            what = (
                "stop-and-reverse (sv.long_short(..., reverse=True))" if reverse else f"a {type(p).__name__}"
            )
            raise ValueError(
                f"{what} is not evaluated live: the live evaluator steps one-sided programs "
                "(compile_strategy); watch each side as its own program, or backtest it"
            )
    coins = tuple(dict.fromkeys(coin for _, coin in pairs))
    where = {coin: k for k, coin in enumerate(coins)}
    program = np.array([p for p, _ in pairs], np.int64)
    coin = np.array([where[c] for _, c in pairs], np.int64)
    if program.size and (program.min() < 0 or program.max() >= len(compiled)):
        raise ValueError(f"a pair names a program outside 0..{len(compiled) - 1}")
    pair_of = np.full((len(compiled), len(coins)), -1, np.int64)
    pair_of[program, coin] = np.arange(program.size)
    if np.count_nonzero(pair_of >= 0) != program.size:
        raise ValueError("a program is watched twice on one coin")
    own = [history_leaves(p) for p in compiled]
    settles = {leaf: settle(leaf) for leaves in own for leaf in leaves}
    leaves = tuple(
        tuple(
            (leaf, settles[leaf])
            for leaf in dict.fromkeys(leaf for p in np.flatnonzero(pair_of[:, k] >= 0) for leaf in own[p])
        )
        for k in range(len(coins))
    )
    lead = max((p.candle_count for p in compiled), default=1) + 1
    per_program = np.array(
        [[_side(p), p.entry_order == "market", p.hold, p.candle_count] for p in compiled],
        np.int64,
    ).reshape(len(compiled), 4)
    rules = np.ascontiguousarray(per_program[program])
    return Watchlist(compiled, coins, program, coin, timeframe, s, pair_of, leaves, lead, rules)


def candles_needed(watch: Watchlist, new: int = 1) -> int:
    """How many of a coin's newest candles :func:`advance` reads for ``new`` new ones: the tail
    and the longest settled window of its indicators (or the whole history for those that need it).

    Example:
        >>> candles_needed(watchlist(["close crosses above SMA(20)"], [(0, "X")], "1h"))
        44
    """
    tail = watch.lead + new + 1
    settled = max((s for leaves in watch.leaves for _, s in leaves), default=0)
    return window_of(settled, tail)


def new_state(watch: Watchlist, *, half_spread: float | np.ndarray | None = None) -> np.ndarray:
    """A flat state for every pair that has seen no candle (``state.fresh_state``). The spread of
    executed prices is ``spread_pct / 200`` of the settings unless ``half_spread`` says (per pair).

    Example:
        >>> new_state(watchlist(["close > open"], [(0, "X")], "1h", spread_pct=0.1))["half_spread"]
        array([0.0005])
    """
    if half_spread is None:
        if watch.settings.spread_pct is None:
            raise ValueError("the settings have no spread_pct: pass half_spread (per pair) or spread_pct")
        half_spread = watch.settings.spread_pct / 200.0
    return fresh_state(len(watch), initial_balance=watch.settings.initial_balance, half_spread=half_spread)


def advance(watch: Watchlist, state: np.ndarray, candles: Mapping[str, Any]) -> np.ndarray:
    """Step every pair by the candles of its coin newer than its state, updating ``state`` in place;
    returns the events (``EVENT_DTYPE``; :func:`events_frame` names them).

    ``candles`` maps each coin to its kline frame (or ``shared.CoinCandles``), oldest first, ending
    at the newest closed candle, with at least :func:`candles_needed` candles (or from the start of
    the series). A pair whose state has seen no candle takes every candle given as new, counted
    from the frame's first (see :func:`rebuild_state` to start from a time). Example: the module's.
    """
    if state.dtype != STATE_DTYPE or state.shape != (len(watch),):
        raise ValueError(f"state must be {len(watch)} records of STATE_DTYPE")
    missing = [coin for coin in watch.coins if coin not in candles]
    if missing:
        raise ValueError(f"no candles for {', '.join(missing)}")
    series = [_coin(candles[coin]) for coin in watch.coins]
    new = _new_rows(watch, state, series)
    rows = int(new.max(initial=0)) + 1  # the candle before the new ones: a gap's late expiry
    tail = watch.lead + rows
    ctx = stacked_context(series, watch.leaves, tail)
    s = watch.settings
    filt = (
        s.min_profit_pct / 100,
        s.max_profit_pct / 100,
        s.min_loss_pct / 100,
        s.max_loss_pct / 100,
        s.signal_filter_mode == "reject",
    )
    cand = candidates(ctx, watch.programs, watch.pair_of, len(watch), tail, rows, filt)
    tape = Tape(*tails(series, rows)[:5])
    r = watch.rules
    pairs = Pairs(watch.coin, r[:, 0].astype(np.int8), r[:, 1] == 1, r[:, 2], r[:, 3])
    terms = Terms(
        timeframe_ms(watch.timeframe),
        round(s.max_wait_days * MS_PER_DAY),
        s.min_candles_between_signals,
        *sizing_args(s),
        s.commission_pct / 100,
        s.leverage,
    )
    busy = int(np.count_nonzero(state["phase"] != FLAT))
    events = np.zeros(4 * cand.row.size + 3 * busy + 8, EVENT_DTYPE)
    n = advance_nb(*plain(tape, pairs, cand, terms), state, events)
    return events[:n]


def rebuild_state(
    watch: Watchlist,
    candles: Mapping[str, Any],
    start_ms: int,
    *,
    half_spread: float | np.ndarray | None = None,
    chunk: int = REPLAY_CHUNK,
) -> tuple[np.ndarray, np.ndarray]:
    """The state of every pair after replaying its coin's candles from ``start_ms`` (an anchor: a
    candle where the pair was flat, such as the first it watched or the signal of its last order)
    to the newest given, and the events of that replay: what a worker does after a restart.
    ``candles`` as :func:`advance` takes them, with the warm-up before ``start_ms``; the replay
    advances ``chunk`` candles at a time, which bounds its working memory.

    Example:
        >>> import polars as pl
        >>> k = pl.DataFrame({"open_time": [0, 60_000], "open": [1.0, 1.0], "high": [1.0, 1.0],
        ...                   "low": [1.0, 1.0], "close": [1.0, 1.0], "volume": [0.0, 0.0]})
        >>> w = watchlist(["close > open"], [(0, "X")], "1m", spread_pct=0)
        >>> state, events = rebuild_state(w, {"X": k}, 60_000)
        >>> int(state["seen"][0]), int(state["last_ms"][0]), events.size
        (2, 60000, 0)
    """
    state = new_state(watch, half_spread=half_spread)
    series = {coin: _coin(candles[coin]) for coin in watch.coins}
    for k, coin in enumerate(watch.coins):
        t = series[coin].t
        before = int(np.searchsorted(t, start_ms, side="left"))
        mine = watch.coin == k
        state["seen"][mine] = before
        state["last_ms"][mine] = t[before - 1] if before else -1
    times = np.unique(
        np.concatenate([s.t[s.t >= start_ms] for s in series.values()] or [np.zeros(0, np.int64)])
    )
    parts = [np.zeros(0, EVENT_DTYPE)]
    for upto in times[chunk - 1 :: chunk].tolist() + ([int(times[-1])] if times.size else []):
        given = {}
        for coin, s in series.items():
            stop = int(np.searchsorted(s.t, upto, side="right"))
            given[coin] = CoinCandles(s.klines.slice(0, stop), s.t[:stop], tuple(a[:stop] for a in s.cols))
        parts.append(advance(watch, state, given))
    return state, np.concatenate(parts)


def events_frame(watch: Watchlist, events: np.ndarray) -> pl.DataFrame:
    """The events as a frame: pair, program, coin, event name, side, times (Unix ms), levels and
    prices, exit reason, return in percent and profit.

    Example:
        >>> w = watchlist(["close > open"], [(0, "X")], "1h")
        >>> events_frame(w, np.zeros(0, EVENT_DTYPE)).columns[:4]
        ['pair', 'program', 'coin', 'event']
    """
    pair = events["pair"]
    reasons = [*nb.REASONS, None]  # index -1: no exit reason
    names = [EVENTS[k] for k in events["kind"].tolist()]
    return pl.DataFrame(
        {
            "pair": pair,
            "program": watch.program[pair],
            "coin": pl.Series([watch.coins[k] for k in watch.coin[pair].tolist()], dtype=pl.Utf8),
            "event": pl.Series(names, dtype=pl.Utf8),
            "side": pl.Series(np.where(events["side"] == nb.LONG, "long", "short"), dtype=pl.Utf8),
            "signal_time": events["signal_ms"],
            "time": events["candle_ms"],
            "limit_price": events["limit"],
            "tp_price": events["tp"],
            "sl_price": events["sl"],
            "price": events["price"],
            "open_fill": events["open_fill"],
            "reason": pl.Series([reasons[r] for r in events["reason"].tolist()], dtype=pl.Utf8),
            "return_pct": events["ret"] * 100.0,
            "profit": events["profit"],
        }
    )


def _side(program: Strategy) -> int:
    return nb.LONG if program.position_side == "long" else nb.SHORT


def _coin(value: Any) -> CoinCandles:
    return value if isinstance(value, CoinCandles) else CoinCandles.of(value)


def _new_rows(watch: Watchlist, state: np.ndarray, series: list[CoinCandles]) -> np.ndarray:
    """Per coin, how many of its candles are new to its least advanced pair; refuses candles that
    skip one a pair has not seen, or a window too short to settle the indicators."""
    n_coins = len(series)
    last = np.full(n_coins, np.iinfo(np.int64).max)
    np.minimum.at(last, watch.coin, state["last_ms"])
    most = np.full(n_coins, -1)
    np.maximum.at(most, watch.coin, state["seen"])
    least = np.full(n_coins, np.iinfo(np.int64).max)
    np.minimum.at(least, watch.coin, state["seen"])
    need = candles_needed(watch)
    new = np.zeros(n_coins, np.int64)
    for k, coin in enumerate(series):
        if most[k] < 0:  # no pair watches it
            continue
        start = int(np.searchsorted(coin.t, last[k], side="right"))
        if last[k] >= 0 and (start == 0 or coin.t[start - 1] != last[k]):
            raise ValueError(
                f"{watch.coins[k]}: the candles given do not include {last[k]}, the last one seen"
            )
        new[k] = coin.t.shape[0] - start
        # a frame that does not begin the series must hold the settled window
        if most[k] > start and start + 1 < min(need, int(least[k])):
            raise ValueError(f"{watch.coins[k]}: {start} candles before the new ones; {need} are needed")
    return new
