"""Kernels of the overfitting tests: per-block moments of per-candle returns, and the combination
loop of combinatorially symmetric cross-validation (CSCV).

Array contract: a *moments* array is float64 ``(S, 5)`` per series, or ``(N, S, 5)`` for N cells:
for each of S blocks the count of returns and the sums of ``r``, ``r^2``, ``r^3`` and ``r^4``. Raw
sums add over blocks and over series, so the Sharpe ratio, skewness and kurtosis of any union of
blocks (or of a cell's coins pooled) follow without the returns themselves: that is what keeps a
sweep's memory flat in the number of candles.

Example:
    >>> out = np.zeros((2, 5))
    >>> equity_block_moments_nb(np.array([110.0, 99.0, 99.0, 108.9]), 100.0, out)
    >>> out[:, :2].round(6).tolist()
    [[2.0, 0.0], [2.0, 0.1]]
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

#: Columns of a moments array.
COUNT, S1, S2, S3, S4 = 0, 1, 2, 3, 4


@njit(cache=True, nogil=True)
def _add(out, b, r):
    r2 = r * r
    out[b, COUNT] += 1.0
    out[b, S1] += r
    out[b, S2] += r2
    out[b, S3] += r2 * r
    out[b, S4] += r2 * r2


@njit(cache=True, nogil=True)
def equity_block_moments_nb(eq, initial, out):
    """Add the moments of the per-candle returns of an equity curve (the first return against
    ``initial``) into ``out`` (S, 5): S blocks of equal numbers of candles, in order."""
    n = eq.shape[0]
    s = out.shape[0]
    prev = initial
    for b in range(s):
        # block b holds candles i with floor(i * s / n) == b: sizes within one candle of each other
        lo, hi = -(-(b * n) // s), -(-((b + 1) * n) // s)
        c0, c1, c2, c3, c4 = 0.0, 0.0, 0.0, 0.0, 0.0  # in registers, not in out: a sweep runs this per row
        for i in range(lo, hi):
            r = eq[i] / prev - 1.0 if prev != 0.0 else 0.0  # a wiped-out account stays flat
            r2 = r * r
            c0 += 1.0
            c1 += r
            c2 += r2
            c3 += r2 * r
            c4 += r2 * r2
            prev = eq[i]
        out[b, COUNT] += c0
        out[b, S1] += c1
        out[b, S2] += c2
        out[b, S3] += c3
        out[b, S4] += c4


@njit(cache=True, nogil=True)
def returns_block_moments_nb(r, out):
    """Add the moments of a return series into ``out`` (S, 5), S blocks of equal counts."""
    n = r.shape[0]
    s = out.shape[0]
    for i in range(n):
        _add(out, (i * s) // n, r[i])


@njit(cache=True, nogil=True)
def _sharpe(n, s1, s2):
    if n < 2.0:
        return 0.0
    mean = s1 / n
    var = s2 / n - mean * mean
    # no variation (say, no trade) is no evidence either way: Sharpe 0, not undefined
    return mean / math.sqrt(var) if var > 1e-300 else 0.0


@njit(cache=True, nogil=True)
def cscv_nb(m, half, logits, is_best, oos_best, chosen):
    """CSCV over cells' moments ``m`` (N, S, 5): for every choice of ``half`` = S/2 blocks as the
    in-sample set (the rest out of sample), the cell with the best in-sample Sharpe ratio (the first
    on a tie), its out-of-sample Sharpe and the logit of its relative out-of-sample rank
    ``w = rank / (N + 1)`` (ties share their mean rank). Fills ``logits``, ``is_best``,
    ``oos_best`` and ``chosen`` (one entry per combination, C(S, S/2) of them, in the order of
    the in-sample block sets as bit masks); returns the number of combinations."""
    n_cells, s = m.shape[0], m.shape[1]
    tot = np.zeros((n_cells, 3))
    for c in range(n_cells):
        for b in range(s):
            for j in range(3):
                tot[c, j] += m[c, b, j]
    is_sr = np.empty(n_cells)
    oos_sr = np.empty(n_cells)
    blocks = np.empty(half, np.int64)
    k = 0
    for mask in range(1 << s):
        bits, nb = mask, 0
        while bits:
            bits &= bits - 1
            nb += 1
        if nb != half:
            continue
        j = 0
        for b in range(s):
            if mask >> b & 1:
                blocks[j] = b
                j += 1
        best, best_sr = 0, -np.inf
        for c in range(n_cells):
            n, s1, s2 = 0.0, 0.0, 0.0
            for j in range(half):
                b = blocks[j]
                n += m[c, b, 0]
                s1 += m[c, b, 1]
                s2 += m[c, b, 2]
            # out of sample = the whole minus in sample: half the additions
            is_sr[c] = _sharpe(n, s1, s2)
            oos_sr[c] = _sharpe(tot[c, 0] - n, tot[c, 1] - s1, tot[c, 2] - s2)
            if is_sr[c] > best_sr:
                best, best_sr = c, is_sr[c]
        v = oos_sr[best]
        below, equal = 0, 0
        for c in range(n_cells):
            if oos_sr[c] < v:
                below += 1
            elif oos_sr[c] == v:
                equal += 1
        rank = below + (equal + 1) / 2.0  # 1 .. N, ties at their mean rank
        w = rank / (n_cells + 1.0)
        logits[k] = math.log(w / (1.0 - w))
        is_best[k] = best_sr
        oos_best[k] = v
        chosen[k] = best
        k += 1
    return k
