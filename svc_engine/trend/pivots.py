"""Pivot highs and lows, confirmed ``right`` candles after they happen.

Candle ``p`` is a pivot high when ``high[p]`` is strictly above the highs of the ``left`` candles
before it and not below the highs of the ``right`` candles after it; it is known at ``p + right``.
A pivot low mirrors this on ``low``. Candles with fewer than ``left`` candles before them are never
pivots. The kernels take a ``sign``: +1 works on highs, -1 on lows (``-low`` is a high).

Example:
    >>> import numpy as np
    >>> high = np.array([1.0, 2.0, 5.0, 3.0, 2.0]); low = high - 1.0
    >>> flags = pivot_flags_nb(high, low, 2, 2)
    >>> flags[0].nonzero()[0].tolist(), flags[1].nonzero()[0].tolist()
    ([2], [])
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def is_pivot_nb(a: np.ndarray, p: int, left: int, right: int, sign: float) -> bool:
    """Whether ``p`` is a pivot of ``sign * a`` (needs ``a`` up to ``p + right``).

    Example:
        >>> import numpy as np
        >>> is_pivot_nb(np.array([1.0, 3.0, 2.0]), 1, 1, 1, 1.0)
        True
    """
    if p < left or p + right >= a.shape[0]:
        return False
    x = sign * a[p]
    # Walking outwards from p finds the usual disqualifier within a candle or two.
    for j in range(p - 1, p - left - 1, -1):
        if sign * a[j] >= x:
            return False
    for j in range(p + 1, p + right + 1):  # noqa: SIM110 (a generator in all() is slow under numba)
        if sign * a[j] > x:
            return False
    return True


@njit(cache=True, nogil=True)
def pivot_flags_nb(high: np.ndarray, low: np.ndarray, left: int, right: int) -> np.ndarray:
    """A (2, n) uint8 array: row 0 marks pivot highs, row 1 pivot lows, at the pivot candle.

    Example:
        >>> import numpy as np
        >>> low = np.array([5.0, 4.0, 1.0, 3.0, 4.0])
        >>> pivot_flags_nb(low + 1.0, low, 2, 2)[1].tolist()
        [0, 0, 1, 0, 0]
    """
    n = high.shape[0]
    out = np.zeros((2, n), dtype=np.uint8)
    for p in range(left, n - right):
        out[0, p] = is_pivot_nb(high, p, left, right, 1.0)
        out[1, p] = is_pivot_nb(low, p, left, right, -1.0)
    return out
