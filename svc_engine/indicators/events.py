"""Events over series: where one crosses another, and how long a condition has held.
Same contract as `svc_engine.indicators.core` (a mask or counts instead of floats).

Example:
    >>> import numpy as np
    >>> cross_nb(np.array([1.0, 3.0]), np.array([2.0, 2.0]), True).tolist()
    [False, True]
"""

from __future__ import annotations

import numpy as np
from numba import njit

from svc_engine.scratch import huge_nb


@njit(cache=True, nogil=True)
def cross_nb(a: np.ndarray, b: np.ndarray, above: bool) -> np.ndarray:
    """Where `a` crosses `b`: from at-or-below to above (``above``), or from at-or-above to below.
    Comparisons with NaN are false, as in NumPy.

    >>> cross_nb(np.array([1.0, 3.0, 1.0]), np.array([2.0, 2.0, 2.0]), True).tolist()
    [False, True, False]
    """
    out = _bools(a.size)
    # `&`, not `and`: both sides are read, no branch on a coin toss per candle, vector instructions.
    if above:
        for i in range(1, a.size):
            out[i] = (a[i] > b[i]) & (a[i - 1] <= b[i - 1])
    else:
        for i in range(1, a.size):
            out[i] = (a[i] < b[i]) & (a[i - 1] >= b[i - 1])
    return out


@njit(cache=True, nogil=True)
def cross_level_nb(a: np.ndarray, level: float, above: bool) -> np.ndarray:
    """``cross_nb`` of ``a`` against a constant ``level`` (no array of the level needed).

    >>> cross_level_nb(np.array([1.0, 3.0, 1.0]), 2.0, True).tolist()
    [False, True, False]
    """
    out = _bools(a.size)
    if above:
        for i in range(1, a.size):
            out[i] = (a[i] > level) & (a[i - 1] <= level)
    else:
        for i in range(1, a.size):
            out[i] = (a[i] < level) & (a[i - 1] >= level)
    return out


@njit(cache=True, nogil=True)
def _bools(n: int) -> np.ndarray:
    # Every value after the first is written by the caller.
    out = huge_nb(np.empty(n, np.bool_))
    if n:
        out[0] = False
    return out


@njit(cache=True, nogil=True)
def run_length_nb(mask: np.ndarray) -> np.ndarray:
    """How many candles in a row, ending at each index, the mask has been true.

    >>> run_length_nb(np.array([True, True, False, True])).tolist()
    [1, 2, 0, 1]
    """
    out = huge_nb(np.empty(mask.size, np.int64))
    run = 0
    for i in range(mask.size):
        run = run + 1 if mask[i] else 0
        out[i] = run
    return out
