"""One signal's outcome by the rules of `../shared/design/engine-semantics.md` sections 3 and 4: its fill
(limit or market order), the stop of the trade, rules 1-3 on a candle, the exit; memoised per signal.

Example:
    >>> stop_level_nb(10.0, LONG, 9.0, 1.0)
    (9.0, 0, 1)
"""

from __future__ import annotations

import numpy as np
from numba import njit

from svc_engine.sim.kernels.records import (
    F_OK,
    LONG,
    OUTCOME_DTYPE,
    R_END,
    R_LIQ,
    R_SL,
    R_SL_GAP,
    R_TP,
    R_TP_GAP,
    SHORT,
)


@njit(cache=True, nogil=True)
def find_fill_nb(t, o, h, lo, s, side, limit, deadline_ms):
    """(fill candle or -1, fill price, open fill?, last live candle e) of an order placed at ``s``;
    live candles open strictly before ``deadline_ms``.

    Example:
        >>> t = np.array([0, 1, 2], np.int64); p = np.array([10.0, 10.5, 9.8])
        >>> find_fill_nb(t, p, p + 0.1, p - 0.1, 0, LONG, 10.0, 10)
        (2, 9.8, True, 2)
    """
    n = t.shape[0]
    k = s + 1
    while k < n and t[k] < deadline_ms:
        hit, price, open_fill = limit_fill_nb(o[k], h[k], lo[k], side, limit)
        if hit:
            return k, price, open_fill, k
        k += 1
    return -1, np.nan, False, k - 1


@njit(cache=True, nogil=True)
def limit_fill_nb(ok, hk, lk, side, limit):
    """Section 3 on one live candle: (filled?, fill price ``min(open, L)``, open fill?). The one
    per-candle rule that :func:`find_fill_nb` and the live evaluator (``svc_engine.live``) share.

    Example:
        >>> limit_fill_nb(10.5, 10.6, 9.9, LONG, 10.0), limit_fill_nb(10.5, 10.6, 10.1, LONG, 10.0)[0]
        ((True, 10.0, False), False)
    """
    if side == LONG and lk <= limit:
        return True, min(ok, limit), ok <= limit
    if side == SHORT and hk >= limit:
        return True, max(ok, limit), ok >= limit
    return False, np.nan, False


@njit(cache=True, nogil=True)
def stop_level_nb(entry, side, sl, leverage):
    """(stop price, its reason, its gap reason): the liquidation level ``Q`` (from the raw fill
    price) replaces ``SL`` where it lies strictly between the entry and ``SL``.

    Every trade has a ``Q`` at any leverage (`../shared/design/engine-semantics.md` section 4): at 1x a long's
    is 0 (no valid price reaches it) and a short's is ``2E``, so a short without a stop (``SL = +inf``) is
    liquidated when its stake is gone instead of staying open at value 0.

    Example:
        >>> stop_level_nb(10.0, LONG, 7.0, 5.0)
        (8.0, 4, 4)
        >>> stop_level_nb(10.0, SHORT, np.inf, 1.0), stop_level_nb(10.0, SHORT, 20.0, 1.0)
        ((20.0, 4, 4), (20.0, 0, 1))
    """
    q = entry * (1 - side / leverage)
    if (side == LONG and q > sl) or (side == SHORT and q < sl):
        return q, R_LIQ, R_LIQ
    return sl, R_SL, R_SL_GAP


@njit(cache=True, nogil=True)
def candle_rules_nb(oj, hj, lj, c_fill, side, at_fill, tp, stop, stop_reason, gap_reason):
    """Rules 1-3 of section 4 on one candle: (hit?, raw exit price, reason). ``at_fill`` marks an
    intrabar fill candle (no gap rules; tp only when ``c_fill``, its close, reached TP).

    Example:
        >>> candle_rules_nb(10.0, 11.5, 8.5, 10.0, LONG, False, 11.0, 9.0, R_SL, R_SL_GAP)
        (True, 9.0, 0)
    """
    if side == LONG:
        if not at_fill:
            if oj <= stop:
                return True, oj, gap_reason
            if oj >= tp:
                return True, oj, R_TP_GAP
        if lj <= stop:
            return True, stop, stop_reason
        if hj >= tp and (not at_fill or c_fill >= tp):
            return True, tp, R_TP
    else:
        if not at_fill:
            if oj >= stop:
                return True, oj, gap_reason
            if oj <= tp:
                return True, oj, R_TP_GAP
        if hj >= stop:
            return True, stop, stop_reason
        if lj <= tp and (not at_fill or c_fill <= tp):
            return True, tp, R_TP
    return False, 0.0, np.int64(0)


