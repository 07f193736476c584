"""Volume-weighted average price: since the start of the UTC day, or over the last ``n`` candles.
Same contract as `svc_engine.indicators.core`.

Example:
    >>> import numpy as np
    >>> one = np.array([1.0, 2.0])
    >>> vwap_rolling_nb(one, one, one, np.array([1.0, 1.0]), 2).tolist()
    [nan, 1.5]
"""

from __future__ import annotations

import numpy as np
from numba import njit

from svc_engine.scratch import nans_nb

DAY_MS = 86_400_000


@njit(cache=True, nogil=True)
def vwap_session_nb(
    open_time: np.ndarray, high: np.ndarray, low: np.ndarray, close: np.ndarray, volume: np.ndarray
) -> np.ndarray:
    """Volume-weighted typical price since 00:00 UTC of the candle's day; NaN while no volume traded.

    >>> t = np.array([0, 60_000, 86_400_000])
    >>> one = np.array([1.0, 2.0, 3.0])
    >>> vwap_session_nb(t, one, one, one, np.array([1.0, 3.0, 1.0])).tolist()
    [1.0, 1.75, 3.0]
    """
    out = nans_nb(high.size)
    day = -1
    pv = 0.0
    vol = 0.0
    for i in range(high.size):
        this_day = open_time[i] // DAY_MS
        if this_day != day:
            day = this_day
            pv = 0.0
            vol = 0.0
        pv += (high[i] + low[i] + close[i]) / 3.0 * volume[i]
        vol += volume[i]
        if vol > 0.0:
            out[i] = pv / vol
    return out


@njit(cache=True, nogil=True)
def vwap_rolling_nb(
    high: np.ndarray, low: np.ndarray, close: np.ndarray, volume: np.ndarray, n: int
) -> np.ndarray:
    """Volume-weighted typical price of the last ``n`` candles; NaN where they traded nothing.

    >>> one = np.array([1.0, 2.0, 3.0])
    >>> vwap_rolling_nb(one, one, one, np.array([1.0, 3.0, 1.0]), 2).tolist()
    [nan, 1.75, 2.25]
    """
    out = nans_nb(high.size)
    for i in range(n - 1, high.size):
        pv = 0.0
        vol = 0.0
        for j in range(i - n + 1, i + 1):
            pv += (high[j] + low[j] + close[j]) / 3.0 * volume[j]
            vol += volume[j]
        if vol > 0.0:
            out[i] = pv / vol
    return out
