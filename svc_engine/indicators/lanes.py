"""Chained indicators (EMA, Wilder's RSI and ATR, the exact window sum of the SMA) over long series, several
stretches side by side, bit for bit the values of one pass.

Each value of a chain waits for the one before, so one pass runs at the latency of the chain (a
division, a multiply and an add per candle for the RSI), far below what the core can do. Here the
series is cut into up to ``LANES`` stretches stepped together, one candle of every stretch per
step, which the compiler turns into vector instructions across the stretches.

A stretch after the first starts ``warm`` candles early from a plain seed; a smoothing forgets its
seed (the ``settle`` of ``svc_engine.strategy.vocab``), and a window sum restarted anywhere holds
the same exact sum. A stretch is kept only if its state where it takes over equals, bit for bit,
the state the stretch before ends with: the same floats then go through the same operations, so
every later value is the one the single pass gives. A stretch whose state differs (a NaN in a
smoothing, a seed not yet forgotten) is recomputed from the previous stretch's state, candle after
candle, so the values never depend on the cut.

Contract: ``x`` and ``out`` are contiguous float64 arrays of one length; each function writes the
values of ``out`` from a given index on and leaves those before alone.

Example:
    >>> x = np.sin(np.arange(200_000) / 50.0) + 2.0
    >>> out = np.full(x.size, np.nan); out[0] = x[0]
    >>> ema_from_nb(x, out, 0, x[0], 2.0 / 15.0, 750)
    >>> one = np.full(x.size, np.nan); one[0] = x[0]
    >>> _ema_run(x, one, 1, x.size, x[0], 2.0 / 15.0) is not None and np.array_equal(out, one)
    True
"""

from __future__ import annotations

import numpy as np
from numba import njit

from svc_engine.indicators.numeric import add_exact_nb, two_sum_nb

LANES = 8
# Candles of warm-up per unit of 1 / alpha after which a smoothing has forgotten its seed (as
# ``svc_engine.strategy.vocab.STABILISE``); the seams are checked anyway.
STABILISE = 100
BLOCK = 256  # candles of every stretch gathered per step block (8 x 256 float64 = 16 KB)


