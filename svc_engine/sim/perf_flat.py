"""The equity figures of one coin's run, whose equity is flat between trades: it moves only from a
trade's fill candle to its exit candle, so the kernels of `perf_nb` need only those spans.

``lo``/``hi`` are sorted, disjoint candle spans (inclusive); outside them ``eq[k] == eq[k - 1]``,
so the return of such a candle is 0 (the equity stays at the cash between two trades). The
kernels walk the spans candle by candle and add a stretch's constant terms with
:func:`repeat_add_nb`, which rounds exactly as one addition per candle would: the results are
those of :func:`~svc_engine.sim.perf_nb.moments_nb` and
:func:`~svc_engine.sim.perf_nb.drawdown_duration_nb`, bit for bit, in time proportional to the
candles inside trades.

Example:
    >>> eq = np.array([100.0, 100.0, 110.0, 99.0, 99.0, 99.0])
    >>> equity_moments(eq, np.arange(6), 100.0, 0.0, np.array([2]), np.array([3]))[-1]
    3
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from svc_engine.sim.perf_nb import drawdown_duration_nb, moments_nb, peak_step_nb


def equity_moments(
    eq: np.ndarray,
    t: np.ndarray,
    initial: float,
    rf: float,
    fill_idx: np.ndarray,
    exit_idx: np.ndarray,
    *,
    sequential: bool = True,
) -> tuple[int, float, float, float, float, int]:
    """(returns, sd, mean excess, sd of the excess, downside deviation) of
    :func:`~svc_engine.sim.perf_nb.moments_nb` and the longest drawdown (ms) of
    :func:`~svc_engine.sim.perf_nb.drawdown_duration_nb` (0 for no candle). With ``sequential``
    and trades sorted and disjoint, only the trades' spans are walked; otherwise every candle.

    Example:
        >>> equity_moments(np.array([100.0, 90.0]), np.array([0, 1]), 100.0, 0.0,
        ...                np.array([1]), np.array([1]), sequential=False)[-1]
        1
    """
    eq = np.ascontiguousarray(eq, dtype=np.float64)
    t = np.ascontiguousarray(t, dtype=np.int64)
    lo = np.ascontiguousarray(fill_idx, dtype=np.int64)
    hi = np.ascontiguousarray(exit_idx, dtype=np.int64)
    spans = sequential and lo.shape == hi.shape and not (np.any(lo > hi) or np.any(lo[1:] <= hi[:-1]))
    moments = moments_spans_nb(eq, rf, lo, hi) if spans else moments_nb(eq, rf)
    if eq.shape[0] == 0:
        return (*moments, 0)
    if spans:
        return (*moments, int(drawdown_duration_spans_nb(eq, t, float(initial), lo, hi)))
    return (*moments, int(drawdown_duration_nb(eq, t, float(initial))))


@njit(cache=True, nogil=True)
def repeat_add_nb(x, c, m):
    """``x + c + c + ... + c`` with ``m`` additions, each rounded, in that order, exactly, in a few
    steps per binade ``x`` crosses: inside one binade the rounded step is a fixed number of ulps.

    Example:
        >>> x = 0.1
        >>> for _ in range(1000):
        ...     x += 1e-17
        >>> repeat_add_nb(0.1, 1e-17, 1000) == x, repeat_add_nb(1.0, 3e-17, 10**9)
        (True, 1.0)
    """
    while m > 0:
        if c == 0.0 or not (np.isfinite(x) and np.isfinite(c)):
            return x + c  # the further additions leave it as it is
        ax, ac = abs(x), abs(c)
        if (x < 0) != (c < 0) or ax <= ac or ax < 2.2250738585072014e-308:
            x += c  # opposite signs, a large step or a subnormal sum: one at a time
            m -= 1
            continue
        mant, e = math.frexp(ax)  # the ulp of x is u = 2 ** (e - 53); x = big * u
        big = np.int64(math.ldexp(mant, 53))
        step = math.ldexp(ac, 53 - e)  # c in ulps, below big
        whole = np.int64(math.floor(step))
        frac = step - math.floor(step)
        if frac > 0.5:
            d = whole + 1
        elif frac < 0.5:
            d = whole
        elif big % 2 == 0:
            d = whole + whole % 2  # a tie rounds to even, which keeps big even
        else:
            x += c
            m -= 1
            continue
        if d == 0:
            return x
        room = np.int64(2**53) - big - whole - 1  # steps j with (j - 1) * d <= room stay in the binade
        if room < 0:
            x += c
            m -= 1
            continue
        k = min(m, room // d + 1)
        x = math.copysign(math.ldexp(float(big + k * d), e - 53), x)
        m -= k
    return x


@njit(cache=True, nogil=True, inline="always")
def candle_return_nb(eq, k):
    return eq[k] / eq[k - 1] - 1.0 if eq[k - 1] > 0 else 0.0


@njit(cache=True, nogil=True, inline="always")
def flat_stop_nb(lo, x, n):
    """First return index of span ``x`` (past the end after the last span)."""
    return min(lo[x], n + 1) if x < lo.shape[0] else n + 1


@njit(cache=True, nogil=True, inline="always")
def sums_step_nb(eq, rf, ex0, lo, hi, x, n, k, total, total_ex):
    """Span ``x`` (``lo.shape[0]``: the stretch after the last) of the first loop of
    `moments_spans_nb`, from return index ``k``."""
    stop = flat_stop_nb(lo, x, n)
    if stop > k and eq[k - 1] < np.inf:  # inf / inf is no 0: such candles go one by one
        total = repeat_add_nb(total, 0.0, stop - k)
        total_ex = repeat_add_nb(total_ex, ex0, stop - k)
        k = stop
    end = min(hi[x], n) if x < lo.shape[0] else n
    for j in range(k, end + 1):
        r = candle_return_nb(eq, j)
        total += r
        total_ex += r - rf
    return max(k, end + 1), total, total_ex


@njit(cache=True, nogil=True)
def moments_spans_nb(eq, rf, lo, hi):
    """:func:`~svc_engine.sim.perf_nb.moments_nb` of an equity that moves only inside the spans
    ``lo[x] .. hi[x]``.

    Example:
        >>> eq = np.array([100.0, 100.0, 110.0, 99.0, 99.0, 99.0])
        >>> moments_spans_nb(eq, 0.0, np.array([2]), np.array([3])) == moments_nb(eq, 0.0)
        True
    """
    n = eq.shape[0] - 1
    if n < 1:
        return 0, 0.0, 0.0, 0.0, 0.0
    ex0 = 0.0 - rf  # a flat candle's excess return
    total = total_ex = 0.0
    k = 1
    for x in range(lo.shape[0] + 1):
        k, total, total_ex = sums_step_nb(eq, rf, ex0, lo, hi, x, n, k, total, total_ex)
    mean, mean_ex = total / n, total_ex / n
    c_var, c_var_ex = (0.0 - mean) ** 2, (ex0 - mean_ex) ** 2
    var = var_ex = down = 0.0
    k = 1
    for x in range(lo.shape[0] + 1):
        stop = flat_stop_nb(lo, x, n)
        if stop > k and eq[k - 1] < np.inf:
            var = repeat_add_nb(var, c_var, stop - k)
            var_ex = repeat_add_nb(var_ex, c_var_ex, stop - k)
            if ex0 < 0:
                down = repeat_add_nb(down, ex0 * ex0, stop - k)
            k = stop
        end = min(hi[x], n) if x < lo.shape[0] else n
        for j in range(k, end + 1):
            r = candle_return_nb(eq, j)
            var += (r - mean) ** 2
            ex = r - rf
            var_ex += (ex - mean_ex) ** 2
            if ex < 0:
                down += ex * ex
        k = max(k, end + 1)
    sd = np.sqrt(var / (n - 1)) if n > 1 else 0.0
    sd_ex = np.sqrt(var_ex / (n - 1)) if n > 1 else 0.0
    return n, sd, mean_ex, sd_ex, np.sqrt(down / n)


@njit(cache=True, nogil=True)
def drawdown_duration_spans_nb(eq, t, initial, lo, hi):
    """:func:`~svc_engine.sim.perf_nb.drawdown_duration_nb` of an equity that moves only inside
    the spans ``lo[x] .. hi[x]``: of a stretch at one value only its last candle can change the
    state (the time of the peak), so the others are skipped.

    Example:
        >>> eq, t = np.array([100.0, 100.0, 90.0, 95.0, 95.0, 95.0]), np.arange(6)
        >>> drawdown_duration_spans_nb(eq, t, 100.0, np.array([2]), np.array([3]))
        4
    """
    n = eq.shape[0] - 1
    peak, peak_t, under, longest = initial, t[0], False, 0
    k = 0
    for x in range(lo.shape[0] + 2):
        if x == 0:
            end = 0  # candle 0 on its own
        else:
            stop = flat_stop_nb(lo, x - 1, n)
            end = min(hi[x - 1], n) if x - 1 < lo.shape[0] else n
            if stop > k:
                k = stop - 1  # the stretch's last candle stands for it
        for j in range(k, end + 1):
            peak, peak_t, under, longest = peak_step_nb(eq[j], t[j], peak, peak_t, under, longest)
        k = max(k, end + 1)
    if under:
        longest = max(longest, t[n] - peak_t)
    return longest
