"""Moving averages: simple, exponential (seeded as TA-Lib seeds them) and linearly weighted.
Same contract as `svc_engine.indicators.core`.

Example:
    >>> import numpy as np
    >>> sma_nb(np.array([1.0, 2.0, 3.0, 4.0]), 2).tolist()
    [nan, 1.5, 2.5, 3.5]
"""

from __future__ import annotations

import numpy as np
from numba import njit

from svc_engine.indicators.lanes import STABILISE, ema_from_nb, sma_from_nb
from svc_engine.indicators.lanes_macd import macd_pair_from_nb
from svc_engine.indicators.numeric import add_exact_nb, first_valid_nb, two_prod_nb, two_sum_nb
from svc_engine.scratch import empty_nb, nans_nb


@njit(cache=True, nogil=True)
def sma_nb(x: np.ndarray, n: int, out: np.ndarray | None = None) -> np.ndarray:
    """Simple moving average: the window sum, rounded once, over ``n`` (TA-Lib SMA to round-off;
    TA-Lib's naive running sum drifts with the series' start, this one does not). A window holding
    a NaN (a missing volume) is NaN; later windows recover, where TA-Lib would stay NaN for good.
    ``out`` (an array of ``x.size``, returned) receives the values instead of a fresh array.

    >>> sma_nb(np.array([1.0, 2.0, 3.0, np.nan, 5.0, 6.0]), 2).tolist()
    [nan, 1.5, 2.5, nan, nan, 5.5]
    """
    res = empty_nb(x.size) if out is None else out  # every value is written
    start = first_valid_nb(x)
    if start < 0 or x.size - start < n:
        res[:] = np.nan
        return res
    res[: start + n - 1] = np.nan
    sma_from_nb(x, res, start + n - 1, n)
    return res


@njit(cache=True, nogil=True)
def sma_at_nb(x: np.ndarray, at: np.ndarray, n: int) -> np.ndarray:
    """``sma_nb(x, n)[at]`` without the other candles: each window's exact sum, rounded once, is the
    one the whole pass holds there (see `add_exact_nb`), so the values are the same floats. For a few
    candles of a long series (an AND whose first parts left few candidates).

    >>> sma_at_nb(np.array([1.0, 2.0, 3.0, np.nan, 5.0, 6.0]), np.array([0, 2, 4, 5]), 2).tolist()
    [nan, 2.5, nan, 5.5]
    """
    start = first_valid_nb(x)
    out = np.empty(at.size)
    hi, lo, missing = np.empty(_AT_GROUP), np.empty(_AT_GROUP), np.empty(_AT_GROUP)
    # Groups of candles side by side, each one's window summed in order with `add_exact_nb` as
    # `window_open_nb` sums it (the same floats): the groups' chains overlap instead of waiting
    # for one another.
    for g in range(0, at.size, _AT_GROUP):
        rows = at[g : g + _AT_GROUP]
        size = rows.size
        hi[:size], lo[:size], missing[:size] = 0.0, 0.0, 0.0
        for j in range(n):
            for t in range(size):
                i = rows[t] - n + 1 + j
                value = x[i] if i >= 0 else 0.0  # before the series: a window refused below
                total, err = two_sum_nb(hi[t], value)
                add_hi, add_lo = two_sum_nb(total, lo[t] + err)
                gap = np.isnan(value)  # a NaN is counted, not summed (chosen, not branched)
                hi[t] = hi[t] if gap else add_hi
                lo[t] = lo[t] if gap else add_lo
                missing[t] = missing[t] + 1.0 if gap else missing[t]
        for t in range(size):
            defined = start >= 0 and rows[t] >= start + n - 1 and missing[t] == 0.0
            out[g + t] = hi[t] / n if defined else np.nan
    return out


_AT_GROUP = 16  # candles summed side by side in `sma_at_nb`


@njit(cache=True, nogil=True)
def ema_nb(x: np.ndarray, n: int, out: np.ndarray | None = None) -> np.ndarray:
    """Exponential moving average with factor ``2 / (n + 1)``, seeded by the mean of the first ``n``
    valid values (TA-Lib EMA); into ``out`` when given (as `sma_nb`).

    >>> ema_nb(np.array([1.0, 2.0, 3.0, 4.0]), 2).tolist()
    [nan, 1.5, 2.5, 3.5]
    """
    return ema_seeded_nb(x, n, 2.0 / (n + 1), n - 1, out)


@njit(cache=True, nogil=True)
def ema_seeded_nb(
    x: np.ndarray, n: int, k: float, seed_offset: int, out: np.ndarray | None = None
) -> np.ndarray:
    """Exponential average with factor ``k``, seeded at ``first valid + seed_offset`` by the mean of
    the ``n`` values ending there (TA-Lib's seeding; MACD seeds its fast EMA late); into ``out``
    when given (as `sma_nb`).

    >>> ema_seeded_nb(np.array([1.0, 2.0, 3.0, 4.0]), 2, 2.0 / 3.0, 1).tolist()
    [nan, 1.5, 2.5, 3.5]
    """
    res = empty_nb(x.size) if out is None else out  # every value is written
    start = first_valid_nb(x)
    seed = start + seed_offset
    if start < 0 or seed >= x.size or seed - n + 1 < start:
        res[:] = np.nan
        return res
    res[:seed] = np.nan
    total = 0.0
    for i in range(seed - n + 1, seed + 1):
        total += x[i]
    prev = total / n
    res[seed] = prev
    ema_from_nb(x, res, seed, prev, k, int(STABILISE / k) + 1)
    return res