@njit(cache=True, nogil=True, error_model="numpy")
def plan_nb(first: int, size: int, warm: int) -> tuple[np.ndarray, int, int]:
    """Where the stretches start, the steps each takes and the warm-up rounded up to whole blocks,
    for values ``first .. size - 1``; no stretches when the series is too short to pay (each
    stretch at least four warm-ups long).

    Stretch ``j`` covers ``starts[j] .. starts[j] + steps - 1`` and takes over from stretch
    ``j - 1`` at ``starts[j] + warm``; the last one continues alone to the end.

    >>> starts, steps, warm = plan_nb(10, 1_000_010, 1000)
    >>> ends = int(starts[-1] + steps)
    >>> starts.size, int(starts[1] + warm) == int(starts[0] + steps), warm, ends <= 1_000_010
    (8, True, 1024, True)
    """
    warm = -(-warm // BLOCK) * BLOCK
    span = size - first
    lanes = min(LANES, span // (4 * max(warm, BLOCK)))
    if lanes < 2:
        return np.empty(0, np.int64), 0, warm
    stride = (span + (lanes - 1) * warm) // lanes - warm
    # Stretches 72 candles (mod 512) apart, not a multiple of 4 KB: their reads and writes then
    # fall into different sets of the L1 cache instead of evicting each other.
    stride -= (stride - 72) % 512
    return first + np.arange(lanes) * stride, stride + warm, warm


@njit(cache=True, nogil=True, error_model="numpy")
def same_bits_nb(a: float, b: float) -> bool:
    """Bit-for-bit equality (NaN equals the same NaN, -0.0 differs from 0.0).

    >>> same_bits_nb(np.nan, np.nan), same_bits_nb(0.0, -0.0)
    (True, False)
    """
    return np.array([a]).view(np.int64)[0] == np.array([b]).view(np.int64)[0]


# ---- EMA -----------------------------------------------------------------------------------------


@njit(cache=True, nogil=True, error_model="numpy")
def _ema_run(x: np.ndarray, out: np.ndarray, begin: int, end: int, prev: float, k: float) -> float:
    for i in range(begin, end):
        prev = ((x[i] - prev) * k) + prev
        out[i] = prev
    return prev


@njit(cache=True, nogil=True, error_model="numpy")
def ema_from_nb(x: np.ndarray, out: np.ndarray, seed: int, prev: float, k: float, warm: int) -> None:
    """``out[i] = (x[i] - out[i-1]) * k + out[i-1]`` for ``i > seed``, from ``prev`` at ``seed``
    (TA-Lib's EMA step); ``warm`` candles let a stretch forget its seed."""
    starts, steps, warm = plan_nb(seed + 1, x.size, warm)
    if steps == 0:
        _ema_run(x, out, seed + 1, x.size, prev, k)
        return
    lanes = starts.size
    state = np.empty(lanes)
    state[0] = prev
    for j in range(1, lanes):
        state[j] = x[starts[j] - 1]  # any seed is forgotten; the previous value is a near one
    saved = state.copy()
    buf = np.empty((BLOCK, lanes))
    for t0 in range(0, steps, BLOCK):
        size = min(BLOCK, steps - t0)
        for t in range(size):
            for j in range(lanes):
                buf[t, j] = x[starts[j] + t0 + t]
        for t in range(size):
            for j in range(lanes):
                value = ((buf[t, j] - state[j]) * k) + state[j]
                state[j] = value
                buf[t, j] = value
        _scatter(buf, out, starts, t0, size)
        if t0 + size == warm:
            saved[:] = state
    for j in range(1, lanes):
        if not same_bits_nb(saved[j], state[j - 1]):
            state[j] = _ema_run(x, out, starts[j] + warm, starts[j] + steps, state[j - 1], k)
    _ema_run(x, out, starts[lanes - 1] + steps, x.size, state[lanes - 1], k)


@njit(cache=True, nogil=True, error_model="numpy")
def _scatter(buf: np.ndarray, out: np.ndarray, starts: np.ndarray, t0: int, size: int) -> None:
    # Row by row: a later step of an earlier stretch overwrites a later stretch's warm-up values.
    for t in range(size):
        for j in range(buf.shape[1]):
            out[starts[j] + t0 + t] = buf[t, j]


# ---- RSI -----------------------------------------------------------------------------------------


@njit(cache=True, nogil=True, error_model="numpy")
def rsi_value_nb(gain: float, loss: float) -> float:
    """100 x gain / (gain + loss), 0 where gain + loss is within 1e-8 of 0 (TA-Lib's convention).

    >>> rsi_value_nb(1.0, 3.0), rsi_value_nb(0.0, 0.0)
    (25.0, 0.0)
    """
    total = gain + loss
    # TA-Lib treats |total| < 1e-8 as zero and reports 0 there.
    return 0.0 if (total > -1e-8 and total < 1e-8) else 100.0 * (gain / total)


@njit(cache=True, nogil=True, error_model="numpy")
def _rsi_run(
    x: np.ndarray, out: np.ndarray, begin: int, end: int, gain: float, loss: float, n: int
) -> tuple[float, float]:
    # TA-Lib's order: (avg * (n - 1) + move) / n. Adding 0.0 for the side that did not move leaves
    # the average's bits unchanged (it is never -0.0), and lets the step run without a branch.
    m, fn = float(n - 1), float(n)
    for i in range(begin, end):
        diff = x[i] - x[i - 1]
        down = diff < 0
        loss = (loss * m + (-diff if down else 0.0)) / fn
        gain = (gain * m + (0.0 if down else diff)) / fn
        out[i] = rsi_value_nb(gain, loss)
    return gain, loss


@njit(cache=True, nogil=True, error_model="numpy")
def rsi_from_nb(
    x: np.ndarray, out: np.ndarray, seed: int, gain: float, loss: float, n: int, warm: int
) -> None:
    """Wilder's RSI for ``i > seed`` from the average ``gain`` and ``loss`` at ``seed``."""
    starts, steps, warm = plan_nb(seed + 1, x.size, warm)
    if steps == 0:
        _rsi_run(x, out, seed + 1, x.size, gain, loss, n)
        return
    lanes = starts.size
    m, fn = float(n - 1), float(n)
    gains, losses = np.zeros(lanes), np.zeros(lanes)  # a plain seed: no move yet
    gains[0], losses[0] = gain, loss
    saved_g, saved_l = gains.copy(), losses.copy()
    buf = np.empty((BLOCK, lanes))
    for t0 in range(0, steps, BLOCK):
        size = min(BLOCK, steps - t0)
        for t in range(size):
            for j in range(lanes):
                i = starts[j] + t0 + t
                buf[t, j] = x[i] - x[i - 1]
        for t in range(size):
            for j in range(lanes):
                diff = buf[t, j]
                down = diff < 0
                lo = (losses[j] * m + (-diff if down else 0.0)) / fn
                up = (gains[j] * m + (0.0 if down else diff)) / fn
                losses[j] = lo
                gains[j] = up
                buf[t, j] = rsi_value_nb(up, lo)
        _scatter(buf, out, starts, t0, size)
        if t0 + size == warm:
            saved_g[:] = gains
            saved_l[:] = losses
    for j in range(1, lanes):
        if not (same_bits_nb(saved_g[j], gains[j - 1]) and same_bits_nb(saved_l[j], losses[j - 1])):
            gains[j], losses[j] = _rsi_run(
                x, out, starts[j] + warm, starts[j] + steps, gains[j - 1], losses[j - 1], n
            )
    _rsi_run(x, out, starts[lanes - 1] + steps, x.size, gains[lanes - 1], losses[lanes - 1], n)


# ---- ATR (Wilder's smoothing of the true range) -----------------------------------------------------


@njit(cache=True, nogil=True, error_model="numpy")
def true_range_value_nb(high: float, low: float, prev_close: float) -> float:
    """The true range of one candle: the largest of high - low and the distances of high and low
    from the previous close (TA-Lib TRANGE).

    >>> true_range_value_nb(5.0, 4.0, 1.5)
    3.5
    """
    tr = high - low
    up = abs(high - prev_close)
    down = abs(low - prev_close)
    tr = up if up > tr else tr  # selects, not branches: which one wins is a coin toss per candle
    return down if down > tr else tr


@njit(cache=True, nogil=True, error_model="numpy")
def _atr_run(
    high: np.ndarray,
    low: np.ndarray,
    close: np.ndarray,
    out: np.ndarray,
    begin: int,
    end: int,
    prev: float,
    n: int,
) -> float:
    # TA-Lib's order: (atr * (n - 1) + true range) / n
    m, fn = float(n - 1), float(n)
    for i in range(begin, end):
        prev = (prev * m + true_range_value_nb(high[i], low[i], close[i - 1])) / fn
        out[i] = prev
    return prev


@njit(cache=True, nogil=True, error_model="numpy")
def atr_from_nb(
    high: np.ndarray,
    low: np.ndarray,
    close: np.ndarray,
    out: np.ndarray,
    seed: int,
    prev: float,
    n: int,
    warm: int,
) -> None:
    """Wilder's ATR for ``i > seed`` from ``prev`` at ``seed``."""
    starts, steps, warm = plan_nb(seed + 1, close.size, warm)
    if steps == 0:
        _atr_run(high, low, close, out, seed + 1, close.size, prev, n)
        return
    lanes = starts.size
    m, fn = float(n - 1), float(n)
    state = np.zeros(lanes)  # a plain seed: no range yet
    state[0] = prev
    saved = state.copy()
    buf = np.empty((BLOCK, lanes))
    for t0 in range(0, steps, BLOCK):
        size = min(BLOCK, steps - t0)
        for t in range(size):
            for j in range(lanes):
                i = starts[j] + t0 + t
                buf[t, j] = true_range_value_nb(high[i], low[i], close[i - 1])
        for t in range(size):
            for j in range(lanes):
                value = (state[j] * m + buf[t, j]) / fn
                state[j] = value
                buf[t, j] = value
        _scatter(buf, out, starts, t0, size)
        if t0 + size == warm:
            saved[:] = state
    for j in range(1, lanes):
        if not same_bits_nb(saved[j], state[j - 1]):
            state[j] = _atr_run(high, low, close, out, starts[j] + warm, starts[j] + steps, state[j - 1], n)
    _atr_run(high, low, close, out, starts[lanes - 1] + steps, close.size, state[lanes - 1], n)


# ---- SMA (exact window sum) ----------------------------------------------------------------------


@njit(cache=True, nogil=True, error_model="numpy")
def _window_step(
    hi: float, lo: float, missing: float, new: float, old: float, n: int
) -> tuple[float, float, float, float]:
    """Add ``new``, read the mean of the ``n`` values, drop ``old``: (hi, lo, missing, mean). A NaN
    counts as missing instead of entering the sum (chosen after computing: no branch, so the
    stretches' steps become vector instructions)."""
    total, err = two_sum_nb(hi, new)
    add_hi, add_lo = two_sum_nb(total, lo + err)
    gap = np.isnan(new)
    hi = hi if gap else add_hi
    lo = lo if gap else add_lo
    missing = missing + 1.0 if gap else missing
    mean = hi / n if missing == 0.0 else np.nan
    total, err = two_sum_nb(hi, -old)
    drop_hi, drop_lo = two_sum_nb(total, lo + err)
    gap = np.isnan(old)
    hi = hi if gap else drop_hi
    lo = lo if gap else drop_lo
    missing = missing - 1.0 if gap else missing
    return hi, lo, missing, mean


@njit(cache=True, nogil=True, error_model="numpy")
def window_open_nb(x: np.ndarray, begin: int, end: int) -> tuple[float, float, float]:
    """The exact sum of ``x[begin:end]`` as ``(hi, lo, missing)``: ``hi`` the sum rounded, ``lo`` its
    remainder, ``missing`` the NaN count (left out of the sum).

    >>> window_open_nb(np.array([0.1, np.nan, 0.2]), 0, 3)
    (0.30000000000000004, -2.7755575615628914e-17, 1.0)
    """
    hi, lo, missing = 0.0, 0.0, 0.0
    for i in range(begin, end):
        if np.isnan(x[i]):
            missing += 1.0
        else:
            hi, lo = add_exact_nb(hi, lo, x[i])
    return hi, lo, missing


@njit(cache=True, nogil=True, error_model="numpy")
def _sma_run(
    x: np.ndarray, out: np.ndarray, begin: int, end: int, hi: float, lo: float, missing: float, n: int
) -> tuple[float, float, float]:
    for i in range(begin, end):
        hi, lo, missing, out[i] = _window_step(hi, lo, missing, x[i], x[i - n + 1], n)
    return hi, lo, missing


@njit(cache=True, nogil=True, error_model="numpy")
def sma_from_nb(x: np.ndarray, out: np.ndarray, first: int, n: int) -> None:
    """The mean of the ``n`` values ending at ``i`` (NaN if one is NaN) for ``i >= first``, where
    ``first - n + 1`` is the first value summed; the sum is kept exact (`add_exact_nb`)."""
    starts, steps, _ = plan_nb(first, x.size, 0)
    if steps == 0:
        hi, lo, missing = window_open_nb(x, first - n + 1, first)
        _sma_run(x, out, first, x.size, hi, lo, missing, n)
        return
    lanes = starts.size
    state = np.empty((3, lanes))  # hi, lo, missing of every stretch
    for j in range(lanes):  # every stretch opens its window from scratch
        state[0, j], state[1, j], state[2, j] = window_open_nb(x, starts[j] - n + 1, starts[j])
    opened = state.copy()
    new, old = np.empty((BLOCK, lanes)), np.empty((BLOCK, lanes))
    for t0 in range(0, steps, BLOCK):
        size = min(BLOCK, steps - t0)
        for t in range(size):
            for j in range(lanes):
                i = starts[j] + t0 + t
                new[t, j] = x[i]
                old[t, j] = x[i - n + 1]
        _window_block(new, old, state, size, n)
        _scatter(new, out, starts, t0, size)
    for j in range(1, lanes):
        if not (
            same_bits_nb(opened[0, j], state[0, j - 1])
            and same_bits_nb(opened[1, j], state[1, j - 1])
            and opened[2, j] == state[2, j - 1]
        ):
            state[0, j], state[1, j], state[2, j] = _sma_run(
                x, out, starts[j], starts[j] + steps, state[0, j - 1], state[1, j - 1], state[2, j - 1], n
            )
    end = lanes - 1
    _sma_run(x, out, starts[end] + steps, x.size, state[0, end], state[1, end], state[2, end], n)


@njit(cache=True, nogil=True, error_model="numpy")
def _window_block(new: np.ndarray, old: np.ndarray, state: np.ndarray, size: int, n: int) -> None:
    # One candle of every stretch per step (the stretches' chains overlap), means written over `new`.
    for t in range(size):
        for j in range(new.shape[1]):
            state[0, j], state[1, j], state[2, j], new[t, j] = _window_step(
                state[0, j], state[1, j], state[2, j], new[t, j], old[t, j], n
            )
