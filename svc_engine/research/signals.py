"""A compiled strategy's signals as the kernels' arrays, without the signal frame.

A sweep runs thousands of combinations on one coin; building each one's signal frame
(``Strategy.evaluate``) and reading it back (``prepare_signals``) would cost more than the
simulation. :func:`strategy_signals` gives the same arrays straight from ``Strategy.signal_arrays``
and, for a strategy with exit rules (docs/exits.md), ``Strategy.rule_arrays``.

Example:
    >>> strategy_signals.__name__
    'strategy_signals'
"""

from __future__ import annotations

from typing import Any

import numpy as np

from svc_engine.sim import nb
from svc_engine.sim.inputs import Signals
from svc_engine.strategy.program import MOVE_COLUMNS


def strategy_signals(
    arrays: tuple[np.ndarray, ...],
    first: int,
    stop: int,
    strategy: Any,
    rules: tuple[np.ndarray | None, np.ndarray] | None = None,
) -> Signals:
    """The kernels' arrays of a compiled strategy's signals (``Strategy.signal_arrays`` over the
    loaded candles, and ``Strategy.rule_arrays`` for a strategy with exit rules) inside rows
    ``[first, stop)``: what ``prepare_signals`` gives for the same signals as a frame
    (``Strategy.evaluate``), without its checks, which such signals pass by construction (one per
    candle, sorted, one side), and without building the frame.

    Example:
        >>> from svc_engine.research.demo import random_walk
        >>> from svc_engine.sim.inputs import Candles, prepare_signals
        >>> from svc_engine.strategy import compile_strategy
        >>> from svc_engine.strategy.compiler import Context
        >>> k = random_walk(300, seed=2)
        >>> c, st = Candles.from_frame(k, timeframe="1h"), compile_strategy("RSI(14) crosses above 40")
        >>> a = strategy_signals(st.signal_arrays(Context(k)), 100, 300, st)
        >>> b = prepare_signals(st.evaluate(k), c, c.slice(100, 300))
        >>> eq = lambda x, y: np.array_equal(x, y, equal_nan=np.asarray(x).dtype.kind == "f")
        >>> same = lambda a, b: all(eq(getattr(a, f), getattr(b, f)) for f in Signals.__slots__)
        >>> same(a, b)
        True
        >>> st = compile_strategy("RSI(14) crosses above 40", "no take profit", "trailing stop 2%",
        ...                       exit_condition="exit when RSI(14) rises above 60 or after 9 candles")
        >>> ctx = Context(k)
        >>> arrays = st.signal_arrays(ctx)
        >>> a = strategy_signals(arrays, 100, 300, st, st.rule_arrays(ctx, arrays[0]))
        >>> b = prepare_signals(st.evaluate(k), c, c.slice(100, 300))
        >>> same(a, b), a.open_levels, int(a.exit_flag.sum()) > 0, a.hold.tolist()[:1]
        (True, True, True, [9])
    """
    if getattr(strategy, "has_rules", False) and rules is None:
        # Exit conditions, market entries, trailing stops and missing TP/SL (docs/exits.md) need
        # their rule arrays: refuse rather than run them as plain limit orders.
        raise ValueError(
            "exit rules need the signal frame or their rule arrays (Strategy.rule_arrays): "
            f"{strategy.describe()!r}"
        )
    idx, limit, tp, sl = arrays
    lo, hi = np.searchsorted(idx, first, "left"), np.searchsorted(idx, stop, "left")
    m = int(hi - lo)
    side = nb.LONG if strategy.position_side == "long" else nb.SHORT
    extra: dict[str, Any] = {}
    if rules is not None:
        fired, raw = rules
        moves = np.array(raw[lo:hi], dtype=np.float64, order="C")  # a copy: fractions of the percents
        for col, name in enumerate(MOVE_COLUMNS):
            if name.endswith("_pct"):
                moves[:, col] = moves[:, col] / 100.0  # as prepare_signals reads the frame's columns
        window = None if fired is None else np.ascontiguousarray(fired[first:stop])
        extra = {
            "exit_flag": window if window is not None and window.any() else np.zeros(0, np.bool_),
            "market": np.full(m, strategy.entry_order == "market", np.bool_),
            "hold": np.full(m, strategy.hold, np.int64),
            "moves": moves,
            "open_levels": True,
        }
    return Signals(
        np.arange(lo, hi, dtype=np.int64),
        (idx[lo:hi] - first).astype(np.int64),
        np.full(m, side, np.int8),
        np.ascontiguousarray(limit[lo:hi], dtype=np.float64),
        np.ascontiguousarray(tp[lo:hi], dtype=np.float64),
        np.ascontiguousarray(sl[lo:hi], dtype=np.float64),
        np.zeros(m, np.bool_),
        **extra,
    )
