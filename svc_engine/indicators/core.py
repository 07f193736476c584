"""Indicator kernels: numba functions over contiguous float64 arrays, shared by the strategy
language and the trend detector.

Contract: every kernel takes 1-D float64 arrays of one length and returns new float64 arrays of that
length, NaN where the value is not yet defined (the warm-up). Every kernel is causal: the value at
index ``t`` reads only indices ``<= t``, so a prefix of the input gives a prefix of the output,
bit for bit. Where TA-Lib has the indicator, the seeding and the order of floating-point operations
follow TA-Lib so that values agree to round-off.

Example:
    >>> import numpy as np
    >>> sma_nb(np.array([1.0, 2.0, 3.0, 4.0]), 2).tolist()
    [nan, 1.5, 2.5, 3.5]
"""

from __future__ import annotations

import numpy as np
from numba import njit

DAY_MS = 86_400_000


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


@njit(cache=True, nogil=True)
def sma_nb(x: np.ndarray, n: int) -> np.ndarray:
    """Simple moving average: the window sum, rounded once, over ``n`` (TA-Lib SMA to round-off;
    TA-Lib's naive running sum drifts with the series' start, this one does not). A window holding
    a NaN (a missing volume) is NaN; later windows recover, where TA-Lib would stay NaN for good.

    >>> sma_nb(np.array([1.0, 2.0, 3.0, np.nan, 5.0, 6.0]), 2).tolist()
    [nan, 1.5, 2.5, nan, nan, 5.5]
    """
    out = np.full(x.size, np.nan)
    start = first_valid_nb(x)
    if start < 0 or x.size - start < n:
        return out
    hi = 0.0
    lo = 0.0
    missing = 0
    for i in range(start, x.size):
        if np.isnan(x[i]):
            missing += 1
        else:
            hi, lo = add_exact_nb(hi, lo, x[i])
        if i < start + n - 1:
            continue
        if missing == 0:
            out[i] = hi / n
        old = x[i - n + 1]
        if np.isnan(old):
            missing -= 1
        else:
            hi, lo = add_exact_nb(hi, lo, -old)
    return out


@njit(cache=True, nogil=True)
def ema_nb(x: np.ndarray, n: int) -> np.ndarray:
    """Exponential moving average with factor ``2 / (n + 1)``, seeded by the mean of the first ``n``
    valid values (TA-Lib EMA).

    >>> ema_nb(np.array([1.0, 2.0, 3.0, 4.0]), 2).tolist()
    [nan, 1.5, 2.5, 3.5]
    """
    return ema_seeded_nb(x, n, 2.0 / (n + 1), n - 1)


@njit(cache=True, nogil=True)
def ema_seeded_nb(x: np.ndarray, n: int, k: float, seed_offset: int) -> np.ndarray:
    """Exponential average with factor ``k``, seeded at ``first valid + seed_offset`` by the mean of
    the ``n`` values ending there (TA-Lib's seeding; MACD seeds its fast EMA late).

    >>> ema_seeded_nb(np.array([1.0, 2.0, 3.0, 4.0]), 2, 2.0 / 3.0, 1).tolist()
    [nan, 1.5, 2.5, 3.5]
    """
    out = np.full(x.size, np.nan)
    start = first_valid_nb(x)
    seed = start + seed_offset
    if start < 0 or seed >= x.size or seed - n + 1 < start:
        return out
    total = 0.0
    for i in range(seed - n + 1, seed + 1):
        total += x[i]
    prev = total / n
    out[seed] = prev
    for i in range(seed + 1, x.size):
        prev = ((x[i] - prev) * k) + prev
        out[i] = prev
    return out


@njit(cache=True, nogil=True)
def wma_nb(x: np.ndarray, n: int) -> np.ndarray:
    """Linearly weighted moving average, weights 1..n (TA-Lib WMA's running form, to round-off; its
    sums are kept exact, see `add_exact_nb`, so the value does not depend on the series' start).

    >>> wma_nb(np.array([1.0, 2.0, 3.0]), 2).tolist()
    [nan, 1.6666666666666667, 2.6666666666666665]
    """
    out = np.full(x.size, np.nan)
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


