"""Trend-strength and stop-and-reverse kernels: ADX/+DI/-DI, Aroon, Parabolic SAR, Supertrend,
Ichimoku. Same contract as `svc_engine.indicators.core`: float64 in, float64 out of the same length,
NaN during the warm-up, causal.

ADX, +DI, -DI, Aroon and SAR follow TA-Lib's seeding and operation order; Supertrend and Ichimoku,
which TA-Lib lacks, follow their authors' definitions (documented on each kernel).

Example:
    >>> import numpy as np
    >>> high = np.array([10.0, 11.0, 12.0, 11.5, 13.0])
    >>> aroon_nb(high, high - 1.0, 2)[0].tolist()
    [nan, nan, 100.0, 50.0, 100.0]
"""

from __future__ import annotations

import numpy as np
from numba import njit

from svc_engine.indicators.ranges import atr_nb, rolling_max_nb, rolling_min_nb
from svc_engine.scratch import nans_nb


@njit(cache=True, nogil=True)
def _is_zero(x: float) -> bool:
    return -1e-8 < x < 1e-8


@njit(cache=True, nogil=True)
def _true_range(high: float, low: float, prev_close: float) -> float:
    tr = high - low
    up = abs(high - prev_close)
    if up > tr:
        tr = up
    down = abs(low - prev_close)
    if down > tr:
        tr = down
    return tr


@njit(cache=True, nogil=True)
def _directional_moves(diff_plus: float, diff_minus: float) -> tuple[float, float]:
    """+DM and -DM of one candle (Wilder: only the larger move counts, and only when positive)."""
    if diff_minus > 0 and diff_plus < diff_minus:
        return 0.0, diff_minus
    if diff_plus > 0 and diff_plus > diff_minus:
        return diff_plus, 0.0
    return 0.0, 0.0


