"""One coin's sequential run: equity, max drawdown, the sums of the returns and the longest
drawdown in one pass over the candles, then the deviations in a second pass over the trades'
spans only.

The statistics used to walk the candles three more times after
:func:`~svc_engine.sim.kernels.equity.equity_drawdown_nb` wrote the equity
(:func:`~svc_engine.sim.perf_flat.moments_spans_nb` twice, then
:func:`~svc_engine.sim.perf_flat.drawdown_duration_spans_nb`). Here each trade's candles are
summed right after they are written, while they are still in the cache: the same operations in
the same order as those kernels, so every figure is the same bit for bit, but the equity comes
back from memory once (for the deviations, which need the mean first), not three times.

Example:
    >>> from svc_engine.sim.kernels.records import TRADE_DTYPE
    >>> eq = np.empty(3)
    >>> equity_stats_nb(np.ones(3), np.zeros(0, TRADE_DTYPE), 100.0, 0.0, 1.0, 0.0, eq,
    ...                 np.arange(3), 0.0)[:2], eq.tolist()
    ((0.0, 2), [100.0, 100.0, 100.0])
"""

from __future__ import annotations

import numpy as np
from numba import njit

from svc_engine.sim.calendars import period_rate, periods_per_year
from svc_engine.sim.kernels.equity import flat_segment_nb, trade_stretch_nb
from svc_engine.sim.perf_flat import candle_return_nb, flat_stop_nb, repeat_add_nb, sums_step_nb
from svc_engine.sim.perf_nb import peak_step_nb


def fusable(fill_idx: np.ndarray, exit_idx: np.ndarray, n_candles: int) -> bool:
    """Whether :func:`equity_stats_nb` applies: at least two candles, spans sorted and disjoint
    (the test of :func:`~svc_engine.sim.perf_flat.equity_moments`; a reversal's successor fills on
    its predecessor's exit candle, which fails it).

    Example:
        >>> fusable(np.array([1, 5]), np.array([3, 6]), 10), fusable(np.array([1, 3]), np.array([3, 6]), 10)
        (True, False)
    """
    lo, hi = fill_idx, exit_idx
    return n_candles >= 2 and not (np.any(lo > hi) or np.any(lo[1:] <= hi[:-1]))


def equity_rate(tf_ms: int, market: str | None, risk_free_rate: float, periods: float | None) -> float:
    """The per-candle risk-free rate of :func:`~svc_engine.sim.perf.statistics`.

    Example:
        >>> equity_rate(86_400_000, "crypto", 0.0, None)
        0.0
    """
    return period_rate(risk_free_rate, periods if periods is not None else periods_per_year(tf_ms, market))


def equity_stats(
    c: np.ndarray,
    trades: np.ndarray,
    initial: float,
    comm: float,
    lev: float,
    hs: float,
    eq: np.ndarray,
    t: np.ndarray,
    rate: float,
) -> tuple[float, tuple[int, float, float, float, float, int]]:
    """(max drawdown %, the ``moments`` of :func:`~svc_engine.sim.perf.statistics`) of
    :func:`equity_stats_nb`, the equity into ``eq``; ``rate`` of :func:`equity_rate`.

    Example:
        >>> from svc_engine.sim.kernels.records import TRADE_DTYPE
        >>> equity_stats(np.ones(3), np.zeros(0, TRADE_DTYPE), 100.0, 0.0, 1.0, 0.0, np.empty(3),
        ...              np.arange(3), 0.0)
        (0.0, (2, 0.0, 0.0, 0.0, 0.0, 0))
    """
    worst, n, sd, mean_ex, sd_ex, down, longest = equity_stats_nb(
        c, trades, initial, comm, lev, hs, eq, t, rate
    )
    return float(worst), (int(n), float(sd), float(mean_ex), float(sd_ex), float(down), int(longest))


@njit(cache=True, nogil=True, inline="always")
def _duration_step(eq, t, lo, hi, x, n, k, peak, peak_t, under, longest):
    """Span ``x`` of `drawdown_duration_spans_nb` (candle 0 is its own step before span 0)."""
    stop = flat_stop_nb(lo, x, n)
    end = min(hi[x], n) if x < lo.shape[0] else n
    if stop > k:
        k = stop - 1  # the stretch's last candle stands for it
    for j in range(k, end + 1):
        peak, peak_t, under, longest = peak_step_nb(eq[j], t[j], peak, peak_t, under, longest)
    return max(k, end + 1), peak, peak_t, under, longest


