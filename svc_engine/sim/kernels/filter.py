"""Validity and the min/max filter of the signals (`../shared/design/engine-semantics.md` section 2).

Example:
    >>> _reject_fate(0.5, 0.1, 0.001, 0.3, 0.001, 0.5) == F_TP_ABOVE_MAX
    True
"""

from __future__ import annotations

import numpy as np
from numba import njit

from svc_engine.sim.kernels.records import (
    F_INVALID,
    F_MIN_GAP,
    F_OK,
    F_SL_ABOVE_MAX,
    F_SL_BELOW_MIN,
    F_TP_ABOVE_MAX,
    F_TP_BELOW_MIN,
    LONG,
    TOL,
)


@njit(cache=True, nogil=True)
def filter_signals_nb(
    side, limit, tp, sl, dup, min_profit, max_profit, min_loss, max_loss, reject, open_levels=False
):
    """Fate after validity and the min/max filter (``F_OK`` where the signal goes on); adjusted
    TP and SL prices, and the recorded distances.

    Example:
        >>> one = lambda x, t=np.float64: np.array([x], t)
        >>> fate, tp, sl, td, sd = filter_signals_nb(one(1, np.int8), one(10.0), one(20.0), one(9.0),
        ...                                          one(False, np.bool_), 0.001, 0.3, 0.001, 0.5, False)
        >>> int(fate[0]), float(tp[0]), float(td[0])
        (-1, 13.0, 0.3)
    """
    n = limit.shape[0]
    fate = np.full(n, F_OK, np.int8)
    tp_out, sl_out = tp.copy(), sl.copy()
    tp_d, sl_d = np.full(n, np.nan), np.full(n, np.nan)
    for k in range(n):
        if dup[k]:
            fate[k] = F_MIN_GAP
            continue
        L, T, S, d = limit[k], tp[k], sl[k], side[k]
        # With ``open_levels`` (signals that carry exit rules, docs/exits.md) an infinite level on its
        # own side is no level: no check, no clamp, distance NaN; the exit rules never reach it.
        no_tp = open_levels and np.isinf(T) and (T > 0) == (d == LONG)
        no_sl = open_levels and np.isinf(S) and (S < 0) == (d == LONG)
        tp_ok = no_tp or (np.isfinite(T) and T > 0)
        sl_ok = no_sl or (np.isfinite(S) and S > 0)
        if not (np.isfinite(L) and L > 0 and tp_ok and sl_ok):
            fate[k] = F_INVALID
            continue
        td = np.nan if no_tp else ((T - L) / L if d == LONG else (L - T) / L)
        sd = np.nan if no_sl else ((L - S) / L if d == LONG else (S - L) / L)
        if td <= 0 or sd <= 0:
            fate[k] = F_INVALID
            continue
        if reject:
            fate[k] = _reject_fate(
                min_profit if no_tp else td,
                min_loss if no_sl else sd,
                min_profit,
                max_profit,
                min_loss,
                max_loss,
            )
        elif not no_tp and td < min_profit - TOL:
            fate[k] = F_TP_BELOW_MIN
        else:
            if not no_tp and td > max_profit + TOL:
                td = max_profit
                tp_out[k] = L * (1 + d * max_profit)
            if no_sl:
                pass
            elif sd > max_loss + TOL:
                sd = max_loss
                sl_out[k] = L * (1 - d * max_loss)
            elif sd < min_loss - TOL:
                sd = min_loss
                sl_out[k] = L * (1 - d * min_loss)
        tp_d[k], sl_d[k] = td, sd
    return fate, tp_out, sl_out, tp_d, sl_d


@njit(cache=True, nogil=True)
def _reject_fate(td, sd, min_profit, max_profit, min_loss, max_loss):
    if td < min_profit - TOL:
        return F_TP_BELOW_MIN
    if td > max_profit + TOL:
        return F_TP_ABOVE_MAX
    if sd < min_loss - TOL:
        return F_SL_BELOW_MIN
    if sd > max_loss + TOL:
        return F_SL_ABOVE_MAX
    return F_OK
