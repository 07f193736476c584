"""Ranges and dispersion: true range, Wilder's ATR, rolling highest and lowest, rolling standard
deviation. Same contract as `svc_engine.indicators.core`.

Example:
    >>> import numpy as np
    >>> rolling_max_nb(np.array([1.0, 3.0, 2.0]), 2).tolist()
    [nan, 3.0, 3.0]
"""

from __future__ import annotations

import numpy as np
from numba import njit

from svc_engine.indicators.lanes import STABILISE, atr_from_nb, true_range_value_nb
from svc_engine.indicators.numeric import first_valid_nb
from svc_engine.scratch import empty_nb, nans_nb


@njit(cache=True, nogil=True)
def true_range_nb(high: np.ndarray, low: np.ndarray, close: np.ndarray) -> np.ndarray:
    """True range; undefined on the first candle (TA-Lib TRANGE).

    >>> true_range_nb(np.array([2.0, 5.0]), np.array([1.0, 4.0]), np.array([1.5, 4.5])).tolist()
    [nan, 3.5]
    """
    out = nans_nb(high.size)
    for i in range(1, high.size):
        prev = close[i - 1]
        tr = high[i] - low[i]
        up = abs(high[i] - prev)
        down = abs(low[i] - prev)
        if up > tr:
            tr = up
        if down > tr:
            tr = down
        out[i] = tr
    return out


@njit(cache=True, nogil=True)
def atr_nb(
    high: np.ndarray, low: np.ndarray, close: np.ndarray, n: int, out: np.ndarray | None = None
) -> np.ndarray:
    """Wilder's average true range, seeded by the mean of the first ``n`` true ranges (TA-Lib ATR);
    into ``out`` (an array of ``high.size``, returned) when given.

    >>> atr_nb(np.array([2.0, 5.0, 6.0]), np.array([1.0, 4.0, 4.0]), np.array([1.5, 4.5, 5.0]), 1).tolist()
    [nan, 3.5, 2.0]
    """
    res = empty_nb(high.size) if out is None else out  # every value is written
    if high.size <= n:
        res[:] = np.nan
        return res
    res[:n] = np.nan
    total = 0.0
    for i in range(1, n + 1):
        total += true_range_value_nb(high[i], low[i], close[i - 1])
    prev = total / n
    res[n] = prev
    atr_from_nb(high, low, close, res, n, prev, n, STABILISE * n)
    return res


@njit(cache=True, nogil=True)
def rolling_max_nb(x: np.ndarray, n: int) -> np.ndarray:
    """Highest value of the last ``n`` values, the current one included (TA-Lib MAX).

    >>> rolling_max_nb(np.array([1.0, 3.0, 2.0, 1.0]), 2).tolist()
    [nan, 3.0, 3.0, 2.0]
    """
    return _rolling_extreme(x, n, 1.0)


@njit(cache=True, nogil=True)
def rolling_min_nb(x: np.ndarray, n: int) -> np.ndarray:
    """Lowest value of the last ``n`` values, the current one included (TA-Lib MIN).

    >>> rolling_min_nb(np.array([1.0, 3.0, 2.0, 1.0]), 2).tolist()
    [nan, 1.0, 2.0, 1.0]
    """
    return _rolling_extreme(x, n, -1.0)


@njit(cache=True, nogil=True)
def _rolling_extreme(x: np.ndarray, n: int, sign: float) -> np.ndarray:
    out = nans_nb(x.size)
    start = first_valid_nb(x)
    if start < 0:
        return out
    best_idx = -1
    best = 0.0
    for i in range(start, x.size):
        window_start = i - n + 1
        value = sign * x[i]
        if best_idx < window_start:
            # The extreme left the window: rescan it (amortised cheap on real prices).
            best_idx = max(window_start, start)
            best = sign * x[best_idx]
            for j in range(best_idx + 1, i + 1):
                if sign * x[j] >= best:
                    best = sign * x[j]
                    best_idx = j
        elif value >= best:
            best = value
            best_idx = i
        if window_start >= start:
            out[i] = sign * best
    return out


