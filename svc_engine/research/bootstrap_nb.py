"""Kernels of the bootstrap: the stationary block bootstrap of per-candle returns (Politis and
Romano, 1994) and the trade-order Monte Carlo of the drawdown.

A resample is n returns made of blocks of the series (circular) that start at uniform positions
and last a geometric number of candles of mean ``mean_block``. Each resample's mean, standard
deviation, compounded return and maximum drawdown are kept, never the resampled path: the path
of whole aligned chunks of ``CHUNK`` candles is read from their precomputed summaries (total log
growth, highest and lowest running level, deepest drawdown inside), so a block of length L costs
about ``CHUNK + L / CHUNK`` steps instead of L.

Example:
    >>> out = np.zeros((2, 4))
    >>> stationary_bootstrap_nb(np.array([0.01, -0.02, 0.03, 0.0]), 2.0, 7, out)
    >>> out.shape, bool(np.all(out[:, 3] >= 0))
    ((2, 4), True)
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

#: Candles per precomputed chunk.
CHUNK = 16
#: Columns of a resample's figures.
MEAN, STD, LOG_GROWTH, MAX_DD_LOG = 0, 1, 2, 3


@njit(cache=True, nogil=True)
def _chunks(r, lg):
    n_ch = r.shape[0] // CHUNK
    out = np.empty((n_ch, 6))  # sum r, sum r^2, total log, max prefix, min prefix, inner drawdown
    for k in range(n_ch):
        s1, s2, x, hi, lo, dd = 0.0, 0.0, 0.0, 0.0, 0.0, 0.0
        for i in range(k * CHUNK, (k + 1) * CHUNK):
            s1 += r[i]
            s2 += r[i] * r[i]
            x += lg[i]
            if x > hi:
                hi = x
            if x < lo:
                lo = x
            if hi - x > dd:
                dd = hi - x
        out[k, 0], out[k, 1], out[k, 2], out[k, 3], out[k, 4], out[k, 5] = s1, s2, x, hi, lo, dd
    return out


@njit(cache=True, nogil=True)
def stationary_bootstrap_nb(r, mean_block, seed, out):
    """Fill ``out`` (resamples, 4) with the mean, standard deviation (ddof 1), total log growth
    and deepest log drawdown of each stationary-bootstrap resample of ``r``; seeded."""
    np.random.seed(seed)
    n = r.shape[0]
    lg = np.log1p(r)
    ch = _chunks(r, lg)
    n_ch = ch.shape[0]
    p = 1.0 / mean_block
    log_q = math.log(1.0 - p) if p < 1.0 else -np.inf
    for rep in range(out.shape[0]):
        s1, s2, x, peak, dd = 0.0, 0.0, 0.0, 0.0, 0.0
        left = n
        while left > 0:
            pos = np.random.randint(0, n)
            u = np.random.random()
            length = 1 if p >= 1.0 else 1 + int(math.log(1.0 - u) / log_q)  # geometric, mean 1/p
            if length > left:
                length = left
            left -= length
            while length > 0:
                k = pos // CHUNK
                if pos % CHUNK == 0 and length >= CHUNK and k < n_ch:
                    s1 += ch[k, 0]
                    s2 += ch[k, 1]
                    # the chunk's deepest fall from the running peak, or inside itself
                    fall = peak - x - ch[k, 4]
                    if ch[k, 5] > fall:
                        fall = ch[k, 5]
                    if fall > dd:
                        dd = fall
                    if x + ch[k, 3] > peak:
                        peak = x + ch[k, 3]
                    x += ch[k, 2]
                    pos += CHUNK
                    length -= CHUNK
                else:
                    v = r[pos]
                    s1 += v
                    s2 += v * v
                    x += lg[pos]
                    if x > peak:
                        peak = x
                    elif peak - x > dd:
                        dd = peak - x
                    pos += 1
                    length -= 1
                if pos >= n:
                    pos = 0  # circular: a block runs on from the first candle
        mean = s1 / n
        var = (s2 - n * mean * mean) / (n - 1) if n > 1 else 0.0
        out[rep, MEAN] = mean
        out[rep, STD] = math.sqrt(var) if var > 0.0 else 0.0
        out[rep, LOG_GROWTH] = x
        out[rep, MAX_DD_LOG] = dd


@njit(cache=True, nogil=True)
def trade_order_drawdowns_nb(factors, seed, out):
    """Fill ``out`` (resamples,) with the deepest drawdown (a fraction of the peak) of the balance
    after each trade when the trades' growth ``factors`` come in a random order (Fisher-Yates)."""
    np.random.seed(seed)
    n = factors.shape[0]
    f = factors.copy()
    for rep in range(out.shape[0]):
        for i in range(n - 1, 0, -1):
            j = np.random.randint(0, i + 1)
            f[i], f[j] = f[j], f[i]
        bal, peak, dd = 1.0, 1.0, 0.0
        for i in range(n):
            bal *= f[i]
            if bal > peak:
                peak = bal
            elif 1.0 - bal / peak > dd:
                dd = 1.0 - bal / peak
        out[rep] = dd
