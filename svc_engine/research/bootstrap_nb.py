"""Kernels of the bootstrap: the stationary block bootstrap of per-candle returns (Politis and
Romano, 1994) and the trade-order Monte Carlo of the drawdown.

A resample is n returns made of blocks of the series (circular) that start at uniform positions
and last a geometric number of candles of mean ``mean_block``. Each resample's mean, standard
deviation, compounded return and maximum drawdown are kept, never the resampled path.

What each statistic needs of a block a..b-1 (1,000 resamples of 4.35 M candles are 4.35 G candle
steps otherwise):

- The mean, the standard deviation and the compounded return need only sums, which do not depend
  on the order of the blocks: with prefix sums ``S1``, ``S2`` of r and r^2 and the log level
  ``C[j]`` (log growth of the first j candles), a block adds ``S1[b] - S1[a]``, ``S2[b] - S2[a]``
  and ``C[b] - C[a]``. The three sit in one 32-byte row per candle: two rows per block.
- The maximum drawdown needs the path, but only as a monoid of segments: a segment's highest and
  lowest level and its inner drawdown (its levels are ``C[j] - C[a]`` above where the path
  stands), since ``dd(A + B) = max(dd(A), dd(B), peak(A) - low(B))``. Tables hold that summary
  for aligned chunks of ``CHUNK`` candles and of ``SUPER`` candles; a block is its head and tail
  candles, its chunks and its super-chunks.
- Most blocks cannot move the peak or the drawdown: the path is well below its peak and above
  its deepest fall. The super-chunks around a block bound its levels; when the bound shows the
  block can change neither, it costs its two rows and nothing else. Only the others are walked.
- Positions and lengths come from a splitmix64 generator (Steele, Lea and Flood, 2014) seeded
  with ``seed``, ``_PIECE`` blocks at a time; the blocks' rows (random places in a 139 MB array)
  are read in the order of their starts, and the path is walked in the draw order from what was
  read, with the sums and tests of :func:`_segment` in the same order: a seed's figures are bit
  for bit those of a kernel that reads each block's rows as it walks it.

Example:
    >>> out = np.zeros((2, 4))
    >>> stationary_bootstrap_nb(np.array([0.01, -0.02, 0.03, 0.0]), 2.0, 7, out, np.zeros((5, 4)))
    >>> out.shape, bool(np.all(out[:, 3] >= 0))
    ((2, 4), True)
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from svc_engine.research.prefetch_nb import prefetch_row

#: Candles per chunk, and chunks per super-chunk (SUPER = CHUNK * CHUNK candles).
CHUNK = 16
SUPER = CHUNK * CHUNK
#: Columns of a resample's figures.
MEAN, STD, LOG_GROWTH, MAX_DD_LOG = 0, 1, 2, 3
_LEVEL, _S1, _S2 = 0, 1, 2  # columns of a candle's row
_HI, _LO, _DD = 0, 1, 2  # columns of a chunk's summary
_PIECE = 32_768  # blocks drawn, gathered and walked at a time (their rows: 2.4 MB, in L3)
_SHIFT = 9  # the gather visits the blocks by start // 512 (16 KB of rows)
_AHEAD = 16  # blocks whose rows are prefetched before the gather reads them
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


@njit(inline="always")
def _summarise(src, k, width, dst):
    """dst[k] = the summary of entries k*width .. (k+1)*width-1 of src (hi, lo, dd)."""
    hi, lo, dd = -np.inf, np.inf, 0.0
    for j in range(k * width, (k + 1) * width):
        dd = max(dd, hi - src[j, _LO], src[j, _DD])
        hi = max(hi, src[j, _HI])
        lo = min(lo, src[j, _LO])
    dst[k, _HI], dst[k, _LO], dst[k, _DD] = hi, lo, dd


@njit(cache=True, nogil=True)
def fill_tables_nb(r, rows):
    """Fill ``rows`` (n + 1, 4): the log level and the sums of r and r^2 before each candle; return
    ``ch`` (n // CHUNK, 3) and ``sc`` (n // SUPER, 3), each chunk's and super-chunk's highest and
    lowest level after its candles and inner drawdown."""
    n = r.shape[0]
    c, s1, s2 = 0.0, 0.0, 0.0
    for j in range(n):
        rows[j, _LEVEL], rows[j, _S1], rows[j, _S2] = c, s1, s2
        c += math.log1p(r[j])
        s1 += r[j]
        s2 += r[j] * r[j]
    rows[n, _LEVEL], rows[n, _S1], rows[n, _S2] = c, s1, s2
    ch = np.empty((n // CHUNK, 3))
    for k in range(ch.shape[0]):
        hi, lo, run, dd = -np.inf, np.inf, rows[k * CHUNK, _LEVEL], 0.0
        for j in range(k * CHUNK + 1, (k + 1) * CHUNK + 1):
            lv = rows[j, _LEVEL]
            hi, lo, run = max(hi, lv), min(lo, lv), max(run, lv)
            dd = max(dd, run - lv)
        ch[k, _HI], ch[k, _LO], ch[k, _DD] = hi, lo, dd
    sc = np.empty((n // SUPER, 3))
    for k in range(sc.shape[0]):
        _summarise(ch, k, CHUNK, sc)
    return ch, sc


@njit(cache=True, nogil=True)
def tables_nb(r):
    """``rows``, ``ch`` and ``sc`` of :func:`fill_tables_nb` (rows in numba's own memory)."""
    rows = np.zeros((r.shape[0] + 1, 4))
    return (rows, *fill_tables_nb(r, rows))


@njit(inline="always")
def _candles(rows, lo, hi, off, peak, dd):
    for j in range(lo + 1, hi + 1):  # the levels after candles lo .. hi-1
        lv = off + rows[j, _LEVEL]
        peak = max(peak, lv)
        dd = max(dd, peak - lv)
    return peak, dd


@njit(inline="always")
def _entries(t, ka, kb, off, peak, dd):
    for k in range(ka, kb):
        # the entry's deepest fall from the running peak, or inside itself
        dd = max(dd, peak - (off + t[k, _LO]), t[k, _DD])
        peak = max(peak, off + t[k, _HI])
    return peak, dd


@njit(inline="always")
def _moves(t, k, off, peak, dd):
    """Whether entry k of a table could raise the peak or the drawdown of a path at ``off``."""
    return off + t[k, _HI] > peak or peak - (off + t[k, _LO]) > dd or t[k, _DD] > dd


@njit(inline="always")
def _walk(rows, ch, sc, a, b, off, peak, dd):
    """Peak and drawdown after candles a..b-1 appended at ``off``: head and tail candles (skipped
    when their chunk cannot move either), whole chunks, whole super-chunks."""
    a_up = (a + CHUNK - 1) // CHUNK * CHUNK
    b_down = b // CHUNK * CHUNK
    if a_up >= b_down:
        return _candles(rows, a, b, off, peak, dd)
    if a < a_up and _moves(ch, a // CHUNK, off, peak, dd):
        peak, dd = _candles(rows, a, a_up, off, peak, dd)
    ka, kb = a_up // CHUNK, b_down // CHUNK
    ka_up = (ka + CHUNK - 1) // CHUNK * CHUNK
    kb_down = kb // CHUNK * CHUNK
    if ka_up >= kb_down:
        peak, dd = _entries(ch, ka, kb, off, peak, dd)
    else:
        peak, dd = _entries(ch, ka, ka_up, off, peak, dd)
        peak, dd = _entries(sc, ka_up // CHUNK, kb_down // CHUNK, off, peak, dd)
        peak, dd = _entries(ch, kb_down, kb, off, peak, dd)
    if b_down < b and (b_down // CHUNK == ch.shape[0] or _moves(ch, b_down // CHUNK, off, peak, dd)):
        peak, dd = _candles(rows, b_down, b, off, peak, dd)
    return peak, dd


@njit(inline="always")
def _segment(rows, ch, sc, a, b, x, s1, s2, peak, dd, walked):
    """Candles a..b-1 appended to a path at level x."""
    s1 += rows[b, _S1] - rows[a, _S1]
    s2 += rows[b, _S2] - rows[a, _S2]
    off = x - rows[a, _LEVEL]
    # the super-chunks holding the block bound its levels: most blocks stop here
    k0, k1 = a // SUPER, min((b - 1) // SUPER, sc.shape[0] - 1)
    hi, lo, inner = -np.inf, np.inf, 0.0
    if k0 < sc.shape[0]:
        for k in range(k0, k1 + 1):
            inner = max(inner, hi - sc[k, _LO], sc[k, _DD])
            hi = max(hi, sc[k, _HI])
            lo = min(lo, sc[k, _LO])
    if (b - 1) // SUPER >= sc.shape[0] or off + hi > peak or peak - (off + lo) > dd or inner > dd:
        peak, dd = _walk(rows, ch, sc, a, b, off, peak, dd)
        walked += 1
    return off + rows[b, _LEVEL], s1, s2, peak, dd, walked


@njit(inline="always")
def _block(rows, ch, sc, n, a, length, x, s1, s2, peak, dd, walked):
    b = a + length
    if b > n:  # circular: a block runs on from the first candle
        x, s1, s2, peak, dd, walked = _segment(rows, ch, sc, a, n, x, s1, s2, peak, dd, walked)
        a, b = 0, b - n
    return _segment(rows, ch, sc, a, b, x, s1, s2, peak, dd, walked)


@njit(cache=True, nogil=True)
def path_figures_nb(r, starts, lengths):
    """(sum of r, sum of r^2, log growth, deepest log drawdown, segments walked) of the path made
    of the blocks ``starts[i]``, ``lengths[i]`` of ``r`` (circular), as the kernel computes it; the
    last figure counts the segments (a wrapping block has two) whose super-chunks could not rule
    out a new peak or drawdown.

    Example:
        >>> path_figures_nb(np.array([0.1, -0.5, 0.2]), np.array([2, 1]), np.array([2, 1]))[3] > 0
        True
    """
    rows, ch, sc = tables_nb(r)
    x, s1, s2, peak, dd, walked = 0.0, 0.0, 0.0, 0.0, 0.0, 0
    for i in range(starts.shape[0]):
        x, s1, s2, peak, dd, walked = _block(
            rows, ch, sc, r.shape[0], starts[i], lengths[i], x, s1, s2, peak, dd, walked
        )
    return s1, s2, x, dd, walked


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
def _draw_piece(s, n, inv_log_q, left, drawing, reps, starts, lengths, ends):
    """Draw the next ``starts.shape[0]`` blocks of the stream (fewer when the last resample ends)
    as :func:`_draw` does, cut at the resamples' ends (``ends[i]``: block i ends one)."""
    p = starts.shape[0]
    us = np.empty(p)
    for i in range(p):
        s, z = _splitmix(s)
        starts[i] = int(z * (1.0 / 9007199254740992.0) * n)
        s, z = _splitmix(s)
        us[i] = (z + 1) * (1.0 / 9007199254740992.0)
    # the logarithms apart from the cut: independent, they overlap instead of queuing on `left`
    for i in range(p):
        lengths[i] = 1 + int(math.log(us[i]) * inv_log_q) if inv_log_q < 0.0 else 1
    m = p
    for i in range(p):
        length = min(lengths[i], left)
        left -= length
        lengths[i] = length
        ends[i] = left == 0
        if left == 0:
            left, drawing = n, drawing + 1
            if drawing == reps:
                m = i + 1
                break
    return s, left, drawing, m


@njit(cache=True, nogil=True)
def _gather(rows, sc, n, starts, lengths, m, counts, order, g):
    """g[i] = block i's rows at its start and end (level, S1, S2) and its super-chunks' bound (hi,
    lo, inner), read by ``start >> _SHIFT`` (a counting sort): a piece's blocks then fall in few
    pages and DRAM rows each, not in random places. Wrapping blocks are left to the walk."""
    counts[:] = 0
    for i in range(m):
        if starts[i] + lengths[i] <= n:
            counts[(starts[i] >> _SHIFT) + 1] += 1
    for k in range(counts.shape[0] - 1):
        counts[k + 1] += counts[k]
    for i in range(m):
        if starts[i] + lengths[i] <= n:
            k = starts[i] >> _SHIFT
            order[counts[k]] = i
            counts[k] += 1
    sorted_ = counts[counts.shape[0] - 2]
    nsc = sc.shape[0]
    for t in range(sorted_):
        if t + _AHEAD < sorted_:
            i = order[t + _AHEAD]
            prefetch_row(rows, starts[i])
            prefetch_row(rows, starts[i] + lengths[i])
        i = order[t]
        a = starts[i]
        b = a + lengths[i]
        g[i, 0], g[i, 1], g[i, 2] = rows[a, _LEVEL], rows[a, _S1], rows[a, _S2]
        g[i, 3], g[i, 4], g[i, 5] = rows[b, _LEVEL], rows[b, _S1], rows[b, _S2]
        k0, k1 = a // SUPER, min((b - 1) // SUPER, nsc - 1)
        hi, lo, inner = -np.inf, np.inf, 0.0
        if k0 < nsc:
            for k in range(k0, k1 + 1):
                inner = max(inner, hi - sc[k, _LO], sc[k, _DD])
                hi = max(hi, sc[k, _HI])
                lo = min(lo, sc[k, _LO])
        g[i, 6], g[i, 7], g[i, 8] = hi, lo, inner


@njit(cache=True, nogil=True)
def stationary_bootstrap_nb(r, mean_block, seed, out, rows):
    """Fill ``out`` (resamples, 4) with the mean, standard deviation (ddof 1), total log growth
    and deepest log drawdown of each stationary-bootstrap resample of ``r``; seeded. ``rows`` is
    the (n + 1, 4) table's memory, given by the caller so that it can sit on huge pages
    (:func:`svc_engine.research.bootstrap.huge_rows`)."""
    n = r.shape[0]
    reps = out.shape[0]
    ch, sc = fill_tables_nb(r, rows)
    nsc = sc.shape[0]
    inv_log_q = 1.0 / math.log(1.0 - 1.0 / mean_block) if mean_block > 1.0 else 0.0
    s = np.uint64(seed)
    starts, lengths = np.empty(_PIECE, np.int64), np.empty(_PIECE, np.int64)
    ends = np.zeros(_PIECE, np.bool_)
    g = np.empty((_PIECE, 9))
    counts = np.zeros((n >> _SHIFT) + 2, np.int64)
    order = np.empty(_PIECE, np.int64)
    left, drawing, rep = n, 0, 0
    x, s1, s2, peak, dd, walked = 0.0, 0.0, 0.0, 0.0, 0.0, 0
    while drawing < reps:
        s, left, drawing, m = _draw_piece(s, n, inv_log_q, left, drawing, reps, starts, lengths, ends)
        _gather(rows, sc, n, starts, lengths, m, counts, order, g)
        # the path in the draw order, from the gathered rows: the same sums and tests as _segment
        for i in range(m):
            a = starts[i]
            b = a + lengths[i]
            if b > n:
                x, s1, s2, peak, dd, walked = _block(
                    rows, ch, sc, n, a, lengths[i], x, s1, s2, peak, dd, walked
                )
            else:
                s1 += g[i, 4] - g[i, 1]
                s2 += g[i, 5] - g[i, 2]
                off = x - g[i, 0]
                last = (b - 1) // SUPER >= nsc  # the last super-chunk is not in the table
                if last or off + g[i, 6] > peak or peak - (off + g[i, 7]) > dd or g[i, 8] > dd:
                    peak, dd = _walk(rows, ch, sc, a, b, off, peak, dd)
                x = off + g[i, 3]
            if ends[i]:
                mean = s1 / n
                var = (s2 - n * mean * mean) / (n - 1) if n > 1 else 0.0
                out[rep, MEAN] = mean
                out[rep, STD] = math.sqrt(var) if var > 0.0 else 0.0
                out[rep, LOG_GROWTH] = x
                out[rep, MAX_DD_LOG] = dd
                rep += 1
                x, s1, s2, peak, dd = 0.0, 0.0, 0.0, 0.0, 0.0


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