@njit(cache=True, nogil=True)
def macd_line_nb(x: np.ndarray, fast: int, slow: int, out: np.ndarray | None = None) -> np.ndarray:
    """MACD line: the fast EMA minus the slow one, both seeded where the slow one starts (TA-Lib
    MACD), the difference written over the fast EMA (one array less than ``fast - slow``; the same
    floats); into ``out`` when given (as `sma_nb`).

    >>> macd_line_nb(np.array([1.0, 2.0, 3.0, 4.0]), 1, 2).tolist()
    [nan, 0.5, 0.5, 0.5]
    """
    start = first_valid_nb(x)
    seed = start + slow - 1
    if fast > slow or start < 0 or seed >= x.size:  # not the usual MACD: the two passes
        line = ema_seeded_nb(x, fast, 2.0 / (fast + 1), slow - 1)
        other = ema_seeded_nb(x, slow, 2.0 / (slow + 1), slow - 1)
        if out is None:
            out = line
        for i in range(line.size):
            out[i] = line[i] - other[i]
        return out
    # Both EMAs in one pass (svc_engine.indicators.lanes_macd), seeded as ema_seeded_nb seeds them.
    line = empty_nb(x.size) if out is None else out  # every value is written
    line[:seed] = np.nan
    k_fast, k_slow = 2.0 / (fast + 1), 2.0 / (slow + 1)
    prev_fast, prev_slow = _window_mean(x, seed, fast), _window_mean(x, seed, slow)
    line[seed] = prev_fast - prev_slow
    macd_pair_from_nb(x, line, seed, prev_fast, prev_slow, k_fast, k_slow, int(STABILISE / k_slow) + 1)
    return line


@njit(cache=True, nogil=True)
def difference_nb(a: np.ndarray, b: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """``a - b`` (the MACD histogram: line minus signal) into ``out`` when given (as `sma_nb`),
    else a fresh array on huge pages.

    >>> difference_nb(np.array([3.0, np.nan]), np.array([1.0, 1.0])).tolist()
    [2.0, nan]
    """
    res = empty_nb(a.size) if out is None else out
    for i in range(a.size):
        res[i] = a[i] - b[i]
    return res


@njit(cache=True, nogil=True)
def _window_mean(x: np.ndarray, end: int, n: int) -> float:
    """The seed of `ema_seeded_nb`: the ``n`` values ending at ``end`` summed in order, over ``n``."""
    total = 0.0
    for i in range(end - n + 1, end + 1):
        total += x[i]
    return total / n


@njit(cache=True, nogil=True)
def wma_nb(x: np.ndarray, n: int) -> np.ndarray:
    """Linearly weighted moving average, weights 1..n (TA-Lib WMA's running form, to round-off; its
    sums are kept exact, see `add_exact_nb`, so the value does not depend on the series' start).

    >>> wma_nb(np.array([1.0, 2.0, 3.0]), 2).tolist()
    [nan, 1.6666666666666667, 2.6666666666666665]
    """
    out = nans_nb(x.size)
    start = first_valid_nb(x)
    if start < 0 or x.size - start < n:
        return out
    divider = (n * (n + 1)) / 2.0
    sub_hi, sub_lo, sum_hi, sum_lo = 0.0, 0.0, 0.0, 0.0
    for i in range(start, start + n - 1):
        sub_hi, sub_lo = add_exact_nb(sub_hi, sub_lo, x[i])
        sum_hi, sum_lo = _add_product(sum_hi, sum_lo, x[i], float(i - start + 1))
    trailing = 0.0
    trailing_idx = start
    for i in range(start + n - 1, x.size):
        value = x[i]
        sub_hi, sub_lo = add_exact_nb(sub_hi, sub_lo, value)
        sub_hi, sub_lo = add_exact_nb(sub_hi, sub_lo, -trailing)
        sum_hi, sum_lo = _add_product(sum_hi, sum_lo, value, float(n))
        trailing = x[trailing_idx]
        trailing_idx += 1
        out[i] = sum_hi / divider
        sum_hi, sum_lo = add_exact_nb(sum_hi, sum_lo, -sub_hi)
        sum_hi, sum_lo = add_exact_nb(sum_hi, sum_lo, -sub_lo)
    return out


@njit(cache=True, nogil=True)
def _add_product(hi: float, lo: float, value: float, weight: float) -> tuple[float, float]:
    product, err = two_prod_nb(value, weight)
    hi, lo = add_exact_nb(hi, lo, product)
    return add_exact_nb(hi, lo, err)
