"""Exact floating-point building blocks of the indicator kernels: error-free sums and products,
so window sums restart anywhere to the same floats, and the first defined value of a series.
Same contract as `svc_engine.indicators.core`.

Example:
    >>> import numpy as np
    >>> two_sum_nb(1e16, 1.0)
    (1e+16, 1.0)
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def first_valid_nb(x: np.ndarray) -> int:
    """Index of the first non-NaN value, -1 if none.

    >>> first_valid_nb(np.array([np.nan, 2.0]))
    1
    """
    for i in range(x.size):
        if not np.isnan(x[i]):
            return i
    return -1


@njit(cache=True, nogil=True)
def two_sum_nb(a: float, b: float) -> tuple[float, float]:
    """``a + b`` rounded and its exact rounding error (Knuth's TwoSum).

    >>> two_sum_nb(1.0, 1e-17)
    (1.0, 1e-17)
    """
    total = a + b
    b_part = total - a
    return total, (a - (total - b_part)) + (b - b_part)


@njit(cache=True, nogil=True)
def two_prod_nb(a: float, b: float) -> tuple[float, float]:
    """``a * b`` rounded and its exact rounding error (Dekker's product, no FMA needed).

    >>> two_prod_nb(0.1, 3.0)
    (0.30000000000000004, -2.7755575615628914e-17)
    """
    product = a * b
    a_hi, a_lo = _split(a)
    b_hi, b_lo = _split(b)
    return product, ((a_hi * b_hi - product) + a_hi * b_lo + a_lo * b_hi) + a_lo * b_lo


@njit(cache=True, nogil=True)
def _split(a: float) -> tuple[float, float]:
    c = 134217729.0 * a  # 2**27 + 1
    hi = c - (c - a)
    return hi, a - hi


@njit(cache=True, nogil=True)
def add_exact_nb(hi: float, lo: float, value: float) -> tuple[float, float]:
    """Add ``value`` to the running sum ``hi + lo``; ``hi`` stays the sum rounded to nearest.

    A running sum keeps every rounding it ever made, so its value at a candle depends on where the
    series starts; ``hi + lo`` holds the window sum exactly (while the summed values span less than
    ~2**50 in magnitude), so ``hi`` depends on the window's values only and a restart anywhere gives
    the same floats, bit for bit.

    >>> add_exact_nb(*add_exact_nb(0.0, 0.0, 0.1), 0.2)[0]
    0.30000000000000004
    """
    total, err = two_sum_nb(hi, value)
    return two_sum_nb(total, lo + err)