@njit(cache=True, nogil=True)
def _spread_nb(eq, rf, lo, hi, mean, mean_ex):
    """The second loop of `moments_spans_nb`: (sum of squared deviations of the returns, of the
    excess returns, sum of squared negative excess returns). With no risk-free rate an excess
    return is the return (``r - 0.0 == r``: a return is never -0.0) and the mean excess the mean,
    so the second sum is the first, bit for bit, and is not worked out twice."""
    n = eq.shape[0] - 1
    ex0 = 0.0 - rf
    c_var, c_var_ex = (0.0 - mean) ** 2, (ex0 - mean_ex) ** 2
    same = rf == 0.0 and mean == mean_ex
    var = var_ex = down = 0.0
    k = 1
    for x in range(lo.shape[0] + 1):
        stop = flat_stop_nb(lo, x, n)
        if stop > k and eq[k - 1] < np.inf:
            var = repeat_add_nb(var, c_var, stop - k)
            if not same:
                var_ex = repeat_add_nb(var_ex, c_var_ex, stop - k)
            if ex0 < 0:
                down = repeat_add_nb(down, ex0 * ex0, stop - k)
            k = stop
        end = min(hi[x], n) if x < lo.shape[0] else n
        for j in range(k, end + 1):
            r = candle_return_nb(eq, j)
            var += (r - mean) ** 2
            ex = r - rf
            if not same:
                var_ex += (ex - mean_ex) ** 2
            if ex < 0:
                down += ex * ex
        k = max(k, end + 1)
    return var, var if same else var_ex, down


@njit(cache=True, nogil=True)
def equity_stats_nb(c, trades, initial, comm, lev, hs, eq, t, rf):
    """:func:`~svc_engine.sim.kernels.equity.equity_drawdown_nb` (into ``eq``; no drawdown array),
    then (max drawdown %, returns, sd, mean excess, sd of the excess, downside deviation, longest
    drawdown ms) as `moments_spans_nb` and `drawdown_duration_spans_nb` give them, bit for bit.
    Needs `fusable` of the trades' fill and exit candles."""
    n = eq.shape[0] - 1
    m = trades.shape[0]
    lo = np.empty(m, np.int64)
    hi = np.empty(m, np.int64)
    for x in range(m):
        lo[x], hi[x] = trades[x].fill_candle, trades[x].exit_candle
    ex0 = 0.0 - rf
    total = total_ex = 0.0
    ks, kd = 1, 0
    dpeak, dpeak_t, under, longest = initial, t[0], False, 0
    cash, peak, worst, pos = initial, initial, 0.0, 0
    for x in range(m + 1):
        if x < m:  # the equity as `equity_drawdown_nb` writes it, up to this trade's exit candle
            j = trades[x].exit_candle
            peak, worst = trade_stretch_nb(eq, None, c, trades[x], pos, cash, peak, worst, comm, lev, hs)
            cash += trades[x].profit
            peak, worst = flat_segment_nb(eq, None, j, j + 1, cash, peak, worst)
            pos = j + 1
        else:
            peak, worst = flat_segment_nb(eq, None, pos, eq.shape[0], cash, peak, worst)
        # then the same candles, still in the cache, for the sums and the drawdown's duration
        ks, total, total_ex = sums_step_nb(eq, rf, ex0, lo, hi, x, n, ks, total, total_ex)
        if x == 0:  # candle 0 on its own
            dpeak, dpeak_t, under, longest = peak_step_nb(eq[0], t[0], dpeak, dpeak_t, under, longest)
            kd = 1
        kd, dpeak, dpeak_t, under, longest = _duration_step(
            eq, t, lo, hi, x, n, kd, dpeak, dpeak_t, under, longest
        )
    if under:
        longest = max(longest, t[n] - dpeak_t)
    mean, mean_ex = total / n, total_ex / n
    var, var_ex, down = _spread_nb(eq, rf, lo, hi, mean, mean_ex)
    sd = np.sqrt(var / (n - 1)) if n > 1 else 0.0
    sd_ex = np.sqrt(var_ex / (n - 1)) if n > 1 else 0.0
    return worst, n, sd, mean_ex, sd_ex, np.sqrt(down / n), longest
