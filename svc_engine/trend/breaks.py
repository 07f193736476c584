"""The per-candle state machine of the detector: expiry, breaks, returns to trend, line building.

At each candle ``t``, in the contract's order: lines and pending retests that outlived ``window``
expire; (1) a close beyond an active line by ``break_tol`` ATR breaks it; (2) a pending retest either
fires, is cancelled by a close back through the line, or waits; (3) pivots confirmed at ``t`` may
draw a new line. Only candles ``<= t`` are read at ``t``, which is why the detector is look-ahead free.

Each signal is one row of an int64 record array with the columns named in ``RECORD_FIELDS``; side 0
is resistance (``way`` +1, ``BUY``), side 1 support (``way`` -1, ``SELL``); missing anchors are -1.

Example:
    >>> import numpy as np
    >>> close = np.ones(40); atr = np.zeros(40)
    >>> detect_nb(close, close, close, atr, 10, 5, 5, 199, 2, 0.1, 0.0, 0.2, 2, 20).shape
    (0, 8)
"""

from __future__ import annotations

import numpy as np
from numba import njit

from svc_engine.trend.lines import best_anchor_nb, line_at
from svc_engine.trend.pivots import is_pivot_nb

RECORD_FIELDS: tuple[str, ...] = (
    "index",
    "way",
    "is_return",
    "break_index",
    "line_p1",
    "line_p2",
    "other_p1",
    "other_p2",
)
"""Columns of the record array returned by ``detect_nb``."""

# Rows of the detector's int64 state, one column per side; -1 where nothing is set.
FIRST, COUNT_PIV, LINE_P1, LINE_P2, LAST_BREAK, RETEST_BREAK, RETEST_P1, RETEST_P2, START_P1, START_P2 = (
    range(10)
)
STATE_ROWS = 10


@njit(cache=True, nogil=True)
def detect_nb(
    high: np.ndarray,
    low: np.ndarray,
    close: np.ndarray,
    atr: np.ndarray,
    left: int,
    right: int,
    min_gap: int,
    window: int,
    min_touches: int,
    touch_tol: float,
    break_tol: float,
    retest_tol: float,
    retest_min: int,
    retest_max: int,
) -> np.ndarray:
    """Every signal of the series as a (k, 8) int64 record array (see ``RECORD_FIELDS``).

    ``atr`` is NaN where undefined; every tolerance is 0 there.

    Example:
        >>> import numpy as np
        >>> h = np.array([5.0, 4.0, 3.0, 2.0]); atr = np.full(4, np.nan)
        >>> detect_nb(h, h - 1, h - 0.5, atr, 1, 1, 1, 10, 2, 0.1, 0.0, 0.2, 2, 20).tolist()
        []
    """
    n = close.shape[0]
    params = (
        left,
        right,
        min_gap,
        window,
        min_touches,
        touch_tol,
        break_tol,
        retest_tol,
        retest_min,
        retest_max,
    )
    # Confirmed pivots per side in increasing order; those older than the window are skipped for
    # good by advancing ``first``. np.empty only touches the pages that get written.
    pivots = np.empty((2, max(n, 1)), dtype=np.int64)
    state = np.full((STATE_ROWS, 2), -1, dtype=np.int64)
    state[FIRST] = 0
    state[COUNT_PIV] = 0
    # Anchor-1 price and slope in sign space of the active line (0) and the pending retest's line (1).
    coef = np.zeros((2, 2, 2))
    out = np.empty((64, 8), dtype=np.int64)
    count = 0
    t = 0
    while True:
        # The scan stops when `out` may lack room for the next candle's signals, and `out` grows
        # here: re-binding an array inside the per-candle loop costs reference counting on every
        # candle (some 35 ns, two thirds of the detector's time when it grew inside).
        t, count = _scan(high, low, close, atr, params, t, out, count, pivots, state, coef)
        if t >= n:
            return out[:count].copy()
        bigger = np.empty((2 * out.shape[0], 8), dtype=np.int64)
        bigger[:count] = out[:count]
        out = bigger


