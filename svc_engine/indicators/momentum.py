"""Momentum oscillators: Wilder's RSI (and its average gain and loss), the stochastic, Williams
%R, CCI (with the typical price) and the rate of change. Same contract as
`svc_engine.indicators.core`.

Example:
    >>> import numpy as np
    >>> roc_nb(np.array([1.0, 2.0, 3.0]), 1).tolist()
    [nan, 100.0, 50.0]
"""

from __future__ import annotations

import numpy as np
from numba import njit

from svc_engine.indicators.averages import sma_nb
from svc_engine.indicators.lanes import STABILISE, rsi_from_nb, rsi_value_nb
from svc_engine.indicators.numeric import first_valid_nb
from svc_engine.indicators.ranges import rolling_max_nb, rolling_min_nb
from svc_engine.scratch import empty_nb, nans_nb


@njit(cache=True, nogil=True)
def wilder_gain_loss_nb(x: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Wilder's average gain and average loss of the changes of ``x``, seeded by the mean of the
    first ``n`` changes (the two halves of TA-Lib's RSI, same operations in the same order).

    >>> gain, loss = wilder_gain_loss_nb(np.array([1.0, 2.0, 1.0, 2.0]), 2)
    >>> gain.tolist(), loss.tolist()
    ([nan, nan, 0.5, 0.75], [nan, nan, 0.5, 0.25])
    """
    gain_out = nans_nb(x.size)
    loss_out = nans_nb(x.size)
    start = first_valid_nb(x)
    if start < 0 or x.size - start <= n:
        return gain_out, loss_out
    prev_value = x[start]
    gain = 0.0
    loss = 0.0
    for i in range(start + 1, start + n + 1):
        diff = x[i] - prev_value
        prev_value = x[i]
        if diff < 0:
            loss -= diff
        else:
            gain += diff
    loss /= n
    gain /= n
    gain_out[start + n], loss_out[start + n] = gain, loss
    for i in range(start + n + 1, x.size):
        diff = x[i] - prev_value
        prev_value = x[i]
        loss *= n - 1
        gain *= n - 1
        if diff < 0:
            loss -= diff
        else:
            gain += diff
        loss /= n
        gain /= n
        gain_out[i], loss_out[i] = gain, loss
    return gain_out, loss_out


@njit(cache=True, nogil=True)
def rsi_nb(x: np.ndarray, n: int, out: np.ndarray | None = None) -> np.ndarray:
    """Wilder's RSI, seeded by the mean gain and loss of the first ``n`` changes (TA-Lib RSI,
    including its convention that a window without any move, average gain + loss below 1e-8,
    reads 0). ``out`` (an array of ``x.size``, returned) receives the values instead of a fresh one.

    >>> rsi_nb(np.array([1.0, 2.0, 1.0, 2.0]), 2).tolist()
    [nan, nan, 50.0, 75.0]
    >>> rsi_nb(np.ones(4), 2).tolist()
    [nan, nan, 0.0, 0.0]
    """
    res = empty_nb(x.size) if out is None else out  # every value is written
    start = first_valid_nb(x)
    if start < 0 or x.size - start <= n:
        res[:] = np.nan
        return res
    res[: start + n] = np.nan
    gain, loss = 0.0, 0.0
    for i in range(start + 1, start + n + 1):  # the seed: mean gain and loss of the first n moves
        diff = x[i] - x[i - 1]
        if diff < 0:
            loss -= diff
        else:
            gain += diff
    gain, loss = gain / n, loss / n
    res[start + n] = rsi_value_nb(gain, loss)
    rsi_from_nb(x, res, start + n, gain, loss, n, STABILISE * n)
    return res


@njit(cache=True, nogil=True)
def stoch_nb(
    high: np.ndarray, low: np.ndarray, close: np.ndarray, k: int, slow_k: int, slow_d: int
) -> tuple[np.ndarray, np.ndarray]:
    """Slow stochastic %K and %D with simple averages (TA-Lib STOCH, matype SMA).

    >>> high, low = np.array([2.0, 4.0, 6.0]), np.array([1.0, 2.0, 3.0])
    >>> kk, dd = stoch_nb(high, low, np.array([2.0, 3.0, 5.0]), 2, 1, 1)
    >>> kk.tolist()
    [nan, 66.66666666666667, 75.0]
    """
    hh = rolling_max_nb(high, k)
    ll = rolling_min_nb(low, k)
    fast = nans_nb(high.size)
    for i in range(k - 1, high.size):
        diff = (hh[i] - ll[i]) / 100.0
        fast[i] = (close[i] - ll[i]) / diff if diff != 0.0 else 0.0
    slow = sma_nb(fast, slow_k)
    return slow, sma_nb(slow, slow_d)


@njit(cache=True, nogil=True)
def willr_nb(high: np.ndarray, low: np.ndarray, close: np.ndarray, n: int) -> np.ndarray:
    """Williams %R in [-100, 0] (TA-Lib WILLR).

    >>> willr_nb(np.array([2.0, 4.0]), np.array([1.0, 2.0]), np.array([2.0, 3.0]), 2).tolist()
    [nan, -33.333333333333336]
    """
    hh = rolling_max_nb(high, n)
    ll = rolling_min_nb(low, n)
    out = nans_nb(high.size)
    for i in range(n - 1, high.size):
        diff = (hh[i] - ll[i]) / -100.0
        out[i] = (hh[i] - close[i]) / diff if diff != 0.0 else 0.0
    return out


@njit(cache=True, nogil=True)
def typical_price_nb(high: np.ndarray, low: np.ndarray, close: np.ndarray) -> np.ndarray:
    """(high + low + close) / 3.

    >>> typical_price_nb(np.array([3.0]), np.array([1.0]), np.array([2.0])).tolist()
    [2.0]
    """
    out = empty_nb(high.size)
    for i in range(high.size):
        out[i] = (high[i] + low[i] + close[i]) / 3.0
    return out


@njit(cache=True, nogil=True)
def cci_nb(high: np.ndarray, low: np.ndarray, close: np.ndarray, n: int) -> np.ndarray:
    """Commodity channel index (TA-Lib CCI to round-off). Sums run oldest to newest in the window:
    TA-Lib's circular buffer orders them by the index since the series' start, which would tie a
    value's rounding to where the series starts.

    >>> cci_nb(np.array([2.0, 4.0]), np.array([0.0, 2.0]), np.array([1.0, 3.0]), 2).tolist()
    [nan, 66.66666666666667]
    """
    tp = typical_price_nb(high, low, close)
    out = nans_nb(high.size)
    for t in range(n - 1, high.size):
        mean = 0.0
        for j in range(t - n + 1, t + 1):
            mean += tp[j]
        mean /= n
        dev = 0.0
        for j in range(t - n + 1, t + 1):
            dev += abs(tp[j] - mean)
        diff = tp[t] - mean
        out[t] = diff / (0.015 * (dev / n)) if diff != 0.0 and dev != 0.0 else 0.0
    return out


@njit(cache=True, nogil=True)
def roc_nb(x: np.ndarray, n: int) -> np.ndarray:
    """Rate of change in percent over ``n`` candles (TA-Lib ROC; 0 where the old value is 0).

    >>> roc_nb(np.array([2.0, 3.0]), 1).tolist()
    [nan, 50.0]
    """
    out = nans_nb(x.size)
    start = first_valid_nb(x)
    if start < 0:
        return out
    for i in range(start + n, x.size):
        old = x[i - n]
        out[i] = ((x[i] / old) - 1.0) * 100.0 if old != 0.0 else 0.0
    return out