@njit(cache=True, nogil=True)
def find_exit_nb(o, h, lo, c, i, side, entry, open_fill, tp, sl, leverage, last):
    """(exit candle, raw exit price, reason) of a trade filled at candle ``i`` (section 4).

    Example:
        >>> o = np.array([10.0, 10.0, 11.5]); h = o + 0.2; lo = o - 0.2
        >>> find_exit_nb(o, h, lo, o, 1, LONG, 10.0, True, 11.0, 9.0, 1.0, 2)
        (2, 11.5, 3)
    """
    stop, stop_reason, gap_reason = stop_level_nb(entry, side, sl, leverage)
    j = i
    while j <= last:
        hit, x, reason = candle_rules_nb(
            o[j], h[j], lo[j], c[i], side, j == i and not open_fill, tp, stop, stop_reason, gap_reason
        )
        if hit:
            return j, x, reason
        j = _first_touch(h, lo, j + 1, last, side, tp, stop)
    return last, c[last], np.int64(R_END)


@njit(cache=True, nogil=True)
def find_market_fill_nb(t, o, s, deadline_ms):
    """(fill candle or -1, fill price, open fill, last live candle) of a market order placed at the
    close of ``s``: it fills at the next candle's open (an open fill), if that candle is live.

    Example:
        >>> t = np.array([0, 1, 2], np.int64); o = np.array([10.0, 10.5, 9.8])
        >>> find_market_fill_nb(t, o, 0, 10), find_market_fill_nb(t, o, 2, 10)[0]
        ((1, 10.5, True, 1), -1)
    """
    k = s + 1
    if k < t.shape[0] and t[k] < deadline_ms:
        return k, o[k], True, k
    return -1, np.nan, False, s


@njit(cache=True, nogil=True)
def _first_touch(h, lo, j, last, side, tp, stop):
    """The first candle from ``j`` on whose range reaches TP or the stop (``last + 1`` if none).
    A valid candle's open lies within its range, so no rule can fire on a candle skipped here;
    the scan is two loads and compares per candle instead of every rule."""
    if side == LONG:
        while j <= last and lo[j] > stop and h[j] < tp:
            j += 1
    else:
        while j <= last and h[j] < stop and lo[j] > tp:
            j += 1
    return j


@njit(cache=True, nogil=True)
def ensure_fill_nb(memo, k, t, o, h, lo, s, side, limit, deadline_ms):
    """Compute (once) the fill of signal ``k`` into ``memo``."""
    if memo[k].done == 0:
        i, e_raw, open_fill, e = find_fill_nb(t, o, h, lo, s, side, limit, deadline_ms)
        memo[k].fill_candle, memo[k].entry_raw, memo[k].open_fill = i, e_raw, open_fill
        memo[k].expiry_candle = e
        memo[k].done = 1


@njit(cache=True, nogil=True)
def ensure_exit_nb(memo, k, o, h, lo, c, side, tp, sl, leverage, last):
    """Compute (once) the exit of the filled signal ``k`` into ``memo`` (nothing for an expiry)."""
    if memo[k].done == 1 and memo[k].fill_candle >= 0:
        j, x, reason = find_exit_nb(
            o,
            h,
            lo,
            c,
            memo[k].fill_candle,
            side,
            memo[k].entry_raw,
            memo[k].open_fill,
            tp,
            sl,
            leverage,
            last,
        )
        memo[k].exit_candle, memo[k].exit_raw, memo[k].reason = j, x, reason
        memo[k].done = 2


@njit(cache=True, nogil=True)
def outcomes_nb(t, o, h, lo, c, sidx, side, limit, tp, sl, fate, tf_ms, wait_ms, leverage):
    """Every candidate's outcome (signals with ``fate == F_OK``), independently per signal;
    ``done`` stays 1 with ``i = -1`` for an order that expires at ``e``."""
    memo = np.zeros(sidx.shape[0], OUTCOME_DTYPE)
    last = t.shape[0] - 1
    for k in range(sidx.shape[0]):
        if fate[k] == F_OK:
            s = sidx[k]
            ensure_fill_nb(memo, k, t, o, h, lo, s, side[k], limit[k], t[s] + tf_ms + wait_ms)
            ensure_exit_nb(memo, k, o, h, lo, c, side[k], tp[k], sl[k], leverage, last)
    return memo
