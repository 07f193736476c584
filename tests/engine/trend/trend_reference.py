"""A slow, literal reading of ``design/trend-semantics.md`` in plain Python, to check the numba kernel.

Written in price space with each side spelled out (no sign trick, TA-Lib's ATR), so it shares as
little as possible with the product code. Returns the kernel's record tuples
``(index, way, is_return, break_index, line_p1, line_p2, other_p1, other_p2)``.
"""

from __future__ import annotations

import math

import numpy as np
import talib

from svc_engine.trend import TrendParams

BUY, SELL = 1, -1


def reference(high: np.ndarray, low: np.ndarray, close: np.ndarray, p: TrendParams) -> list[tuple]:
    atr = talib.ATR(high, low, close, p.atr_period)
    extreme = {BUY: high, SELL: low}
    pivots: dict[int, list[int]] = {BUY: [], SELL: []}
    active: dict[int, tuple[int, int] | None] = {BUY: None, SELL: None}
    last_break = {BUY: -1, SELL: -1}
    pending: dict[int, tuple[int, int, int] | None] = {BUY: None, SELL: None}
    out: list[tuple] = []

    def value(side: int, p1: int, p2: int, t: int) -> float:
        a = extreme[side]
        if t == p2:
            return float(a[p2])
        return a[p1] + (a[p2] - a[p1]) / (p2 - p1) * (t - p1)

    def beyond(side: int, x: float, y: float) -> bool:  # x strictly on the far side of y
        return x > y if side == BUY else x < y

    for t in range(len(close)):
        unit = 0.0 if math.isnan(atr[t]) else float(atr[t])
        for side in (BUY, SELL):
            if active[side] is not None and t - active[side][0] > p.window:
                active[side] = None
            pend = pending[side]
            if pend is not None and (t - pend[0] > p.retest_max or t - pend[1] > p.window):
                pending[side] = None
        start = dict(active)
        for side in (BUY, SELL):
            if active[side] is None:
                continue
            p1, p2 = active[side]
            if beyond(side, close[t], value(side, p1, p2, t) + side * p.break_tol * unit):
                other = start[-side] or (-1, -1)
                out.append((t, side, 0, t, p1, p2, *other))
                pending[side] = (t, p1, p2)
                last_break[side] = t
                active[side] = None
        for side in (BUY, SELL):
            pend = pending[side]
            if pend is None or pend[0] >= t:
                continue
            b, p1, p2 = pend
            v = value(side, p1, p2, t)
            wick = low[t] if side == BUY else high[t]
            if not beyond(side, close[t], v):
                pending[side] = None
            elif t - b >= p.retest_min and not beyond(side, wick, v + side * p.retest_tol * unit):
                other = start[-side] or (-1, -1)
                out.append((t, side, 1, b, p1, p2, *other))
                pending[side] = None
        piv = t - p.right
        if piv < p.left:
            continue
        for side in (BUY, SELL):
            a = extreme[side]
            before = a[piv - p.left : piv]
            after = a[piv + 1 : t + 1]
            is_pivot = (
                (a[piv] > before.max() and a[piv] >= after.max())
                if side == BUY
                else (a[piv] < before.min() and a[piv] <= after.min())
            )
            if not is_pivot:
                continue
            pivots[side].append(piv)
            chosen = best_line(
                side, piv, t, pivots[side], last_break[side], p, value, close, a, p.touch_tol * unit
            )
            if chosen is not None:
                active[side] = (chosen, piv)
    return out


def best_line(
    side: int,
    p2: int,
    t: int,
    pivots: list[int],
    last_break: int,
    p: TrendParams,
    value,
    close: np.ndarray,
    a: np.ndarray,
    tol: float,
) -> int | None:
    fits: list[tuple[float, int]] = []
    for p1 in pivots:
        if p1 <= last_break or t - p1 > p.window or p2 - p1 < p.min_gap:
            continue
        if not (a[p1] > a[p2] if side == BUY else a[p1] < a[p2]):
            continue
        line = [float(a[p1])] + [value(side, p1, p2, i) for i in range(p1 + 1, t + 1)]
        closes_ok = all(
            close[i] <= line[i - p1] if side == BUY else close[i] >= line[i - p1]
            for i in range(p1 + 1, t + 1)
        )
        touches = sum(abs(a[i] - line[i - p1]) <= tol for i in range(p1, t + 1))
        if closes_ok and touches >= p.min_touches:
            slope = (a[p2] - a[p1]) / (p2 - p1)
            # The tangent: the steepest fall for resistance, the steepest rise for support.
            fits.append((slope if side == BUY else -slope, p1))
    return min(fits)[1] if fits else None