@njit(cache=True, nogil=True)
def wilder_gain_loss_nb(x: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Wilder's average gain and average loss of the changes of ``x``, seeded by the mean of the
    first ``n`` changes (the two halves of TA-Lib's RSI, same operations in the same order).

    >>> gain, loss = wilder_gain_loss_nb(np.array([1.0, 2.0, 1.0, 2.0]), 2)
    >>> gain.tolist(), loss.tolist()
    ([nan, nan, 0.5, 0.75], [nan, nan, 0.5, 0.25])
    """
    gain_out = np.full(x.size, np.nan)
    loss_out = np.full(x.size, np.nan)
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
def rsi_nb(x: np.ndarray, n: int) -> np.ndarray:
    """Wilder's RSI, seeded by the mean gain and loss of the first ``n`` changes (TA-Lib RSI,
    including its convention that a window without any move, average gain + loss below 1e-8,
    reads 0).

    >>> rsi_nb(np.array([1.0, 2.0, 1.0, 2.0]), 2).tolist()
    [nan, nan, 50.0, 75.0]
    >>> rsi_nb(np.ones(4), 2).tolist()
    [nan, nan, 0.0, 0.0]
    """
    gain, loss = wilder_gain_loss_nb(x, n)
    out = np.full(x.size, np.nan)
    for i in range(x.size):
        if not np.isnan(gain[i]):
            out[i] = _rsi_value(gain[i], loss[i])
    return out


@njit(cache=True, nogil=True)
def _rsi_value(gain: float, loss: float) -> float:
    total = gain + loss
    # TA-Lib treats |total| < 1e-8 as zero and reports 0 there.
    if -1e-8 < total < 1e-8:
        return 0.0
    return 100.0 * (gain / total)


@njit(cache=True, nogil=True)
def true_range_nb(high: np.ndarray, low: np.ndarray, close: np.ndarray) -> np.ndarray:
    """True range; undefined on the first candle (TA-Lib TRANGE).

    >>> true_range_nb(np.array([2.0, 5.0]), np.array([1.0, 4.0]), np.array([1.5, 4.5])).tolist()
    [nan, 3.5]
    """
    out = np.full(high.size, np.nan)
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
def atr_nb(high: np.ndarray, low: np.ndarray, close: np.ndarray, n: int) -> np.ndarray:
    """Wilder's average true range, seeded by the mean of the first ``n`` true ranges (TA-Lib ATR).

    >>> atr_nb(np.array([2.0, 5.0, 6.0]), np.array([1.0, 4.0, 4.0]), np.array([1.5, 4.5, 5.0]), 1).tolist()
    [nan, 3.5, 2.0]
    """
    out = np.full(high.size, np.nan)
    if high.size <= n:
        return out
    total = 0.0
    for i in range(1, n + 1):
        total += _true_range(high[i], low[i], close[i - 1])
    prev = total / n
    out[n] = prev
    for i in range(n + 1, high.size):
        prev *= n - 1
        prev += _true_range(high[i], low[i], close[i - 1])
        prev /= n
        out[i] = prev
    return out


@njit(cache=True, nogil=True)
def _true_range(high: float, low: float, prev_close: float) -> float:
    tr = high - low
    up = abs(high - prev_close)
    down = abs(low - prev_close)
    if up > tr:
        tr = up
    if down > tr:
        tr = down
    return tr


@njit(cache=True, nogil=True)
def cross_nb(a: np.ndarray, b: np.ndarray, above: bool) -> np.ndarray:
    """Where `a` crosses `b`: from at-or-below to above (``above``), or from at-or-above to below.
    Comparisons with NaN are false, as in NumPy.

    >>> cross_nb(np.array([1.0, 3.0, 1.0]), np.array([2.0, 2.0, 2.0]), True).tolist()
    [False, True, False]
    """
    out = np.zeros(a.size, np.bool_)
    for i in range(1, a.size):
        if above:
            out[i] = a[i] > b[i] and a[i - 1] <= b[i - 1]
        else:
            out[i] = a[i] < b[i] and a[i - 1] >= b[i - 1]
    return out


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
    out = np.full(x.size, np.nan)
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
    fast = np.full(high.size, np.nan)
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
    out = np.full(high.size, np.nan)
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
    out = np.empty(high.size)
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
    out = np.full(high.size, np.nan)
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
    out = np.full(x.size, np.nan)
    start = first_valid_nb(x)
    if start < 0:
        return out
    for i in range(start + n, x.size):
        old = x[i - n]
        out[i] = ((x[i] / old) - 1.0) * 100.0 if old != 0.0 else 0.0
    return out


@njit(cache=True, nogil=True)
def rolling_std_nb(x: np.ndarray, mean: np.ndarray, n: int) -> np.ndarray:
    """Population standard deviation of the last ``n`` values around a given rolling mean
    (two-pass, so flat windows give exactly 0).

    >>> rolling_std_nb(np.array([1.0, 3.0]), np.array([np.nan, 2.0]), 2).tolist()
    [nan, 1.0]
    """
    out = np.full(x.size, np.nan)
    for i in range(x.size):
        if np.isnan(mean[i]):
            continue
        acc = 0.0
        for j in range(i - n + 1, i + 1):
            d = x[j] - mean[i]
            acc += d * d
        out[i] = np.sqrt(acc / n)
    return out


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
    out = np.full(high.size, np.nan)
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
    out = np.full(high.size, np.nan)
    for i in range(n - 1, high.size):
        pv = 0.0
        vol = 0.0
        for j in range(i - n + 1, i + 1):
            pv += (high[j] + low[j] + close[j]) / 3.0 * volume[j]
            vol += volume[j]
        if vol > 0.0:
            out[i] = pv / vol
    return out


@njit(cache=True, nogil=True)
def run_length_nb(mask: np.ndarray) -> np.ndarray:
    """How many candles in a row, ending at each index, the mask has been true.

    >>> run_length_nb(np.array([True, True, False, True])).tolist()
    [1, 2, 0, 1]
    """
    out = np.zeros(mask.size, np.int64)
    run = 0
    for i in range(mask.size):
        run = run + 1 if mask[i] else 0
        out[i] = run
    return out
