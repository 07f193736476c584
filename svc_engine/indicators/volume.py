"""Volume-flow kernels: OBV, the accumulation/distribution line, MFI and Chaikin money flow.
Same contract as `svc_engine.indicators.core`.

OBV and A/D are running totals from the first candle, as TA-Lib defines them, so their level
depends on where the series starts (a strategy using them is evaluated from the first candle of
the history); MFI and CMF are window sums kept exact (see `add_exact_nb`), so a restart anywhere
gives the same floats.

Example:
    >>> import numpy as np
    >>> obv_nb(np.array([1.0, 2.0, 1.5, 1.5]), np.array([10.0, 3.0, 4.0, 9.0])).tolist()
    [10.0, 13.0, 9.0, 9.0]
"""

from __future__ import annotations

import numpy as np
from numba import njit

from svc_engine.indicators.numeric import add_exact_nb
from svc_engine.scratch import nans_nb, zeros_nb


@njit(cache=True, nogil=True)
def obv_nb(close: np.ndarray, volume: np.ndarray) -> np.ndarray:
    """On-balance volume (TA-Lib OBV): starts at the first volume, adds the volume of a candle that
    closes higher, subtracts it on a lower close.

    >>> obv_nb(np.array([2.0, 1.0]), np.array([5.0, 2.0])).tolist()
    [5.0, 3.0]
    """
    out = nans_nb(close.size)
    if close.size == 0:
        return out
    total = volume[0]
    out[0] = total
    for i in range(1, close.size):
        if close[i] > close[i - 1]:
            total += volume[i]
        elif close[i] < close[i - 1]:
            total -= volume[i]
        out[i] = total
    return out


@njit(cache=True, nogil=True)
def ad_nb(high: np.ndarray, low: np.ndarray, close: np.ndarray, volume: np.ndarray) -> np.ndarray:
    """Chaikin accumulation/distribution line (TA-Lib AD): the running total of
    ``((close - low) - (high - close)) / (high - low) * volume`` (0 on a candle without range).

    >>> ad_nb(np.array([3.0, 4.0]), np.array([1.0, 2.0]), np.array([3.0, 2.5]), np.array([2.0, 4.0])).tolist()
    [2.0, 0.0]
    """
    out = nans_nb(close.size)
    total = 0.0
    for i in range(close.size):
        span = high[i] - low[i]
        if span > 0.0:
            total += (((close[i] - low[i]) - (high[i] - close[i])) / span) * volume[i]
        out[i] = total
    return out


@njit(cache=True, nogil=True)
def mfi_nb(high: np.ndarray, low: np.ndarray, close: np.ndarray, volume: np.ndarray, n: int) -> np.ndarray:
    """Money flow index over the last ``n`` candles (TA-Lib MFI): typical price times volume counts
    as positive flow when the typical price rose, negative when it fell;
    ``100 * positive / (positive + negative)``, 0 where the two sum to less than 1 (TA-Lib's rule).

    >>> one = np.ones(3)
    >>> mfi_nb(np.array([2.0, 3.0, 2.5]), np.array([2.0, 3.0, 2.5]), np.array([2.0, 3.0, 2.5]),
    ...        np.array([1.0, 1.0, 2.0]), 2).tolist()
    [nan, nan, 37.5]
    """
    size = close.size
    out = nans_nb(size)
    if size <= n:
        return out
    flow = zeros_nb(size)
    for i in range(1, size):
        tp = (high[i] + low[i] + close[i]) / 3.0
        prev = (high[i - 1] + low[i - 1] + close[i - 1]) / 3.0
        flow[i] = tp * volume[i] if tp > prev else (-tp * volume[i] if tp < prev else 0.0)
    pos_hi, pos_lo, neg_hi, neg_lo = 0.0, 0.0, 0.0, 0.0
    for i in range(1, size):
        if flow[i] > 0:
            pos_hi, pos_lo = add_exact_nb(pos_hi, pos_lo, flow[i])
        elif flow[i] < 0:
            neg_hi, neg_lo = add_exact_nb(neg_hi, neg_lo, -flow[i])
        if i >= n:
            total = pos_hi + neg_hi
            out[i] = 0.0 if total < 1.0 else 100.0 * (pos_hi / total)
            old = flow[i - n + 1]
            if old > 0:
                pos_hi, pos_lo = add_exact_nb(pos_hi, pos_lo, -old)
            elif old < 0:
                neg_hi, neg_lo = add_exact_nb(neg_hi, neg_lo, old)
    return out


@njit(cache=True, nogil=True)
def cmf_nb(high: np.ndarray, low: np.ndarray, close: np.ndarray, volume: np.ndarray, n: int) -> np.ndarray:
    """Chaikin money flow over the last ``n`` candles (Marc Chaikin's definition; TA-Lib has none):
    the sum of the A/D line's increments over the sum of volume; NaN where no volume traded.

    >>> h, l = np.array([3.0, 4.0]), np.array([1.0, 2.0])
    >>> cmf_nb(h, l, np.array([3.0, 2.5]), np.array([2.0, 4.0]), 2).tolist()
    [nan, 0.0]
    """
    size = close.size
    out = nans_nb(size)
    mf_hi, mf_lo, vol_hi, vol_lo = 0.0, 0.0, 0.0, 0.0
    for i in range(size):
        span = high[i] - low[i]
        mf = (((close[i] - low[i]) - (high[i] - close[i])) / span) * volume[i] if span > 0.0 else 0.0
        mf_hi, mf_lo = add_exact_nb(mf_hi, mf_lo, mf)
        vol_hi, vol_lo = add_exact_nb(vol_hi, vol_lo, volume[i])
        if i >= n - 1:
            if vol_hi > 0.0:
                out[i] = mf_hi / vol_hi
            j = i - n + 1
            span = high[j] - low[j]
            old = (((close[j] - low[j]) - (high[j] - close[j])) / span) * volume[j] if span > 0.0 else 0.0
            mf_hi, mf_lo = add_exact_nb(mf_hi, mf_lo, -old)
            vol_hi, vol_lo = add_exact_nb(vol_hi, vol_lo, -volume[j])
    return out
