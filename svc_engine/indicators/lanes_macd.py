"""The MACD line's two EMAs in one pass of side-by-side stretches (as `svc_engine.indicators.lanes`),
the difference written where it is computed: one read of the series, one array written, instead of
two EMA passes, two arrays and a third pass subtracting them. Bit for bit the values of
``ema_seeded_nb(x, fast, ...) - ema_seeded_nb(x, slow, ...)``: a stretch whose state where it takes
over differs from the state the stretch before ends with, in either EMA, is recomputed from that
state, both EMAs, candle after candle.

Example:
    >>> x = np.sin(np.arange(200_000) / 50.0) + 2.0
    >>> out = np.full(x.size, np.nan)
    >>> macd_pair_from_nb(x, out, 0, x[0], x[0], 2.0 / 13.0, 2.0 / 27.0, 1400)
    >>> f, s = x.copy(), x.copy()
    >>> for i in range(1, x.size):
    ...     f[i] = ((x[i] - f[i - 1]) * (2.0 / 13.0)) + f[i - 1]
    ...     s[i] = ((x[i] - s[i - 1]) * (2.0 / 27.0)) + s[i - 1]
    >>> bool(np.array_equal(out[1:], (f - s)[1:]))
    True
"""

from __future__ import annotations

import numpy as np
from numba import njit

from svc_engine.indicators.lanes import BLOCK, plan_nb, same_bits_nb


@njit(cache=True, nogil=True, error_model="numpy")
def _pair_run(
    x: np.ndarray, out: np.ndarray, begin: int, end: int, fast: float, slow: float, kf: float, ks: float
) -> tuple[float, float]:
    for i in range(begin, end):
        fast = ((x[i] - fast) * kf) + fast
        slow = ((x[i] - slow) * ks) + slow
        out[i] = fast - slow
    return fast, slow


@njit(cache=True, nogil=True, error_model="numpy")
def macd_pair_from_nb(
    x: np.ndarray, out: np.ndarray, seed: int, fast: float, slow: float, kf: float, ks: float, warm: int
) -> None:
    """``out[i] = fast[i] - slow[i]`` for ``i > seed``, each EMA stepped as TA-Lib's
    (``(x - prev) * k + prev``) from its value at ``seed``; ``warm`` candles let a stretch forget
    both seeds (the slower EMA's)."""
    starts, steps, warm = plan_nb(seed + 1, x.size, warm)
    if steps == 0:
        _pair_run(x, out, seed + 1, x.size, fast, slow, kf, ks)
        return
    lanes = starts.size
    sf, ss = np.empty(lanes), np.empty(lanes)
    sf[0], ss[0] = fast, slow
    for j in range(1, lanes):
        sf[j] = ss[j] = x[starts[j] - 1]  # any seed is forgotten; the previous value is a near one
    saved_f, saved_s = sf.copy(), ss.copy()
    xs, buf = np.empty((BLOCK, lanes)), np.empty((BLOCK, lanes))
    for t0 in range(0, steps, BLOCK):
        size = min(BLOCK, steps - t0)
        for t in range(size):
            for j in range(lanes):
                xs[t, j] = x[starts[j] + t0 + t]
        for t in range(size):
            for j in range(lanes):
                v = xs[t, j]
                f = ((v - sf[j]) * kf) + sf[j]
                s = ((v - ss[j]) * ks) + ss[j]
                sf[j], ss[j] = f, s
                buf[t, j] = f - s
        # Row by row: a later step of an earlier stretch overwrites a later stretch's warm-up values.
        for t in range(size):
            for j in range(lanes):
                out[starts[j] + t0 + t] = buf[t, j]
        if t0 + size == warm:
            saved_f[:] = sf
            saved_s[:] = ss
    for j in range(1, lanes):
        if not (same_bits_nb(saved_f[j], sf[j - 1]) and same_bits_nb(saved_s[j], ss[j - 1])):
            sf[j], ss[j] = _pair_run(
                x, out, starts[j] + warm, starts[j] + steps, sf[j - 1], ss[j - 1], kf, ks
            )
    _pair_run(x, out, starts[lanes - 1] + steps, x.size, sf[lanes - 1], ss[lanes - 1], kf, ks)