@njit(cache=True, nogil=True)
def rolling_std_at_nb(x: np.ndarray, mean_at: np.ndarray, at: np.ndarray, n: int) -> np.ndarray:
    """``rolling_std_nb(x, mean, n)[at]`` given ``mean_at = mean[at]``, the same operations in the
    same order at those candles only (so the same floats): a Bollinger band read where an AND left
    few candidates (`svc_engine.strategy.sparse`).

    >>> rolling_std_at_nb(np.array([1.0, 3.0]), np.array([2.0]), np.array([1]), 2).tolist()
    [1.0]
    """
    out = np.full(at.size, np.nan)
    for k in range(at.size):
        i, m = at[k], mean_at[k]
        if np.isnan(m):
            continue
        acc = 0.0
        for j in range(i - n + 1, i + 1):
            d = x[j] - m
            acc += d * d
        out[k] = np.sqrt(acc / n)
    return out


@njit(cache=True, nogil=True)
def rolling_std_nb(x: np.ndarray, mean: np.ndarray, n: int, out: np.ndarray | None = None) -> np.ndarray:
    """Population standard deviation of the last ``n`` values around a given rolling mean
    (two-pass, so flat windows give exactly 0); into ``out`` (an array of ``x.size``, returned)
    when given.

    >>> rolling_std_nb(np.array([1.0, 3.0]), np.array([np.nan, 2.0]), 2).tolist()
    [nan, 1.0]
    """
    res = empty_nb(x.size) if out is None else out  # every value is written
    _std_blocks(x, mean, n, res, 0.0, False)
    return res


@njit(cache=True, nogil=True)
def rolling_band_nb(
    x: np.ndarray, mean: np.ndarray, n: int, mult: float, out: np.ndarray | None = None
) -> np.ndarray:
    """A Bollinger band ``mean + mult * rolling_std_nb(x, mean, n)`` in the standard deviation's
    pass: each deviation is the float `rolling_std_nb` gives, then the one multiply and add of
    `band_nb` (the same floats), without a second pass and array over the series. ``out`` as in
    `rolling_std_nb`.

    >>> rolling_band_nb(np.array([1.0, 3.0]), np.array([np.nan, 2.0]), 2, -2.0).tolist()
    [nan, 0.0]
    """
    res = empty_nb(x.size) if out is None else out  # every value is written
    _std_blocks(x, mean, n, res, mult, True)
    return res


@njit(cache=True, nogil=True)
def _std_blocks(x: np.ndarray, mean: np.ndarray, n: int, res: np.ndarray, mult: float, band: bool) -> None:
    """The deviations of `rolling_std_nb` into ``res``, or the bands ``mean + mult * sd`` when ``band``."""
    head = min(n - 1, x.size)
    for i in range(head):  # a window reaching before the start (only a mean given there)
        sd = np.nan if np.isnan(mean[i]) else _std_at(x, mean[i], i, n)
        res[i] = mean[i] + mult * sd if band else sd
    # Blocks of candles, the window's offsets outside: each sum still adds its n squares in the
    # order of the loop above (the same floats), but the candles of a block go side by side in
    # vector instructions instead of one dependent chain of adds per candle.
    # Slices, not offsets: their indices are known non-negative, so no wrap-around test per read.
    acc = np.empty(_STD_BLOCK)
    for b0 in range(head, x.size, _STD_BLOCK):
        size = min(_STD_BLOCK, x.size - b0)
        means, sums = mean[b0 : b0 + size], acc[:size]
        sums[:] = 0.0
        for j in range(n):
            window = x[b0 - n + 1 + j : b0 - n + 1 + j + size]
            for t in range(size):
                d = window[t] - means[t]
                sums[t] += d * d
        block = res[b0 : b0 + size]
        for t in range(size):
            sd = np.nan if np.isnan(means[t]) else np.sqrt(sums[t] / n)
            block[t] = means[t] + mult * sd if band else sd


_STD_BLOCK = 256  # candles per block: 2 KB of sums, kept in the L1 cache across the n offsets


@njit(cache=True, nogil=True)
def _std_at(x: np.ndarray, m: float, i: int, n: int) -> float:
    acc = 0.0
    for j in range(i - n + 1, i + 1):
        d = x[j] - m
        acc += d * d
    return np.sqrt(acc / n)


@njit(cache=True, nogil=True)
def band_nb(mid: np.ndarray, sd: np.ndarray, mult: float) -> np.ndarray:
    """``mid + mult * sd`` written over ``sd`` (returned): a Bollinger band without NumPy's two
    temporaries of the whole series. A lower band is ``mult`` negated: ``mid + (-m) * sd`` is
    ``mid - m * sd`` to the bit (negation is exact).

    >>> band_nb(np.array([1.0, 2.0]), np.array([0.5, np.nan]), -2.0).tolist()
    [0.0, nan]
    """
    for i in range(sd.size):
        sd[i] = mid[i] + mult * sd[i]
    return sd
