"""Warm-up of a strategy tree: `lookback`, the first candle where a node is defined, and `settle`,
the first candle from which its values no longer depend on where the series starts.

Example:
    >>> from svc_engine.strategy import ast as A
    >>> lookback(A.Ind("sma", (20,))), settle(A.Ind("sma", (20,)))
    (19, 19)
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import NamedTuple

from svc_engine.strategy import ast as A
from svc_engine.strategy.vocab import PATTERNS, SPECS, WHOLE_HISTORY, wilder_settle

# pivot (10 candles left, 5 right).
TREND_LOOKBACK = 15
# Candles after which trend-line events no longer depend on where the series starts: the break
# tolerance's ATR(14) settles (Wilder, 100/alpha), then lines live at most `window` (199) candles
# after pivots confirmed `left + right` (15) candles late, and "after the last break" chains a few
# lines back (three spans), plus the longest retest wait (20).
TREND_SETTLE = 14 + 100 * 14 + 3 * (199 + 15) + 20


@functools.lru_cache(maxsize=65536)  # the live evaluator asks it of every program at every close
def lookback(node: A.Node) -> int:
    """Index of the first candle where `node` is defined (0 = from the first candle).

    >>> from svc_engine.strategy import ast as A
    >>> lookback(A.Cross("above", A.Ind("rsi", (14,)), A.Num(30.0)))
    15
    """
    return _reach(node, _LOOKBACK)


@functools.lru_cache(maxsize=65536)
def settle(node: A.Node) -> int:
    """Index from which `node`, evaluated on a series that starts anywhere earlier, has the whole
    history's values bit for bit: `lookback` plus the stabilisation of every recursive smoothing on
    the way (``ceil(100 / alpha)`` each, composed along sources).

    >>> from svc_engine.strategy import ast as A
    >>> settle(A.Cross("above", A.Ind("rsi", (14,)), A.Num(30.0)))
    1415
    >>> settle(A.Ind("sma", (20,), "", A.Ind("rsi", (14,))))
    1433
    """
    return _reach(node, _SETTLE)


class _Reach(NamedTuple):
    """What one warm-up measure counts for the leaves: an indicator, trend events, an ATR exit."""

    indicator: Callable[[A.Ind], int]
    trend: int
    atr_target: Callable[[int], int]


_LOOKBACK = _Reach(lambda n: SPECS[n.name].lookback(n.params, n.output), TREND_LOOKBACK, lambda p: p)
_SETTLE = _Reach(
    lambda n: SPECS[n.name].settle(n.params, n.output), TREND_SETTLE, lambda p: p + wilder_settle(p)
)


def _reach(node: A.Node, m: _Reach) -> int:
    # The same composition for both warm-ups: sources add up, lags and runs add their length,
    # a cross needs one candle more, a condition "after" another needs the other one candle earlier.
    if isinstance(node, A.Num | A.Field):
        return 0
    if isinstance(node, A.Ind):
        own = m.indicator(node) if node.name in SPECS else 0
        return own + (_reach(node.source, m) if node.source is not None else 0)
    if isinstance(node, A.Lag):
        return _reach(node.expr, m) + node.n
    if isinstance(node, A.Cross):
        return max(_reach(node.left, m), _reach(node.right, m)) + 1
    if isinstance(node, A.Streak | A.NewExtreme):
        return _reach(node.expr, m) + node.n
    if isinstance(node, A.Held):
        return _reach(node.cond, m) + node.n - 1
    if isinstance(node, A.Candles):
        return node.n - 1
    if isinstance(node, A.TrendEvent):
        return m.trend
    if isinstance(node, A.DayStart):
        return 1  # the first candle of a series is not known to open its day
    if isinstance(node, A.Pattern):
        return PATTERNS[node.name].lookback
    if isinstance(node, A.Tf | A.TfCond):
        # Counted in candles of the higher timeframe (the values are NaN until then); a restart
        # must rebuild the same higher candles, so it reads the whole history.
        inner = node.expr if isinstance(node, A.Tf) else node.cond
        return WHOLE_HISTORY if m is _SETTLE else _reach(inner, m) + 1
    if isinstance(node, A.After):
        return max(_reach(node.cond, m), _reach(node.prior, m) + node.window)
    if isinstance(node, A.AtrTarget):
        return m.atr_target(node.period)
    if isinstance(node, A.Trailing):
        return m.atr_target(node.atr_period) if node.atr_mult else 0
    return max((_reach(c, m) for c in node.children()), default=0)
