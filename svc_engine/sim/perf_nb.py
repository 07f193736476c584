"""The numba kernels of the performance statistics (`svc_engine.sim.perf`): one pass over the equity
or the trades each, on contiguous NumPy arrays, with the definitions of the functions of `perf`.

Example:
    >>> import numpy as np
    >>> period_returns_nb(np.array([100.0, 110.0, 0.0])).round(6).tolist()
    [0.1, -1.0]
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def period_returns_nb(eq):
    """Simple returns of consecutive equity values (0 after an equity of 0)."""
    n = eq.shape[0]
    out = np.empty(max(n - 1, 0))
    for k in range(1, n):
        prev = eq[k - 1]
        out[k - 1] = eq[k] / prev - 1.0 if prev > 0 else 0.0
    return out


@njit(cache=True, nogil=True)
def drawdown_duration_nb(eq, t, initial):
    """Longest time (ms) from a running peak of the equity to the first later candle back at it,
    or to the last candle when it never comes back; 0 without a drawdown."""
    peak, peak_t, under, longest = initial, t[0], False, 0
    n = eq.shape[0]
    for k in range(n):
        peak, peak_t, under, longest = peak_step_nb(eq[k], t[k], peak, peak_t, under, longest)
    if under:
        longest = max(longest, t[n - 1] - peak_t)
    return longest


@njit(cache=True, nogil=True, inline="always")
def peak_step_nb(value, time, peak, peak_t, under, longest):
    """One candle of `drawdown_duration_nb`: (peak, its time, under it?, longest so far)."""
    if value >= peak:
        if under:
            longest = max(longest, time - peak_t)
        return value, time, False, longest
    return peak, peak_t, True, longest


@njit(cache=True, nogil=True)
def moments_nb(eq, rf):
    """One kernel for the equity figures, with the definitions of :func:`annual_volatility_pct`,
    :func:`sharpe_ratio` and :func:`sortino_ratio`: (returns, standard deviation of the returns,
    mean excess return, standard deviation of the excess, downside deviation), two passes, no
    array of returns kept."""
    n = eq.shape[0] - 1
    if n < 1:
        return 0, 0.0, 0.0, 0.0, 0.0
    total = 0.0
    total_ex = 0.0
    for k in range(1, n + 1):
        r = eq[k] / eq[k - 1] - 1.0 if eq[k - 1] > 0 else 0.0
        total += r
        total_ex += r - rf
    mean, mean_ex = total / n, total_ex / n
    var = var_ex = down = 0.0
    for k in range(1, n + 1):
        r = eq[k] / eq[k - 1] - 1.0 if eq[k - 1] > 0 else 0.0
        var += (r - mean) ** 2
        ex = r - rf
        var_ex += (ex - mean_ex) ** 2
        if ex < 0:
            down += ex * ex
    sd = np.sqrt(var / (n - 1)) if n > 1 else 0.0
    sd_ex = np.sqrt(var_ex / (n - 1)) if n > 1 else 0.0
    return n, sd, mean_ex, sd_ex, np.sqrt(down / n)


@njit(cache=True, nogil=True)
def exposure_nb(n_candles, fill_idx, exit_idx):
    """Candles inside at least one ``fill .. exit`` span (inclusive): the spans' union, merged
    in fill order, in time proportional to the trades, not the candles. Trades already in fill
    order (one coin's sequential run) are merged as they come: the stable sort would leave them so,
    and skipping it saves most of the time on 90,000 trades."""
    m = fill_idx.shape[0]
    if m == 0:
        return 0
    ordered = True
    for x in range(1, m):
        if fill_idx[x] < fill_idx[x - 1]:
            ordered = False
            break
    order = np.arange(m) if ordered else np.argsort(fill_idx, kind="mergesort")
    inside = 0
    lo, hi = fill_idx[order[0]], exit_idx[order[0]]
    for x in range(1, m):
        a, b = fill_idx[order[x]], exit_idx[order[x]]
        if a > hi + 1:
            inside += hi - lo + 1
            lo, hi = a, b
        elif b > hi:
            hi = b
    inside += hi - lo + 1
    return min(inside, n_candles)


@njit(cache=True, nogil=True)
def trade_moments_nb(returns, profits, fill_ms, exit_ms):
    """One pass (two for the deviation) over the trades for :func:`expectancy_pct`, :func:`sqn`
    and the trade durations: (mean return, mean profit, profit deviation (ddof 1), mean duration
    ms, longest duration ms)."""
    n = returns.shape[0]
    if n == 0:
        return 0.0, 0.0, 0.0, 0.0, 0
    sr = sp = sd = 0.0
    longest = exit_ms[0] - fill_ms[0]
    for x in range(n):
        sr += returns[x]
        sp += profits[x]
        d = exit_ms[x] - fill_ms[x]
        sd += d
        longest = max(longest, d)
    mp = sp / n
    var = 0.0
    for x in range(n):
        var += (profits[x] - mp) ** 2
    dev = np.sqrt(var / (n - 1)) if n > 1 else 0.0
    return sr / n, mp, dev, sd / n, longest


@njit(cache=True, nogil=True)
def trade_counts_nb(returns, profits):
    """One pass for the trade figures of ``stats.trade_summary``: (gains, losses, profit of gains,
    profit of losses, sum of returns, of gains' returns, of losses' returns, best, worst)."""
    gains = losses = 0
    gp = lp = sr = sg = sl = 0.0
    best, worst = -np.inf, np.inf
    for x in range(returns.shape[0]):
        p, r = profits[x], returns[x]
        sr += r
        if p > 0:
            gains += 1
            gp += p
            sg += r
        elif p < 0:
            losses += 1
            lp += p
            sl += r
        best = max(best, r)
        worst = min(worst, r)
    return gains, losses, gp, lp, sr, sg, sl, best, worst
