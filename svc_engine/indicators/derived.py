"""Kernels built from the core ones: momentum, DEMA, TEMA, HMA, standard deviation, z-score,
ATR in percent of price, Bollinger %B, StochRSI. Same contract as `svc_engine.indicators.core`.

Example:
    >>> import numpy as np
    >>> mom_nb(np.array([1.0, 2.0, 4.0]), 1).tolist()
    [nan, 1.0, 2.0]
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from svc_engine.indicators.averages import ema_nb, sma_nb, wma_nb
from svc_engine.indicators.momentum import rsi_nb
from svc_engine.indicators.numeric import first_valid_nb
from svc_engine.indicators.ranges import atr_nb, rolling_max_nb, rolling_min_nb, rolling_std_nb
from svc_engine.scratch import nans_nb


@njit(cache=True, nogil=True)
def mom_nb(x: np.ndarray, n: int) -> np.ndarray:
    """Momentum: ``x[t] - x[t - n]`` (TA-Lib MOM).

    >>> mom_nb(np.array([1.0, 3.0, 2.0]), 2).tolist()
    [nan, nan, 1.0]
    """
    out = nans_nb(x.size)
    start = first_valid_nb(x)
    if start < 0:
        return out
    for i in range(start + n, x.size):
        out[i] = x[i] - x[i - n]
    return out


@njit(cache=True, nogil=True)
def dema_nb(x: np.ndarray, n: int) -> np.ndarray:
    """Double EMA: ``2 * EMA - EMA(EMA)`` (TA-Lib DEMA), from index ``2 * (n - 1)``.

    >>> dema_nb(np.array([1.0, 2.0, 3.0, 4.0]), 2).tolist()
    [nan, nan, 3.0, 4.0]
    """
    e1 = ema_nb(x, n)
    e2 = ema_nb(e1, n)
    return (2.0 * e1) - e2


@njit(cache=True, nogil=True)
def tema_nb(x: np.ndarray, n: int) -> np.ndarray:
    """Triple EMA: ``3 * EMA - 3 * EMA(EMA) + EMA(EMA(EMA))`` (TA-Lib TEMA), from ``3 * (n - 1)``.

    >>> tema_nb(np.array([1.0, 2.0, 3.0, 4.0]), 2).tolist()
    [nan, nan, nan, 4.0]
    """
    e1 = ema_nb(x, n)
    e2 = ema_nb(e1, n)
    e3 = ema_nb(e2, n)
    return (3.0 * e1) - (3.0 * e2) + e3


@njit(cache=True, nogil=True)
def hma_nb(x: np.ndarray, n: int) -> np.ndarray:
    """Hull moving average (Alan Hull): ``WMA(2 * WMA(x, n // 2) - WMA(x, n), floor(sqrt(n)))``;
    TA-Lib has none. ``n`` must be at least 2.

    >>> hma_nb(np.array([1.0, 2.0, 3.0, 4.0, 5.0]), 4).tolist()
    [nan, nan, nan, nan, 5.0]
    """
    half = wma_nb(x, n // 2)
    full = wma_nb(x, n)
    return wma_nb((2.0 * half) - full, int(math.sqrt(n)))


@njit(cache=True, nogil=True)
def stddev_nb(x: np.ndarray, n: int) -> np.ndarray:
    """Population standard deviation of the last ``n`` values (TA-Lib STDDEV with nbdev 1, to
    round-off: two passes over the window, so a flat window gives exactly 0).

    >>> stddev_nb(np.array([1.0, 3.0, 5.0]), 2).tolist()
    [nan, 1.0, 1.0]
    """
    return rolling_std_nb(x, sma_nb(x, n), n)


@njit(cache=True, nogil=True)
def zscore_nb(x: np.ndarray, n: int) -> np.ndarray:
    """How many standard deviations ``x`` lies from its ``n``-candle mean (the window includes the
    current value); 0 on a flat window.

    >>> zscore_nb(np.array([1.0, 3.0, 3.0]), 2).tolist()
    [nan, 1.0, 0.0]
    """
    mean = sma_nb(x, n)
    sd = rolling_std_nb(x, mean, n)
    out = nans_nb(x.size)
    for i in range(x.size):
        if not np.isnan(sd[i]):
            out[i] = (x[i] - mean[i]) / sd[i] if sd[i] > 0.0 else 0.0
    return out


@njit(cache=True, nogil=True)
def natr_nb(high: np.ndarray, low: np.ndarray, close: np.ndarray, n: int) -> np.ndarray:
    """ATR as a percentage of the close (TA-Lib NATR; 0 where the close is 0).

    >>> natr_nb(np.array([2.0, 5.0]), np.array([1.0, 4.0]), np.array([1.5, 5.0]), 1).tolist()
    [nan, 70.0]
    """
    atr = atr_nb(high, low, close, n)
    out = nans_nb(close.size)
    for i in range(close.size):
        if not np.isnan(atr[i]):
            out[i] = (atr[i] / close[i]) * 100.0 if close[i] != 0.0 else 0.0
    return out


@njit(cache=True, nogil=True)
def percent_b_nb(x: np.ndarray, n: int, mult: float) -> np.ndarray:
    """Bollinger %B: where ``x`` lies between the lower (0) and upper (1) band of
    ``SMA(n) +- mult * stddev``; 0.5 when the bands meet.

    >>> percent_b_nb(np.array([1.0, 3.0]), 2, 1.0).tolist()
    [nan, 1.0]
    """
    mid = sma_nb(x, n)
    sd = rolling_std_nb(x, mid, n)
    out = nans_nb(x.size)
    for i in range(x.size):
        if not np.isnan(sd[i]):
            lower = mid[i] - mult * sd[i]
            width = (mid[i] + mult * sd[i]) - lower
            out[i] = (x[i] - lower) / width if width > 0.0 else 0.5
    return out


@njit(cache=True, nogil=True)
def stochrsi_nb(x: np.ndarray, n: int, k: int, d: int) -> tuple[np.ndarray, np.ndarray]:
    """Stochastic RSI (TA-Lib STOCHRSI, SMA for %D): %K is where RSI(n) lies in its range over the
    last ``k`` values, in percent (0 on a flat range); %D is the ``d``-value SMA of %K.

    >>> kk, dd = stochrsi_nb(np.array([1.0, 2.0, 1.0, 3.0, 2.0]), 1, 2, 1)
    >>> kk.tolist()
    [nan, nan, 0.0, 100.0, 0.0]
    """
    rsi = rsi_nb(x, n)
    hh = rolling_max_nb(rsi, k)
    ll = rolling_min_nb(rsi, k)
    fast = nans_nb(x.size)
    for i in range(x.size):
        if not np.isnan(hh[i]):
            diff = (hh[i] - ll[i]) / 100.0
            fast[i] = (rsi[i] - ll[i]) / diff if diff != 0.0 else 0.0
    return fast, sma_nb(fast, d)
