"""Conditions of a strategy tree: each condition node (comparison, cross, streak, pattern, "after",
and/or/not, higher timeframe, trend event) evaluated over a `Context` into a bool array.

Example:
    >>> import polars as pl
    >>> from svc_engine.strategy import ast as A
    >>> from svc_engine.strategy.compiler import Context
    >>> k = pl.DataFrame({"open_time": [0, 1], "open": [1.0, 2.0], "high": [1.0, 2.0], "low": [1.0, 2.0],
    ...     "close": [1.0, 3.0], "volume": [0.0, 0.0]})
    >>> TRUTH[A.Candles](Context(k), A.Candles("green", 1)).tolist()
    [False, True]
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from svc_engine import indicators as K
from svc_engine.indicators import calendar as KC
from svc_engine.indicators import patterns as KP
from svc_engine.strategy import ast as A
from svc_engine.strategy.sparse import SPARSE, compare_arrays, pointwise, truth_at
from svc_engine.strategy.values import hlc, shift

if TYPE_CHECKING:
    from svc_engine.strategy.context import Context


def _operand(ctx: Context, node: A.Node) -> np.ndarray | float:
    """A number stays a number (NumPy broadcasts it), not an array of one value per candle."""
    return float(node.value) if isinstance(node, A.Num) else ctx.values(node)


def _compare(ctx: Context, node: A.Compare) -> np.ndarray:
    left, right = _operand(ctx, node.left), _operand(ctx, node.right)
    if isinstance(left, float) and isinstance(right, float):  # two numbers: still one value a candle
        left = ctx.values(node.left)
    return compare_arrays(node.op, left, right)


def _cross(ctx: Context, node: A.Cross) -> np.ndarray:
    left = ctx.values(node.left)
    if isinstance(node.right, A.Num):  # "crosses above 30": the level as a number
        level = float(node.right.value)
        if node.direction == "either":
            return K.cross_level_nb(left, level, True) | K.cross_level_nb(left, level, False)
        return K.cross_level_nb(left, level, node.direction == "above")
    right = ctx.values(node.right)
    if node.direction == "either":
        return K.cross_nb(left, right, True) | K.cross_nb(left, right, False)
    return K.cross_nb(left, right, node.direction == "above")


def _between(ctx: Context, node: A.Between) -> np.ndarray:
    x = ctx.values(node.expr)
    return (x >= ctx.values(node.low)) & (x <= ctx.values(node.high))


def _within(ctx: Context, node: A.Within) -> np.ndarray:
    x, ref = ctx.values(node.expr), ctx.values(node.ref)
    return np.abs(x - ref) <= (node.pct / 100.0) * np.abs(ref)


def _streak(ctx: Context, node: A.Streak) -> np.ndarray:
    x = ctx.values(node.expr)
    before = shift(x, 1)
    moved = x > before if node.direction == "rise" else x < before
    return K.run_length_nb(moved) >= node.n


def _candles(ctx: Context, node: A.Candles) -> np.ndarray:
    close, open_ = ctx.array("close"), ctx.array("open")
    colored = close > open_ if node.color == "green" else close < open_
    return K.run_length_nb(colored) >= node.n


def _new_extreme(ctx: Context, node: A.NewExtreme) -> np.ndarray:
    x = ctx.values(node.expr)
    if node.kind == "high":
        return x > shift(K.rolling_max_nb(x, node.n), 1)
    return x < shift(K.rolling_min_nb(x, node.n), 1)


_PATTERN_KERNELS: dict[str, Callable[..., np.ndarray]] = {
    "engulfing": KP.engulfing_nb,
    "harami": KP.harami_nb,
    "doji": KP.doji_nb,
    "hammer": KP.hammer_nb,
    "inverted hammer": KP.inverted_hammer_nb,
    "shooting star": KP.shooting_star_nb,
    "morning star": lambda o, h, lo, c: KP.star_nb(o, h, lo, c, True),
    "evening star": lambda o, h, lo, c: KP.star_nb(o, h, lo, c, False),
    "three white soldiers": KP.three_soldiers_nb,
    "three black crows": KP.three_crows_nb,
}


def _pattern(ctx: Context, node: A.Pattern) -> np.ndarray:
    key = A.Ind(f"_pattern {node.name}", ())
    values = ctx.cache.get(key)
    if values is None:
        values = _PATTERN_KERNELS[node.name](ctx.array("open"), *hlc(ctx))
        ctx.cache[key] = values
    if node.side == "bullish":
        return values > 0
    if node.side == "bearish":
        return values < 0
    return values != 0


def _after(ctx: Context, node: A.After) -> np.ndarray:
    prior = ctx.truth(node.prior)
    index = np.arange(prior.size)
    # The latest candle before this one where `prior` held (-window - 1 when none yet).
    latest = np.maximum.accumulate(np.where(prior, index, -node.window - 1))
    before = np.r_[-node.window - 1, latest[:-1]] if prior.size else latest
    return ctx.truth(node.cond) & (index - before <= node.window)


def _and(ctx: Context, node: A.And) -> np.ndarray:
    # Parts read at each candle alone go last; once the others leave few candidates, they are read
    # there only (svc_engine.strategy.sparse), which gives the same bools.
    items = sorted(node.items, key=lambda item: pointwise(item) and item not in ctx.cache)
    out = ctx.truth(items[0]).copy()
    at: np.ndarray | None = None
    for item in items[1:]:
        if pointwise(item) and item not in ctx.cache:
            at = np.flatnonzero(out) if at is None else at
            if at.size * SPARSE <= out.size:
                held = truth_at(ctx, item, at)
                out[at[~held]] = False
                at = at[held]
                continue
        out &= ctx.truth(item)
        at = None
    if at is not None:  # the candidates left are where the AND holds
        ctx.rows[node] = at
    return out


def _or(ctx: Context, node: A.Or) -> np.ndarray:
    out = ctx.truth(node.items[0]).copy()
    for item in node.items[1:]:
        out |= ctx.truth(item)
    return out


def _tf_cond(ctx: Context, node: A.TfCond) -> np.ndarray:
    higher, index = ctx.higher(node.timeframe)
    truth = higher.truth(node.cond)
    # Only on the candle that closes a higher candle: index moves to it there.
    closing = index >= 0
    closing[1:] &= index[1:] != index[:-1]
    out = np.zeros(ctx.size, np.bool_)
    out[closing] = truth[index[closing]]
    return out


def _day_end(ctx: Context, node: A.DayEnd) -> np.ndarray:
    t = ctx.array("open_time")
    steps = np.diff(t)
    base = int(steps[steps > 0].min()) if (steps > 0).any() else K.DAY_MS
    return (t + base) % K.DAY_MS == 0


def _held(ctx: Context, node: A.Held) -> np.ndarray:
    truth = ctx.truth(node.cond)
    # A run of n trues ends here: the running count of trues gained n over the last n candles.
    count = np.concatenate(([0], np.cumsum(truth)))
    out = np.zeros(ctx.size, np.bool_)
    n = node.n
    if n <= ctx.size:
        out[n - 1 :] = count[n:] - count[: ctx.size - n + 1] == n
    return out


TRUTH: dict[type, Callable[[Context, Any], np.ndarray]] = {  # each takes the node type it is keyed by
    A.Held: _held,
    A.DayEnd: _day_end,
    A.DayStart: lambda c, n: KC.day_start_nb(c.array("open_time")),
    A.TfCond: _tf_cond,
    A.Compare: _compare,
    A.Cross: _cross,
    A.Between: _between,
    A.Within: _within,
    A.Streak: _streak,
    A.Candles: _candles,
    A.NewExtreme: _new_extreme,
    A.After: _after,
    A.Pattern: _pattern,
    A.And: _and,
    A.Or: _or,
    A.Not: lambda c, n: ~c.truth(n.item),
    A.TrendEvent: lambda c, n: c.trend(n.event),
}
"""The evaluator of each condition node type: the registry ``Context.truth`` dispatches on."""
