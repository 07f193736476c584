"""Trend lines between two confirmed pivots: the candidates, their checks, the tangent.

The kernels work in "sign space": resistance on ``+high``/``+close``, support on ``-low``/``-close``,
so one code path draws both and the two sides are exact mirrors (negation is exact in floating point).
In sign space a line always falls: anchor 1 is strictly above anchor 2.

Which line is chosen when pivot ``p2`` is confirmed at candle ``t`` (choices of ``docs/trend.md``):
- candidates ``p1`` are confirmed pivots with ``lo <= p1 <= p2 - min_gap`` (``lo`` folds in the window
  and "after the last break") whose anchor is strictly beyond ``p2``'s: equal anchors make no line;
- the line must not be below any close on ``(p1, t]`` (a close exactly on it is allowed);
- touches are candles of ``[p1, t]`` whose high (low) is within ``tol`` of the line, on either side;
  both anchors count, so the default ``min_touches = 2`` asks for nothing more than the anchors;
- among those that pass, the lowest slope in sign space (the tangent), the older ``p1`` on a tie.

Example:
    >>> import numpy as np
    >>> line_at(10.0, 3, -0.5, 7)
    8.0
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, nogil=True, inline="always")
def line_at(price1: float, p1: int, slope: float, t: int) -> float:
    """The value at candle ``t`` of the line through ``(p1, price1)`` with ``slope`` per candle.

    Example:
        >>> line_at(1.0, 0, 0.25, 4)
        2.0
    """
    return price1 + slope * (t - p1)


@njit(cache=True, nogil=True)
def line_fits_nb(
    a: np.ndarray, close: np.ndarray, p1: int, p2: int, t: int, sign: float, tol: float, min_touches: int
) -> bool:
    """Whether the line ``p1 -> p2`` on ``sign * a`` stays beyond every close and has enough touches.

    Example:
        >>> import numpy as np
        >>> high = np.array([5.0, 3.0, 4.0, 3.0]); close = high - 1.0
        >>> line_fits_nb(high, close, 0, 2, 3, 1.0, 0.0, 2), line_fits_nb(high, close, 0, 2, 3, 1.0, 0.0, 3)
        (True, False)
    """
    price1 = sign * a[p1]
    price2 = sign * a[p2]
    slope = (price2 - price1) / (p2 - p1)
    touches = 2
    for i in range(p1 + 1, t + 1):
        # At anchor 2 the exact pivot price, not the interpolation, so rounding cannot drop it.
        value = price2 if i == p2 else line_at(price1, p1, slope, i)
        if sign * close[i] > value:
            return False
        if i != p2 and abs(sign * a[i] - value) <= tol:
            touches += 1
    return touches >= min_touches


@njit(cache=True, nogil=True)
def best_anchor_nb(
    a: np.ndarray,
    close: np.ndarray,
    pivots: np.ndarray,
    p2: int,
    t: int,
    lo: int,
    min_gap: int,
    sign: float,
    tol: float,
    min_touches: int,
) -> int:
    """Anchor 1 of the tangent line ending at pivot ``p2`` confirmed at ``t``, or -1 if none fits.

    ``pivots`` holds the confirmed pivots of this side in increasing order (older ones may be
    included; those before ``lo`` are skipped).

    Example:
        >>> import numpy as np
        >>> high = np.array([6.0, 1.0, 5.0, 1.0, 4.0, 1.0])
        >>> best_anchor_nb(high, high - 2.0, np.array([0, 2, 4]), 4, 5, 0, 2, 1.0, 0.0, 2)
        0
    """
    price2 = sign * a[p2]
    tried_slope = -np.inf
    tried_p1 = -1
    # Candidates are tried from the lowest slope up, so the first that fits is the tangent; each pass
    # finds the next (slope, p1) after the last one tried, without allocating.
    while True:
        best_slope = np.inf
        best_p1 = -1
        for j in range(pivots.shape[0]):
            p1 = pivots[j]
            if p1 < lo or p1 > p2 - min_gap or sign * a[p1] <= price2:
                continue
            slope = (price2 - sign * a[p1]) / (p2 - p1)
            after = slope > tried_slope or (slope == tried_slope and p1 > tried_p1)
            if after and (slope < best_slope or (slope == best_slope and p1 < best_p1)):
                best_slope = slope
                best_p1 = p1
        if best_p1 < 0:
            return -1
        if line_fits_nb(a, close, best_p1, p2, t, sign, tol, min_touches):
            return best_p1
        tried_slope = best_slope
        tried_p1 = best_p1
