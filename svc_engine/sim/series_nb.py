"""The numba passes over a candle series behind `svc_engine.sim.inputs`: the series rules of
`../shared/design/engine-semantics.md` section 1 checked in one pass, and sorted signal times located among
the candle times.

Example:
    >>> import numpy as np
    >>> locate_sorted_nb(np.array([1, 3, 5], np.int64), np.array([3, 5], np.int64)).tolist()
    [1, 2]
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def first_bad_row(t, o, h, lo, c, v):
    """(first offending row or -1, rule number, smallest time step) of the series rules. Valid
    candles are the rule, so offences are first counted with branch-free tests in one pass over
    the six columns (it vectorises and runs near memory speed) and only a failing series is
    scanned row by row. Nine tests cover the thirteen of the rules: ``0 < low <= open, close <=
    high < inf`` bounds every price (NaN fails every comparison)."""
    n = t.shape[0]
    step = t[1] - t[0] if n > 1 else 0
    bad = 1 - _row_ok(o, h, lo, c, v, 0)
    for k in range(1, n):
        gap = t[k] - t[k - 1]
        step = min(step, gap)
        bad += 1 - (_i(gap > 0) & _row_ok(o, h, lo, c, v, k))
    if bad:
        return first_bad_row_scan(t, o, h, lo, c, v)
    return -1, 0, step


@njit(cache=True, nogil=True, inline="always")
def _row_ok(o, h, lo, c, v, k):
    ok = _i(lo[k] > 0) & _i(lo[k] <= o[k]) & _i(lo[k] <= c[k])
    ok &= _i(h[k] >= o[k]) & _i(h[k] >= c[k]) & _i(h[k] < np.inf)
    return ok & _i(v[k] >= 0) & _i(v[k] < np.inf)


@njit(cache=True, nogil=True, inline="always")
def _i(flag):
    return np.int64(flag)


@njit(cache=True, nogil=True)
def first_bad_row_scan(t, o, h, lo, c, v):
    """``first_bad_row`` one row at a time, stopping at the first offence in rule order."""
    step = t[1] - t[0] if t.shape[0] > 1 else 0
    for k in range(t.shape[0]):
        if k > 0:
            gap = t[k] - t[k - 1]
            if gap <= 0:
                return k, 1, step
            step = min(step, gap)
        if not (np.isfinite(o[k]) and np.isfinite(h[k]) and np.isfinite(lo[k]) and np.isfinite(c[k])):
            return k, 2, step
        if o[k] <= 0 or h[k] <= 0 or lo[k] <= 0 or c[k] <= 0:
            return k, 3, step
        if h[k] < max(o[k], c[k]):
            return k, 4, step
        if lo[k] > min(o[k], c[k]):
            return k, 5, step
        if not np.isfinite(v[k]):
            return k, 6, step
        if v[k] < 0:
            return k, 7, step
    return -1, 0, step


@njit(cache=True, nogil=True)
def locate_sorted_nb(t, keys):
    """Index of each sorted key in the sorted times ``t`` (-1 where absent).

    Candles mostly come at a regular pace, so each key is first looked for where that pace puts
    it (corrected by the gaps met so far): these probes do not depend on each other's loads, so
    the processor overlaps their cache misses. A failed probe gallops from the previous key.

    Example:
        >>> locate_sorted_nb(np.array([1, 3, 5], np.int64), np.array([3, 4, 5], np.int64)).tolist()
        [1, -1, 2]
    """
    out = np.full(keys.shape[0], -1, np.int64)
    n = t.shape[0]
    pace = max(t[1] - t[0], 1) if n > 1 else 1
    pos, shift = 0, 0
    for x in range(keys.shape[0]):
        key = keys[x]
        slots = (key - t[0]) // pace
        guess = slots - shift
        if pos <= guess < n and t[guess] == key:
            out[x] = pos = guess
            continue
        pos = _gallop(t, key, pos)
        if t[pos] == key:
            out[x] = pos
            shift = slots - pos
    return out


@njit(cache=True, nogil=True)
def _gallop(t, key, pos):
    """The last index at or after ``pos`` with ``t <= key`` (``t[pos] <= key``), galloping."""
    n, step = t.shape[0], 1
    while pos + step < n and t[pos + step] <= key:
        pos += step
        step *= 2
    lo, hi = pos, min(pos + step, n - 1)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if t[mid] <= key:
            lo = mid
        else:
            hi = mid - 1
    return lo
