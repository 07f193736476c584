"""Equity at every candle close and the drawdown below its running peak.

Example:
    >>> drawdown_nb(np.array([100.0, 120.0, 90.0]), 100.0)[1]
    25.0
"""

from __future__ import annotations

import numpy as np
from numba import njit

from svc_engine.sim.kernels.money import mark_coeffs, mark_from


@njit(cache=True, nogil=True)
def _dd_segment(eq, dd, start, stop, peak, worst):
    """Drawdown % of ``eq[start:stop]`` into ``dd`` from the running peak; the reciprocal of the
    peak is kept because the peak changes rarely and a division per candle is the cost here."""
    scale = 100.0 / peak
    for k in range(start, stop):
        v = eq[k]
        if v > peak:
            peak = v
            scale = 100.0 / peak
        d = (peak - v) * scale
        dd[k] = d
        if d > worst:
            worst = d
    return peak, worst


@njit(cache=True, nogil=True)
def flat_segment_nb(eq, dd, start, stop, cash, peak, worst):
    """A stretch with no open position: equity is the cash, so its drawdown is one number."""
    if stop <= start:
        return peak, worst
    peak = max(peak, cash)
    d = (peak - cash) * (100.0 / peak)
    eq[start:stop] = cash
    if dd is not None:
        dd[start:stop] = d
    return peak, max(worst, d)


@njit(cache=True, nogil=True)
def trade_stretch_nb(eq, dd, c, trade, pos, cash, peak, worst, comm, lev, hs):
    """The equity (and drawdown %, when ``dd`` is given) from candle ``pos`` to the exit candle
    of ``trade`` (exclusive): the cash until its fill, then the cash less its stake plus its mark
    at each close; returns (peak, worst drawdown %). The one loop of `equity_drawdown_nb` and
    `svc_engine.sim.perf_fused.equity_stats_nb`."""
    i, j, stake = trade.fill_candle, trade.exit_candle, trade.stake
    a0, a1 = mark_coeffs(trade.side, trade.entry, comm, hs)
    peak, worst = flat_segment_nb(eq, dd, pos, i, cash, peak, worst)
    scale = 100.0 / peak
    base = cash - stake
    for k in range(i, j):
        v = base + mark_from(stake, a0, a1, c[k], lev)
        eq[k] = v
        if v > peak:
            peak = v
            scale = 100.0 / peak
        d = (peak - v) * scale
        if dd is not None:
            dd[k] = d
        worst = max(worst, d)
    return peak, worst


@njit(cache=True, nogil=True)
def equity_drawdown_nb(c, trades, initial, comm, lev, hs, eq, dd=None):
    """Equity at every candle close after that candle's events, for sequential (non-overlapping)
    trades of one coin (realised balance, minus the open stake, plus its marked value), and the
    drawdown %, into ``eq`` and ``dd`` (when given: `drawdown_nb` gives the same floats later) in
    one pass; returns the max drawdown %. The outputs come from the caller: NumPy's large
    allocations are cheaper to fault in."""
    cash, peak, worst, pos = initial, initial, 0.0, 0
    for n in range(trades.shape[0]):
        j = trades[n].exit_candle
        peak, worst = trade_stretch_nb(eq, dd, c, trades[n], pos, cash, peak, worst, comm, lev, hs)
        cash += trades[n].profit
        pos = j
        # a reversed trade's successor fills at the open where it exits: candle j's close marks
        # the new position, so the cash between the two is no equity of any close
        if n + 1 == trades.shape[0] or trades[n + 1].fill_candle != j:
            peak, worst = flat_segment_nb(eq, dd, j, j + 1, cash, peak, worst)
            pos = j + 1
    peak, worst = flat_segment_nb(eq, dd, pos, eq.shape[0], cash, peak, worst)
    return worst


@njit(cache=True, nogil=True)
def drawdown_nb(eq, initial):
    """Drawdown in percent below the running peak (which starts at ``initial``), and its max.

    Example:
        >>> drawdown_nb(np.array([100.0, 120.0, 90.0]), 100.0)[1]
        25.0
    """
    dd = np.empty(eq.shape[0])
    _, worst = _dd_segment(eq, dd, 0, eq.shape[0], initial, 0.0)
    return dd, worst


@njit(cache=True, nogil=True)
def max_drawdown_nb(eq, initial):
    """The largest drawdown in percent (peak starting at ``initial``).

    Example:
        >>> max_drawdown_nb(np.array([100.0, 120.0, 90.0]), 100.0)
        25.0
    """
    peak, worst = initial, 0.0
    scale = 100.0 / peak
    for k in range(eq.shape[0]):
        v = eq[k]
        if v > peak:
            peak = v
            scale = 100.0 / peak
        worst = max(worst, (peak - v) * scale)
    return worst
