"""Kernels of the words traders write beyond the classic indicators (issue 29): percentile rank,
change over a span of time, and the calendar of a candle (UTC hour, day of the week, the first
candle of a day). Same contract as `svc_engine.indicators.core`: contiguous arrays in, arrays of
the same length out, NaN where undefined, causal.

Example:
    >>> import numpy as np
    >>> percent_rank_nb(np.array([1.0, 3.0, 2.0, 4.0]), 2).tolist()
    [nan, nan, 50.0, 100.0]
    >>> hour_nb(np.array([0, 3_600_000 * 25], np.int64)).tolist()
    [0.0, 1.0]
"""

from __future__ import annotations

import numpy as np
from numba import njit

DAY_MS = 86_400_000
#: 1970-01-01 was a Thursday: ISO weekday 4.
EPOCH_WEEKDAY = 4


@njit(cache=True, nogil=True)
def percent_rank_nb(x: np.ndarray, n: int) -> np.ndarray:
    """Percentile rank: the share, in percent, of the previous ``n`` values that are at most the
    current one (TradingView's ``ta.percentrank``); NaN while any of them is undefined.

    >>> percent_rank_nb(np.array([5.0, 1.0, 2.0, 3.0]), 3).tolist()
    [nan, nan, nan, 66.66666666666667]
    """
    out = np.full(x.size, np.nan)
    for i in range(n, x.size):
        v = x[i]
        if v != v:
            continue
        count = 0
        ok = True
        for j in range(i - n, i):
            w = x[j]
            if w != w:
                ok = False
                break
            if w <= v:
                count += 1
        if ok:
            out[i] = 100.0 * count / n
    return out


@njit(cache=True, nogil=True)
def change_over_time_nb(open_time: np.ndarray, x: np.ndarray, span_ms: int) -> np.ndarray:
    """Percent change of ``x`` since the candle that closed ``span_ms`` before this one closed:
    ``100 (x[t] / x[j] - 1)`` with ``j`` the latest candle whose open time is at most
    ``open_time[t] - span_ms`` (a missing candle leaves the one before it). NaN until the span
    has passed since the first candle.

    >>> t = np.arange(5, dtype=np.int64) * 3_600_000
    >>> out = change_over_time_nb(t, np.array([100.0, 101.0, 102.0, 103.0, 110.0]), 2 * 3_600_000)
    >>> np.round(out, 6).tolist()
    [nan, nan, 2.0, 1.980198, 7.843137]
    """
    out = np.full(x.size, np.nan)
    j = 0
    for i in range(x.size):
        target = open_time[i] - span_ms
        if open_time[0] > target:
            continue
        while j + 1 <= i and open_time[j + 1] <= target:
            j += 1
        base = x[j]
        if base == base and base != 0.0 and x[i] == x[i]:
            out[i] = 100.0 * (x[i] / base - 1.0)
    return out


@njit(cache=True, nogil=True)
def hour_nb(open_time: np.ndarray) -> np.ndarray:
    """The UTC hour (0..23) at which each candle opens.

    >>> hour_nb(np.array([3_600_000 * 13 + 60_000], np.int64)).tolist()
    [13.0]
    """
    out = np.empty(open_time.size)
    for i in range(open_time.size):
        out[i] = float((open_time[i] % DAY_MS) // 3_600_000)
    return out


@njit(cache=True, nogil=True)
def weekday_nb(open_time: np.ndarray) -> np.ndarray:
    """The ISO day of the week (1 Monday .. 7 Sunday, UTC) on which each candle opens.

    >>> weekday_nb(np.array([0, 4 * 86_400_000], np.int64)).tolist()  # Thursday, Monday
    [4.0, 1.0]
    """
    out = np.empty(open_time.size)
    for i in range(open_time.size):
        day = open_time[i] // DAY_MS
        out[i] = float((day + EPOCH_WEEKDAY - 1) % 7 + 1)
    return out


@njit(cache=True, nogil=True)
def day_start_nb(open_time: np.ndarray) -> np.ndarray:
    """True on the first candle of each UTC day in the series (the session's opening candle: the
    00:00 candle of a market that never closes, the first bar of a stock's day); the first candle
    of the series is not known to open its day and stays False.

    >>> day_start_nb(np.array([0, 3_600_000, 86_400_000, 90_000_000], np.int64)).tolist()
    [False, False, True, False]
    """
    out = np.zeros(open_time.size, np.bool_)
    for i in range(1, open_time.size):
        out[i] = open_time[i] // DAY_MS != open_time[i - 1] // DAY_MS
    return out
