"""The few indicators the trend module needs (ATR, EMA, RSI), as numba kernels over NumPy arrays.

All three follow TA-Lib's conventions: NaN during the warm-up, the first value a simple mean,
then Wilder's (ATR, RSI) or the usual (EMA) recursion. Each value uses only candles up to its own.

Example:
    >>> import numpy as np
    >>> close = np.arange(1.0, 31.0)
    >>> round(float(atr_nb(close + 1, close - 1, close, 14)[14]), 6)
    2.0
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def atr_nb(high: np.ndarray, low: np.ndarray, close: np.ndarray, period: int) -> np.ndarray:
    """Wilder's average true range; NaN for the first ``period`` candles.

    Example:
        >>> import numpy as np
        >>> h = np.array([2.0, 3.0, 4.0]); l = h - 1.0
        >>> atr_nb(h, l, h - 0.5, 2).tolist()[1:]
        [nan, 1.5]
    """
    n = high.shape[0]
    out = np.full(n, np.nan)
    if n <= period:
        return out
    total = 0.0
    for i in range(1, period + 1):
        total += _true_range(high, low, close, i)
    value = total / period
    out[period] = value
    for i in range(period + 1, n):
        value = (value * (period - 1) + _true_range(high, low, close, i)) / period
        out[i] = value
    return out


@njit(cache=True, nogil=True, inline="always")
def _true_range(high: np.ndarray, low: np.ndarray, close: np.ndarray, i: int) -> float:
    prev = close[i - 1]
    return max(high[i] - low[i], abs(high[i] - prev), abs(low[i] - prev))


@njit(cache=True, nogil=True)
def ema_nb(x: np.ndarray, period: int) -> np.ndarray:
    """Exponential moving average seeded by the mean of the first ``period`` values.

    Example:
        >>> import numpy as np
        >>> ema_nb(np.array([1.0, 2.0, 3.0, 4.0]), 2).tolist()
        [nan, 1.5, 2.5, 3.5]
    """
    n = x.shape[0]
    out = np.full(n, np.nan)
    if n < period:
        return out
    alpha = 2.0 / (period + 1)
    value = 0.0
    for i in range(period):
        value += x[i]
    value /= period
    out[period - 1] = value
    for i in range(period, n):
        value = value + alpha * (x[i] - value)
        out[i] = value
    return out


@njit(cache=True, nogil=True)
def rsi_nb(close: np.ndarray, period: int) -> np.ndarray:
    """Wilder's relative strength index in [0, 100]; NaN for the first ``period`` candles.

    A series that never moves has RSI 50 (no gain, no loss).

    Example:
        >>> import numpy as np
        >>> rsi_nb(np.array([1.0, 2.0, 3.0, 2.0]), 2).tolist()
        [nan, nan, 100.0, 50.0]
    """
    n = close.shape[0]
    out = np.full(n, np.nan)
    if n <= period:
        return out
    gain = 0.0
    loss = 0.0
    for i in range(1, period + 1):
        change = close[i] - close[i - 1]
        gain += max(change, 0.0)
        loss += max(-change, 0.0)
    gain /= period
    loss /= period
    out[period] = _rsi(gain, loss)
    for i in range(period + 1, n):
        change = close[i] - close[i - 1]
        gain = (gain * (period - 1) + max(change, 0.0)) / period
        loss = (loss * (period - 1) + max(-change, 0.0)) / period
        out[i] = _rsi(gain, loss)
    return out


@njit(cache=True, nogil=True, inline="always")
def _rsi(gain: float, loss: float) -> float:
    total = gain + loss
    if total == 0.0:
        return 50.0
    return 100.0 * gain / total
