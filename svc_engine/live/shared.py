"""Signals of many programs on many coins at their newest candles, every indicator computed once
per coin and timeframe for all the programs that use it.

A program's tree has two kinds of nodes. *History* nodes (indicators, higher-timeframe values and
conditions, trend events, candle patterns, the end of the day) depend on a long past: a recursive
smoothing settles only after ``ceil(100 / alpha)`` candles (``strategy.warmup.settle``). The others
(comparisons, crosses, lags, streaks, and/or/not, ...) read a few candles back at most. So, per
close:

1. each distinct history node is evaluated once per coin, on that coin's own candles, over a window
   of a power of two at least its ``settle`` plus the tail (the same values, bit for bit, as the
   whole history gives: the drivers' chunks rely on that already);
2. the last ``T`` candles of every coin (``T`` = the longest ``candle_count`` plus the new candles)
   are laid end to end in one ``compiler.Context`` whose cache holds those history values, and each
   program is evaluated *once* over it with its own ``signal_arrays`` / ``rule_arrays``: the few
   rows it reads back never leave a coin's segment at the rows kept, the newest ones.

Example:
    >>> from svc_engine.strategy import compile_strategy
    >>> s = compile_strategy("close crosses above SMA(20) and RSI(14) < 70", "2 x ATR(14)")
    >>> sorted(map(str, history_leaves(s)))  # doctest: +NORMALIZE_WHITESPACE
    ["Ind(name='atr', params=(14,), output='', source=None)",
     "Ind(name='rsi', params=(14,), output='', source=None)",
     "Ind(name='sma', params=(20,), output='', source=None)"]
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import polars as pl

from svc_engine.sim import nb
from svc_engine.strategy import ast as A
from svc_engine.strategy.compiler import Context
from svc_engine.strategy.program import Strategy

HISTORY = (A.Ind, A.Tf, A.TfCond, A.TrendEvent, A.Pattern, A.DayEnd, A.DayStart)
"""Node types evaluated per coin on a long window (everything under them included)."""

PAD_MS = -2
"""Open time of the padding rows in front of a coin with fewer candles than the tail."""

COLUMNS = ("open", "high", "low", "close", "volume")


def history_leaves(strategy: Strategy) -> list[A.Node]:
    """The top-most history nodes of a program (its entry, limit price, exit condition and the
    indicators its take-profit and stop read), each once.

    Example:
        >>> from svc_engine.strategy import compile_strategy
        >>> history_leaves(compile_strategy("close > open"))
        []
    """
    found: dict[A.Node, None] = {}

    def visit(node: A.Node | None) -> None:
        if node is None:
            return
        if isinstance(node, HISTORY):
            found[node] = None
            return
        for child in node.children():
            visit(child)

    for root in (strategy.entry, strategy.entry_price, strategy.exit):
        visit(root)
    for target in (strategy.tp, strategy.sl):
        if isinstance(target, A.AtrTarget):
            found[A.Ind("atr", (target.period,))] = None
        elif isinstance(target, A.Trailing) and target.atr_mult:
            found[A.Ind("atr", (target.atr_period,))] = None
        elif isinstance(target, A.LevelTarget):
            visit(target.expr)
    return list(found)


def window_of(settled: int, tail: int) -> int:
    """Candles a history node that settles after ``settled`` candles is evaluated over, so that its
    last ``tail`` values are settled: rounded up to one of eight steps per power of two, so that
    nodes of similar warm-up share one context (and its common sub-results) at little extra work.

    Example:
        >>> window_of(19, 5), window_of(10_050, 202)  # SMA(20) and EMA(200) (``warmup.settle``)
        (24, 11264)
    """
    need = settled + tail
    step = 1 << max(need.bit_length() - 4, 0)
    return -(-need // step) * step


@dataclass(frozen=True, slots=True)
class CoinCandles:
    """One coin's candles, oldest first: the kline frame and its open times (Unix ms) and five price
    and volume columns as contiguous arrays (views where the frame's columns allow).

    Example:
        >>> k = pl.DataFrame({"open_time": [0], "open": [1.0], "high": [1.0], "low": [1.0],
        ...                   "close": [1.0], "volume": [0.0]})
        >>> CoinCandles.of(k).t.tolist()
        [0]
    """

    klines: pl.DataFrame
    t: np.ndarray
    cols: tuple[np.ndarray, ...]

    @classmethod
    def of(cls, klines: pl.DataFrame) -> CoinCandles:
        """From a kline frame (``open_time`` integer ms or any datetime)."""
        ctx = Context(klines)
        return cls(klines, ctx.array("open_time"), tuple(ctx.array(c) for c in COLUMNS))

    def frame(self, start: int, stop: int) -> pl.DataFrame:
        """Rows ``start:stop`` as a kline frame (a slice: no copy)."""
        return self.klines.slice(start, stop - start)


class Candidates(NamedTuple):
    """The signals and exit-condition rows of every pair on the newest ``R`` candles of its coin,
    sorted by pair then row, as the live kernel reads them (a record numba takes as one argument;
    CSR: pair ``p``'s signals are ``ptr[p]:ptr[p+1]``, each with its row, filter fate (``F_OK`` or
    a skip), levels and distances after the filter and stop moves; the exit condition's rows
    likewise in ``flag_ptr`` / ``flag_row``)."""

    ptr: np.ndarray
    row: np.ndarray
    fate: np.ndarray
    limit: np.ndarray
    tp: np.ndarray
    sl: np.ndarray
    tp_d: np.ndarray
    sl_d: np.ndarray
    moves: np.ndarray
    flag_ptr: np.ndarray
    flag_row: np.ndarray


def tails(coins: Sequence[CoinCandles], rows: int) -> tuple[np.ndarray, ...]:
    """(t, open, high, low, close, volume) of the last ``rows`` candles of each coin as
    (coins, rows) arrays, padded in front (time ``PAD_MS``, prices NaN) where a coin has fewer.

    Example:
        >>> one = CoinCandles.of(pl.DataFrame({"open_time": [5], **{c: [1.0] for c in COLUMNS}}))
        >>> tails([one], 2)[0].tolist()
        [[-2, 5]]
    """
    t = np.full((len(coins), rows), PAD_MS, np.int64)
    cols = [np.full((len(coins), rows), np.nan) for _ in COLUMNS]
    for k, coin in enumerate(coins):
        m = min(rows, coin.t.shape[0])
        t[k, rows - m :] = coin.t[coin.t.shape[0] - m :]
        for out, col in zip(cols, coin.cols, strict=True):
            out[k, rows - m :] = col[col.shape[0] - m :]
    return (t, *cols)


def stacked_context(
    coins: Sequence[CoinCandles], leaves_by_coin: Sequence[Sequence[tuple[A.Node, int]]], tail: int
) -> Context:
    """The last ``tail`` candles of every coin end to end, with each coin's history values in the
    cache: every ``(node, settle)`` of a coin evaluated once, on that coin's candles, over
    :func:`window_of` candles (nodes of one window share a context)."""
    t, *cols = tails(coins, tail)
    frame = {"open_time": t.ravel()} | dict(zip(COLUMNS, (c.ravel() for c in cols), strict=True))
    ctx = Context(pl.DataFrame(frame))
    wanted = dict.fromkeys(leaf for leaves in leaves_by_coin for leaf, _ in leaves)
    seeded = {leaf: _blank(leaf, len(coins) * tail) for leaf in wanted}
    for k, (coin, leaves) in enumerate(zip(coins, leaves_by_coin, strict=True)):
        n = coin.t.shape[0]
        contexts: dict[int, Context] = {}
        for leaf, settled in leaves if n else ():  # a coin with no candle yet keeps blanks
            size = min(window_of(settled, tail), n)
            long = contexts.get(size)
            if long is None:
                long = contexts[size] = Context(coin.frame(n - size, n))
            values = long.truth(leaf) if isinstance(leaf, A.CONDITIONS) else long.values(leaf)
            m = min(tail, size)
            seeded[leaf][(k + 1) * tail - m : (k + 1) * tail] = values[size - m :]
    ctx.cache.update(seeded)
    return ctx


def _blank(leaf: A.Node, size: int) -> np.ndarray:
    if isinstance(leaf, A.CONDITIONS):
        return np.zeros(size, np.bool_)
    return np.full(size, np.nan)


def candidates(
    ctx: Context,
    programs: Sequence[Strategy],
    pair_of: np.ndarray,
    n_pairs: int,
    tail: int,
    rows: int,
    settings: tuple[float, float, float, float, bool],
) -> Candidates:
    """Every program evaluated once over the stacked context; the signals on the last ``rows``
    candles of each coin it is watched on, filtered (section 2) as ``simulate`` filters them.
    ``pair_of[program, coin]`` is the pair (-1: not watched); ``settings`` = (min profit, max
    profit, min loss, max loss as fractions, reject?)."""
    n_coins = pair_of.shape[1]
    parts: list[tuple[np.ndarray, ...]] = []
    flags: list[tuple[np.ndarray, np.ndarray]] = []
    first = tail - rows
    for p, program in enumerate(programs):
        watched = pair_of[p]
        idx, limit, tp, sl = program.signal_arrays(ctx)
        keep = (idx % tail) >= first
        idx, limit, tp, sl = idx[keep], limit[keep], tp[keep], sl[keep]
        pair = watched[idx // tail]
        on = pair >= 0
        idx, pair, limit, tp, sl = idx[on], pair[on], limit[on], tp[on], sl[on]
        moves = np.full((idx.size, 4), np.nan)
        if program.has_rules:
            fired, raw = program.rule_arrays(ctx, idx)
            # percent columns in fractions, as `sim.inputs.prepare_signals` reads the frame
            moves = np.ascontiguousarray(raw)
            for m in (0, 2, 3):
                moves[:, m] = raw[:, m] / 100.0
            if fired is not None:
                grid = fired.reshape(n_coins, tail)[:, first:]
                coin_k, row = np.nonzero(grid)
                flag_pair = watched[coin_k]
                flags.append((flag_pair[flag_pair >= 0], row[flag_pair >= 0]))
        side = np.full(idx.size, nb.LONG if program.position_side == "long" else nb.SHORT, np.int8)
        fate, tp, sl, tp_d, sl_d = nb.filter_signals_nb(
            side, limit, tp, sl, np.zeros(idx.size, np.bool_), *settings, program.has_rules
        )
        parts.append((pair, idx % tail - first, fate, limit, tp, sl, tp_d, sl_d, moves))
    return _packed(parts, flags, n_pairs)


def _packed(
    parts: list[tuple[np.ndarray, ...]], flags: list[tuple[np.ndarray, np.ndarray]], n_pairs: int
) -> Candidates:
    if parts:
        pair, row, fate, limit, tp, sl, tp_d, sl_d, moves = (
            np.concatenate(c) for c in zip(*parts, strict=True)
        )
    else:
        pair = row = np.zeros(0, np.int64)
        fate = np.zeros(0, np.int8)
        limit = tp = sl = tp_d = sl_d = np.zeros(0)
        moves = np.zeros((0, 4))
    order = np.lexsort((row, pair))
    flag_pair = np.concatenate([f[0] for f in flags]) if flags else np.zeros(0, np.int64)
    flag_row = np.concatenate([f[1] for f in flags]) if flags else np.zeros(0, np.int64)
    flag_order = np.lexsort((flag_row, flag_pair))
    return Candidates(
        _ptr(pair, n_pairs),
        np.ascontiguousarray(row[order], np.int64),
        np.ascontiguousarray(fate[order]),
        *(np.ascontiguousarray(a[order]) for a in (limit, tp, sl, tp_d, sl_d)),
        np.ascontiguousarray(moves[order]),
        _ptr(flag_pair, n_pairs),
        np.ascontiguousarray(flag_row[flag_order], np.int64),
    )


def _ptr(pair: np.ndarray, n_pairs: int) -> np.ndarray:
    ptr = np.zeros(n_pairs + 1, np.int64)
    np.cumsum(np.bincount(pair.astype(np.int64), minlength=n_pairs), out=ptr[1:])
    return ptr
