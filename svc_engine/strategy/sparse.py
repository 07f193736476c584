"""Conditions at chosen candles only. Once the first parts of an AND leave few candles that can still
fire (``RSI(14) crosses above 30`` holds on about 1 candle in 90), a comparison after it is read at
those candles alone: its operands are indexed there, a simple average is summed there
(`svc_engine.indicators.averages.sma_at_nb`), so is a Bollinger band, a MACD histogram is its line
minus its signal there, and nothing else is
computed over the whole series. The bools are the ones the whole-series evaluation gives at
those candles, so the signals do not change.

Example:
    >>> import polars as pl
    >>> from svc_engine.strategy.compiler import Context
    >>> k = pl.DataFrame({"open_time": [0, 1, 2], "open": [1.0, 2.0, 3.0], "high": [1.0, 2.0, 3.0],
    ...     "low": [1.0, 2.0, 3.0], "close": [1.0, 3.0, 2.0], "volume": [1.0, 5.0, 2.0]})
    >>> node = A.Compare(">", A.Field("volume"), A.Ind("sma", (2,), "", A.Field("volume")))
    >>> truth_at(Context(k), node, np.array([1, 2])).tolist()
    [True, False]
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

import numpy as np

from svc_engine.indicators.averages import sma_at_nb
from svc_engine.indicators.ranges import rolling_std_at_nb
from svc_engine.strategy import ast as A
from svc_engine.strategy.values import period_of, source_of

if TYPE_CHECKING:
    from svc_engine.strategy.context import Context

#: Read a condition at the candidates when they are at most one in ``SPARSE`` candles: past that,
#: gathering scattered values costs more than one pass over contiguous arrays.
SPARSE = 16
POINTWISE = (A.Compare, A.Between, A.Within)


def compare_arrays(op: str, left: np.ndarray | float, right: np.ndarray | float) -> Any:
    """``left op right`` for a comparison's ``op`` (``>``, ``<``, ``>=``, ``<=``, ``==``).

    >>> compare_arrays(">=", np.array([1.0, 2.0]), 2.0).tolist()
    [False, True]
    """
    if op == ">":
        return left > right
    if op == "<":
        return left < right
    if op == ">=":
        return left >= right
    if op == "<=":
        return left <= right
    return left == right


def pointwise(node: A.Node) -> bool:
    """Whether ``node`` is a condition of each candle's values alone, so `truth_at` can read it.

    >>> pointwise(A.Compare(">", A.Field("close"), A.Num(1.0))), pointwise(A.Candles("green", 2))
    (True, False)
    """
    return isinstance(node, POINTWISE)


def truth_at(ctx: Context, node: A.Node, at: np.ndarray) -> np.ndarray:
    """``ctx.truth(node)[at]`` for a `pointwise` node, computing only what those candles need."""
    with np.errstate(invalid="ignore"):
        if isinstance(node, A.Compare):
            held = compare_arrays(node.op, _value_at(ctx, node.left, at), _value_at(ctx, node.right, at))
        elif isinstance(node, A.Between):
            x = _value_at(ctx, node.expr, at)
            held = (x >= _value_at(ctx, node.low, at)) & (x <= _value_at(ctx, node.high, at))
        else:
            assert isinstance(node, A.Within)
            x, ref = _value_at(ctx, node.expr, at), _value_at(ctx, node.ref, at)
            held = np.abs(x - ref) <= (node.pct / 100.0) * np.abs(ref)
    return np.broadcast_to(held, at.shape)


def _value_at(ctx: Context, node: A.Node, at: np.ndarray) -> np.ndarray | float:
    if isinstance(node, A.Num):
        return float(node.value)
    cached = ctx.cache.get(node)
    if cached is not None:
        return cached[at]
    if isinstance(node, A.Field):
        return ctx.column(node.name)[at]
    if isinstance(node, A.Ind) and node.name == "sma" and at.size * period_of(node) <= ctx.size:
        return sma_at_nb(source_of(ctx, node), at, period_of(node))
    if (
        isinstance(node, A.Ind)
        and node.name == "bb"
        and node.output in _BANDS
        and at.size * period_of(node) <= ctx.size
    ):
        return _band_at(ctx, node, at)
    if isinstance(node, A.Ind) and node.name == "macd" and node.output == "histogram":
        return _histogram_at(ctx, node, at)
    return ctx.values(node)[at]


_BANDS = ("upper", "middle", "lower")


def _histogram_at(ctx: Context, node: A.Ind, at: np.ndarray) -> np.ndarray:
    """The MACD histogram at the candles ``at``: line minus signal there, the subtraction
    `values._macd` makes at each candle (the same floats), without a third array of the series."""
    line = ctx.values(replace(node, output="line"))
    return line[at] - ctx.values(replace(node, output="signal"))[at]


def _band_at(ctx: Context, node: A.Ind, at: np.ndarray) -> np.ndarray:
    """A Bollinger band at the candles ``at``: the operations of `values._bollinger` there only."""
    n, mult = int(node.params[0]), float(node.params[1])
    close = ctx.array("close")
    mid = sma_at_nb(close, at, n)
    if node.output == "middle":
        return mid
    sd = rolling_std_at_nb(close, mid, at, n)
    return mid + mult * sd if node.output == "upper" else mid - mult * sd
