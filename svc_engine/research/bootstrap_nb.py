"""Kernels of the bootstrap: the stationary block bootstrap of per-candle returns (Politis and
Romano, 1994) and the trade-order Monte Carlo of the drawdown.

A resample is n returns made of blocks of the series (circular) that start at uniform positions
and last a geometric number of candles of mean ``mean_block``. Each resample's mean, standard
deviation, compounded return and maximum drawdown are kept, never the resampled path.

Why it is fast (1,000 resamples of 4.35 M candles are 4.35 G candle steps otherwise):

- Levels are absolute: ``C[j]`` is the log growth of the first j candles, so a block from a to b
  adds ``C[b] - C[a]`` and its levels are ``C[j] - C[a]``; nothing is summed along the block.
- Whole aligned chunks of ``CHUNK`` candles inside a block are read from a table (highest,
  lowest level, deepest drawdown inside), and their sums of r and r^2 from prefix sums at chunk
  bounds; only the head and the tail of a block (under ``CHUNK`` candles each) are stepped.
- Positions and lengths come from a splitmix64 generator inlined in the kernel (Steele, Lea and
  Flood, 2014), seeded with ``seed``: np.random's call per draw cost more than the block.
- A candle's return and level sit side by side (one cache line per 4 candles): the random block
  starts, not the arithmetic, are what the kernel waits on.

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
_BATCH = 64  # blocks drawn before they are walked
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)


@njit(inline="always")
def _splitmix(s):
    s = s + _GOLDEN
    z = s
    z = (z ^ (z >> np.uint64(30))) * _MIX1
    z = (z ^ (z >> np.uint64(27))) * _MIX2
    return s, (z ^ (z >> np.uint64(31))) >> np.uint64(11)  # 53 random bits


@njit(inline="always")
def _draw(s, n, inv_log_q):
    """One block: a uniform start in [0, n) and a geometric length of mean 1/p (inverse CDF)."""
    s, z = _splitmix(s)
    start = int(z * (1.0 / 9007199254740992.0) * n)
    s, z = _splitmix(s)
    u = (z + 1) * (1.0 / 9007199254740992.0)  # (0, 1]
    length = 1 + int(math.log(u) * inv_log_q) if inv_log_q < 0.0 else 1
    return s, start, length


@njit(cache=True, nogil=True)
def tables_nb(r):
    """The series as the kernel reads it: ``pc`` (n + 1, 2) each candle's return and the level
    before it, ``ch`` (chunks, 4) each chunk's highest and lowest level and inner drawdown, and
    ``cs`` (chunks + 1, 2) the sums of r and r^2 before each chunk."""
    n = r.shape[0]
    pc = np.empty((n + 1, 2))
    c = 0.0
    for j in range(n):
        pc[j, 0] = r[j]
        pc[j, 1] = c
        c += math.log1p(r[j])
    pc[n, 0], pc[n, 1] = 0.0, c
    n_ch = n // CHUNK
    ch = np.zeros((n_ch, 4))
    cs = np.empty((n_ch + 1, 2))
    s1, s2 = 0.0, 0.0
    for k in range(n_ch + 1):
        cs[k, 0], cs[k, 1] = s1, s2
        if k == n_ch:
            break
        hi, lo, run, dd = -np.inf, np.inf, pc[k * CHUNK, 1], 0.0
        for j in range(k * CHUNK, (k + 1) * CHUNK):
            s1 += pc[j, 0]
            s2 += pc[j, 0] * pc[j, 0]
            lv = pc[j + 1, 1]
            hi, lo, run = max(hi, lv), min(lo, lv), max(run, lv)
            dd = max(dd, run - lv)
        ch[k, 0], ch[k, 1], ch[k, 2] = hi, lo, dd
    return pc, ch, cs


@njit(inline="always")
def _candles(pc, lo, hi, off, s1, s2, peak, dd):
    for j in range(lo, hi):
        v = pc[j, 0]
        s1 += v
        s2 += v * v
        lv = off + pc[j + 1, 1]
        peak = max(peak, lv)
        dd = max(dd, peak - lv)
    return s1, s2, peak, dd


@njit(inline="always")
def _segment(pc, ch, cs, a, b, x, s1, s2, peak, dd):
    """Returns a..b-1 appended to a path at level x: chunk-aligned middle from the tables."""
    off = x - pc[a, 1]
    a_up = (a + CHUNK - 1) // CHUNK * CHUNK
    b_down = b // CHUNK * CHUNK
    if a_up >= b_down:
        s1, s2, peak, dd = _candles(pc, a, b, off, s1, s2, peak, dd)
    else:
        s1, s2, peak, dd = _candles(pc, a, a_up, off, s1, s2, peak, dd)
        ka, kb = a_up // CHUNK, b_down // CHUNK
        s1 += cs[kb, 0] - cs[ka, 0]
        s2 += cs[kb, 1] - cs[ka, 1]
        for k in range(ka, kb):
            # the chunk's deepest fall from the running peak, or inside itself
            dd = max(dd, peak - (off + ch[k, 1]), ch[k, 2])
            peak = max(peak, off + ch[k, 0])
        s1, s2, peak, dd = _candles(pc, b_down, b, off, s1, s2, peak, dd)
    return off + pc[b, 1], s1, s2, peak, dd


@njit(inline="always")
def _block(pc, ch, cs, n, a, length, x, s1, s2, peak, dd):
    b = a + length
    if b > n:  # circular: a block runs on from the first candle
        x, s1, s2, peak, dd = _segment(pc, ch, cs, a, n, x, s1, s2, peak, dd)
        a, b = 0, b - n
    return _segment(pc, ch, cs, a, b, x, s1, s2, peak, dd)


@njit(cache=True, nogil=True)
def path_figures_nb(r, starts, lengths):
    """(sum of r, sum of r^2, log growth, deepest log drawdown) of the path made of the blocks
    ``starts[i]``, ``lengths[i]`` of ``r`` (circular), as the kernel computes it.

    Example:
        >>> path_figures_nb(np.array([0.1, -0.5, 0.2]), np.array([2, 1]), np.array([2, 1]))[3] > 0
        True
    """
    pc, ch, cs = tables_nb(r)
    x, s1, s2, peak, dd = 0.0, 0.0, 0.0, 0.0, 0.0
    for i in range(starts.shape[0]):
        x, s1, s2, peak, dd = _block(pc, ch, cs, r.shape[0], starts[i], lengths[i], x, s1, s2, peak, dd)
    return s1, s2, x, dd


@njit(cache=True, nogil=True)
def draw_blocks_nb(n, mean_block, seed, resample):
    """(starts, lengths) of the blocks of resample number ``resample`` (0-based) of a series of
    ``n`` as :func:`stationary_bootstrap_nb` draws them with ``seed``.

    Example:
        >>> starts, lengths = draw_blocks_nb(100, 5.0, 1, 0)
        >>> int(lengths.sum()), bool(starts.max() < 100)
        (100, True)
    """
    inv_log_q = 1.0 / math.log(1.0 - 1.0 / mean_block) if mean_block > 1.0 else 0.0
    s = np.uint64(seed)
    starts, lengths = np.empty(n, np.int64), np.empty(n, np.int64)
    for _ in range(resample + 1):
        m, left = 0, n
        while left > 0:
            s, a, length = _draw(s, n, inv_log_q)
            length = min(length, left)
            left -= length
            starts[m], lengths[m] = a, length
            m += 1
    return starts[:m].copy(), lengths[:m].copy()


@njit(cache=True, nogil=True)
def stationary_bootstrap_nb(r, mean_block, seed, out):
    """Fill ``out`` (resamples, 4) with the mean, standard deviation (ddof 1), total log growth
    and deepest log drawdown of each stationary-bootstrap resample of ``r``; seeded."""
    n = r.shape[0]
    pc, ch, cs = tables_nb(r)
    inv_log_q = 1.0 / math.log(1.0 - 1.0 / mean_block) if mean_block > 1.0 else 0.0
    s = np.uint64(seed)
    starts, lengths = np.empty(_BATCH, np.int64), np.empty(_BATCH, np.int64)
    for rep in range(out.shape[0]):
        x, s1, s2, peak, dd = 0.0, 0.0, 0.0, 0.0, 0.0
        left = n
        while left > 0:
            # a batch of draws first: the walk's loads no longer wait behind the generator
            m = 0
            while m < _BATCH and left > 0:
                s, a, length = _draw(s, n, inv_log_q)
                length = min(length, left)
                left -= length
                starts[m], lengths[m] = a, length
                m += 1
            for i in range(m):
                x, s1, s2, peak, dd = _block(pc, ch, cs, n, starts[i], lengths[i], x, s1, s2, peak, dd)
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