@njit(cache=True, nogil=True)
def _scan(
    high: np.ndarray,
    low: np.ndarray,
    close: np.ndarray,
    atr: np.ndarray,
    params: tuple[int, int, int, int, int, float, float, float, int, int],
    begin: int,
    out: np.ndarray,
    count: int,
    pivots: np.ndarray,
    state: np.ndarray,
    coef: np.ndarray,
) -> tuple[int, int]:
    """The candles from ``begin`` on, until the end or until ``out`` has room for fewer than the
    four signals one candle can give (a break and a return per side): (next candle, signals)."""
    left, right, min_gap, window, min_touches, touch_tol, break_tol, retest_tol, retest_min, retest_max = (
        params
    )
    first, count_piv, line_p1, line_p2 = state[FIRST], state[COUNT_PIV], state[LINE_P1], state[LINE_P2]
    last_break, retest_break = state[LAST_BREAK], state[RETEST_BREAK]
    retest_p1, retest_p2 = state[RETEST_P1], state[RETEST_P2]
    # The other side's line reported with a signal is the one active when candle t opened.
    start_p1, start_p2 = state[START_P1], state[START_P2]
    line_c, retest_c = coef[0], coef[1]
    n = close.shape[0]
    for t in range(begin, n):
        if count + 4 > out.shape[0]:
            return t, count
        unit = 0.0 if np.isnan(atr[t]) else atr[t]
        for s in range(2):
            if line_p1[s] >= 0 and t - line_p1[s] > window:
                line_p1[s] = -1
                line_p2[s] = -1
            if retest_break[s] >= 0 and (t - retest_break[s] > retest_max or t - retest_p1[s] > window):
                retest_break[s] = -1
            start_p1[s] = line_p1[s]
            start_p2[s] = line_p2[s]
        for s in range(2):
            if line_p1[s] >= 0:
                sign = 1.0 - 2.0 * s
                value = line_at(line_c[s, 0], line_p1[s], line_c[s, 1], t)
                if sign * close[t] > value + break_tol * unit:
                    _emit(out, count, t, s, 0, t, line_p1[s], line_p2[s], start_p1[1 - s], start_p2[1 - s])
                    count += 1
                    retest_break[s] = t
                    retest_p1[s] = line_p1[s]
                    retest_p2[s] = line_p2[s]
                    retest_c[s, 0] = line_c[s, 0]
                    retest_c[s, 1] = line_c[s, 1]
                    last_break[s] = t
                    line_p1[s] = -1
                    line_p2[s] = -1
        for s in range(2):
            b = retest_break[s]
            if b >= 0 and b < t:
                # Scalars, not arrays, are picked per side: picking an array costs a reference count.
                wick = low[t] if s == 0 else -high[t]
                sign = 1.0 - 2.0 * s
                value = line_at(retest_c[s, 0], retest_p1[s], retest_c[s, 1], t)
                if sign * close[t] <= value:
                    retest_break[s] = -1
                elif t - b >= retest_min and wick <= value + retest_tol * unit:
                    _emit(
                        out, count, t, s, 1, b, retest_p1[s], retest_p2[s], start_p1[1 - s], start_p2[1 - s]
                    )
                    count += 1
                    retest_break[s] = -1
        p2 = t - right
        if p2 >= left:
            tol = touch_tol * unit
            if is_pivot_nb(high, p2, left, right, 1.0):
                _new_pivot(
                    high,
                    close,
                    0,
                    p2,
                    t,
                    window,
                    min_gap,
                    tol,
                    min_touches,
                    pivots,
                    first,
                    count_piv,
                    last_break,
                    line_p1,
                    line_p2,
                    line_c,
                )
            if is_pivot_nb(low, p2, left, right, -1.0):
                _new_pivot(
                    low,
                    close,
                    1,
                    p2,
                    t,
                    window,
                    min_gap,
                    tol,
                    min_touches,
                    pivots,
                    first,
                    count_piv,
                    last_break,
                    line_p1,
                    line_p2,
                    line_c,
                )
    return n, count


@njit(cache=True, nogil=True)
def _new_pivot(
    a: np.ndarray,
    close: np.ndarray,
    s: int,
    p2: int,
    t: int,
    window: int,
    min_gap: int,
    tol: float,
    min_touches: int,
    pivots: np.ndarray,
    first: np.ndarray,
    count_piv: np.ndarray,
    last_break: np.ndarray,
    line_p1: np.ndarray,
    line_p2: np.ndarray,
    line_c: np.ndarray,
) -> None:
    # Record pivot p2 of side s, forget pivots older than the window, and draw the tangent if one fits.
    sign = 1.0 - 2.0 * s
    pivots[s, count_piv[s]] = p2
    count_piv[s] += 1
    while first[s] < count_piv[s] and pivots[s, first[s]] < t - window:
        first[s] += 1
    lo = max(t - window, last_break[s] + 1)
    p1 = best_anchor_nb(
        a, close, pivots[s, first[s] : count_piv[s]], p2, t, lo, min_gap, sign, tol, min_touches
    )
    if p1 >= 0:
        line_p1[s] = p1
        line_p2[s] = p2
        line_c[s, 0] = sign * a[p1]
        line_c[s, 1] = (sign * a[p2] - line_c[s, 0]) / (p2 - p1)


@njit(cache=True, nogil=True)
def _emit(
    out: np.ndarray, count: int, t: int, side: int, is_return: int, b: int, p1: int, p2: int, o1: int, o2: int
) -> None:
    out[count, 0] = t
    out[count, 1] = 1 - 2 * side
    out[count, 2] = is_return
    out[count, 3] = b
    out[count, 4] = p1
    out[count, 5] = p2
    out[count, 6] = o1
    out[count, 7] = o2