@njit(cache=True, nogil=True)
def dmi_nb(
    high: np.ndarray, low: np.ndarray, close: np.ndarray, n: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """+DI, -DI (from index ``n``) and ADX (from index ``2n - 1``), Wilder's directional movement
    system as TA-Lib computes PLUS_DI, MINUS_DI and ADX.

    The smoothed +DM, -DM and TR start as the sums of the first ``n - 1`` candles' values; each
    later candle applies ``s - s / n + value``; DI = 100 * DM / TR (0 where TR is below 1e-8);
    ADX starts as the mean of the first ``n`` DX values and then follows Wilder's average, keeping
    its value on a candle whose DX is undefined.

    >>> h = np.array([10.0, 11.0, 12.0, 11.0, 13.0]); l = h - 2.0
    >>> plus, minus, adx = dmi_nb(h, l, h - 1.0, 2)
    >>> plus.tolist()[2:], minus.tolist()[2:]
    ([50.0, 21.428571428571427, 50.0], [0.0, 28.57142857142857, 10.526315789473683])
    >>> adx.tolist()[3:]
    [57.14285714285714, 61.18012422360248]
    """
    size = high.size
    plus_di = nans_nb(size)
    minus_di = nans_nb(size)
    adx = nans_nb(size)
    if size <= n or n < 1:
        return plus_di, minus_di, adx
    plus_dm = 0.0
    minus_dm = 0.0
    tr = 0.0
    for i in range(1, n):
        p, m = _directional_moves(high[i] - high[i - 1], low[i - 1] - low[i])
        plus_dm += p
        minus_dm += m
        tr += _true_range(high[i], low[i], close[i - 1])
    sum_dx = 0.0
    prev_adx = 0.0
    for i in range(n, size):
        p, m = _directional_moves(high[i] - high[i - 1], low[i - 1] - low[i])
        minus_dm -= minus_dm / n
        plus_dm -= plus_dm / n
        minus_dm += m
        plus_dm += p
        tr = tr - tr / n + _true_range(high[i], low[i], close[i - 1])
        dx = np.nan
        if not _is_zero(tr):
            mdi = 100.0 * (minus_dm / tr)
            pdi = 100.0 * (plus_dm / tr)
            plus_di[i] = pdi
            minus_di[i] = mdi
            total = mdi + pdi
            if not _is_zero(total):
                dx = 100.0 * (abs(mdi - pdi) / total)
        else:
            plus_di[i] = 0.0
            minus_di[i] = 0.0
        if i < 2 * n - 1:
            if not np.isnan(dx):
                sum_dx += dx
        elif i == 2 * n - 1:
            if not np.isnan(dx):
                sum_dx += dx
            prev_adx = sum_dx / n
            adx[i] = prev_adx
        else:
            if not np.isnan(dx):
                prev_adx = (prev_adx * (n - 1) + dx) / n
            adx[i] = prev_adx
    return plus_di, minus_di, adx


@njit(cache=True, nogil=True)
def aroon_nb(high: np.ndarray, low: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Aroon up, down and oscillator over the last ``n + 1`` candles (TA-Lib AROON, AROONOSC):
    ``100 / n * (n - candles since the highest high)``; of equal extremes the latest counts.

    >>> low = np.array([5.0, 4.0, 6.0, 7.0])
    >>> aroon_nb(low + 2.0, low, 2)[1].tolist()
    [nan, nan, 50.0, 0.0]
    """
    size = high.size
    up = nans_nb(size)
    down = nans_nb(size)
    osc = nans_nb(size)
    factor = 100.0 / n
    hi_idx = -1
    lo_idx = -1
    for t in range(size):
        start = max(t - n, 0)
        # The extreme is rescanned only when it leaves the window (amortised cheap on prices).
        if hi_idx < start:
            hi_idx = start
            for j in range(start + 1, t + 1):
                if high[j] >= high[hi_idx]:
                    hi_idx = j
        elif high[t] >= high[hi_idx]:
            hi_idx = t
        if lo_idx < start:
            lo_idx = start
            for j in range(start + 1, t + 1):
                if low[j] <= low[lo_idx]:
                    lo_idx = j
        elif low[t] <= low[lo_idx]:
            lo_idx = t
        if t < n:
            continue
        up[t] = factor * (n - (t - hi_idx))
        down[t] = factor * (n - (t - lo_idx))
        osc[t] = factor * (hi_idx - lo_idx)
    return up, down, osc


@njit(cache=True, nogil=True)
def sar_nb(high: np.ndarray, low: np.ndarray, acceleration: float, maximum: float) -> np.ndarray:
    """Parabolic SAR (TA-Lib SAR): the first direction is short when the second candle's low fell
    further than its high rose, long otherwise; the stop moves by ``af * (extreme - stop)``, never
    into the last two candles' range, and flips to the extreme point when price touches it.

    >>> sar_nb(np.array([10.0, 11.0, 12.0, 13.0]), np.array([9.0, 10.0, 11.0, 12.0]), 0.02, 0.2).tolist()
    [nan, 9.0, 9.04, 9.158399999999999]
    """
    size = high.size
    out = nans_nb(size)
    if size < 2:
        return out
    if acceleration > maximum:
        acceleration = maximum
    af = acceleration
    _, minus_dm = _directional_moves(high[1] - high[0], low[0] - low[1])
    is_long = not (minus_dm > 0)
    if is_long:
        ep = high[1]
        sar = low[0]
    else:
        ep = low[1]
        sar = high[0]
    new_low = low[1]
    new_high = high[1]
    for t in range(1, size):
        prev_low = new_low
        prev_high = new_high
        new_low = low[t]
        new_high = high[t]
        if is_long:
            if new_low <= sar:
                is_long = False
                sar = ep
                if sar < prev_high:
                    sar = prev_high
                if sar < new_high:
                    sar = new_high
                out[t] = sar
                af = acceleration
                ep = new_low
                sar = sar + af * (ep - sar)
                if sar < prev_high:
                    sar = prev_high
                if sar < new_high:
                    sar = new_high
            else:
                out[t] = sar
                if new_high > ep:
                    ep = new_high
                    af += acceleration
                    if af > maximum:
                        af = maximum
                sar = sar + af * (ep - sar)
                if sar > prev_low:
                    sar = prev_low
                if sar > new_low:
                    sar = new_low
        else:
            if new_high >= sar:
                is_long = True
                sar = ep
                if sar > prev_low:
                    sar = prev_low
                if sar > new_low:
                    sar = new_low
                out[t] = sar
                af = acceleration
                ep = new_high
                sar = sar + af * (ep - sar)
                if sar > prev_low:
                    sar = prev_low
                if sar > new_low:
                    sar = new_low
            else:
                out[t] = sar
                if new_low < ep:
                    ep = new_low
                    af += acceleration
                    if af > maximum:
                        af = maximum
                sar = sar + af * (ep - sar)
                if sar < prev_high:
                    sar = prev_high
                if sar < new_high:
                    sar = new_high
    return out


@njit(cache=True, nogil=True)
def supertrend_nb(
    high: np.ndarray, low: np.ndarray, close: np.ndarray, n: int, mult: float
) -> tuple[np.ndarray, np.ndarray]:
    """Supertrend line and direction (+1 up, -1 down), from index ``n`` (Olivier Seban's
    definition as TradingView plots it, on TA-Lib's ATR):

    bands ``(high + low) / 2 +- mult * ATR(n)``; the upper band only falls (the lower only rises)
    unless the previous close left it; the trend turns up when close rises above the upper band and
    down when close falls below the lower band, and starts down; the line is the lower band in an
    up trend and the upper band in a down trend.

    >>> h = np.array([10.0, 11.0, 12.0, 13.0, 20.0]); l = h - 1.0  # turns up at 3: 12.5 > 12
    >>> line, way = supertrend_nb(h, l, h - 0.5, 1, 1.0)
    >>> way.tolist()
    [nan, -1.0, -1.0, 1.0, 1.0]
    """
    size = high.size
    atr = atr_nb(high, low, close, n)
    line = nans_nb(size)
    way = nans_nb(size)
    upper = 0.0
    lower = 0.0
    trend = -1.0
    started = False
    for t in range(size):
        if np.isnan(atr[t]):
            continue
        mid = (high[t] + low[t]) / 2.0
        basic_upper = mid + mult * atr[t]
        basic_lower = mid - mult * atr[t]
        if not started:
            upper, lower = basic_upper, basic_lower
            started = True
        else:
            prev_close = close[t - 1]
            if basic_upper < upper or prev_close > upper:
                upper = basic_upper
            if basic_lower > lower or prev_close < lower:
                lower = basic_lower
            if trend < 0 and close[t] > upper:
                trend = 1.0
            elif trend > 0 and close[t] < lower:
                trend = -1.0
        way[t] = trend
        line[t] = lower if trend > 0 else upper
    return line, way


@njit(cache=True, nogil=True)
def ichimoku_nb(
    high: np.ndarray, low: np.ndarray, tenkan_n: int, kijun_n: int, senkou_n: int, shift: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Ichimoku tenkan-sen, kijun-sen, and the senkou spans A and B as they stand under candle
    ``t`` (Goichi Hosoda's definition): midpoints of the highest high and lowest low of the last
    ``tenkan_n``, ``kijun_n``, ``senkou_n`` candles; span A = (tenkan + kijun) / 2 and span B the
    ``senkou_n`` midpoint, both computed ``shift`` candles earlier (charts plot them ahead; read at
    ``t`` they use candles up to ``t - shift`` only).

    >>> h = np.arange(1.0, 7.0); l = h - 1.0
    >>> tenkan, kijun, a, b = ichimoku_nb(h, l, 2, 3, 4, 2)
    >>> tenkan.tolist()[1:3], a.tolist()[4:]
    ([1.0, 2.0], [1.75, 2.75])
    """
    tenkan = (rolling_max_nb(high, tenkan_n) + rolling_min_nb(low, tenkan_n)) / 2.0
    kijun = (rolling_max_nb(high, kijun_n) + rolling_min_nb(low, kijun_n)) / 2.0
    span_b_now = (rolling_max_nb(high, senkou_n) + rolling_min_nb(low, senkou_n)) / 2.0
    span_a_now = (tenkan + kijun) / 2.0
    size = high.size
    span_a = nans_nb(size)
    span_b = nans_nb(size)
    for t in range(shift, size):
        span_a[t] = span_a_now[t - shift]
        span_b[t] = span_b_now[t - shift]
    return tenkan, kijun, span_a, span_b
