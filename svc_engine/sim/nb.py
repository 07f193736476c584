"""numba kernels of the simulation: filter, per-signal outcome, sweeps, equity and the divide search.

Kernels take only contiguous NumPy arrays and scalars and release the GIL. Prices are float64,
candle indices int64, sides int8 (``LONG`` = 1, ``SHORT`` = -1). Every rule follows
``engine-semantics.md``; a short position mirrors every comparison. The Python layer
(``single.py``, ``multi.py``) validates input and wraps the record arrays filled here.

Example:
    >>> round(net_return(LONG, 100.0, 110.0, 0.0), 12)
    0.1
"""

from __future__ import annotations

import numpy as np
from numba import njit

LONG: int = 1
SHORT: int = -1

# exit reasons
R_SL, R_SL_GAP, R_TP, R_TP_GAP, R_LIQ, R_END, R_SIGNAL, R_TIME, R_TRAIL, R_BE = 0, 1, 2, 3, 4, 5, 6, 7, 8, 9
REASONS: tuple[str, ...] = (
    "sl", "sl_gap", "tp", "tp_gap", "liquidation", "end", "signal", "time", "trailing_stop", "breakeven"
)  # fmt: skip
NO_MOVES = np.full(4, np.nan)
"""Stop moves of a trade: trailing fraction, trailing distance, trailing activation, break-even
activation (fractions of the entry; NaN: none)."""

# fates of a signal; F_OK = passed the filter, not decided yet
F_OK = -1
F_TRADED, F_EXPIRED, F_INVALID, F_TP_BELOW_MIN, F_TP_ABOVE_MAX = 0, 1, 2, 3, 4
F_SL_BELOW_MIN, F_SL_ABOVE_MAX, F_MIN_GAP, F_BUSY, F_COIN_BUSY, F_NO_SLOT = 5, 6, 7, 8, 9, 10
FATES: tuple[str, ...] = (
    "traded", "expired", "skipped_invalid", "skipped_tp_below_min", "skipped_tp_above_max",
    "skipped_sl_below_min", "skipped_sl_above_max", "skipped_min_gap", "skipped_busy",
    "skipped_coin_busy", "skipped_no_slot",
)  # fmt: skip

TOL = 1e-12
"""A distance is above (below) a limit when it passes it by more than this."""

TRADE_DTYPE = np.dtype(
    [
        ("coin", np.int32), ("signal_row", np.int64),
        ("signal_candle", np.int64), ("fill_candle", np.int64), ("exit_candle", np.int64),
        ("side", np.int8), ("reason", np.int8), ("open_fill", np.bool_),
        ("limit", np.float64), ("tp", np.float64), ("sl", np.float64),
        ("tp_dist", np.float64), ("sl_dist", np.float64),
        ("entry_raw", np.float64), ("exit_raw", np.float64),
        ("entry", np.float64), ("exit", np.float64),
        ("stake", np.float64), ("ret", np.float64), ("profit", np.float64), ("balance", np.float64),
    ]
)  # fmt: skip
"""One trade: ``signal_row`` its signal's index in the signal arrays; ``signal_candle``,
``fill_candle``, ``exit_candle`` candle indices local to its coin (``s``, ``i``, ``j`` of
engine-semantics); ``ret`` is ``max(leverage * r, -1)``; ``entry``/``exit`` are executed prices
(after spread)."""

OUTCOME_DTYPE = np.dtype(
    [
        ("done", np.int8), ("fill_candle", np.int64), ("expiry_candle", np.int64), ("open_fill", np.bool_),
        ("entry_raw", np.float64), ("exit_candle", np.int64), ("exit_raw", np.float64),
        ("reason", np.int8), ("fine_fill_candle", np.int64),
    ]
)  # fmt: skip
"""Memo of one signal's outcome: ``done`` 0 nothing, 1 fill known, 2 exit known; ``fill_candle``
= -1 when the order expires at ``expiry_candle``; ``fine_fill_candle`` the fine candle of the fill
(intrabar detail) or -1."""


# ---------------------------------------------------------------- (a) filter and outcome


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
                min_profit if no_tp else td, min_loss if no_sl else sd,
                min_profit, max_profit, min_loss, max_loss,
            )  # fmt: skip
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
        if side == LONG and lo[k] <= limit:
            return k, min(o[k], limit), o[k] <= limit, k
        if side == SHORT and h[k] >= limit:
            return k, max(o[k], limit), o[k] >= limit, k
        k += 1
    return -1, np.nan, False, k - 1


@njit(cache=True, nogil=True)
def stop_level_nb(entry, side, sl, leverage):
    """(stop price, its reason, its gap reason): the liquidation level ``Q`` (from the raw fill
    price) replaces ``SL`` where it lies between the entry and ``SL``.

    Example:
        >>> stop_level_nb(10.0, LONG, 7.0, 5.0)
        (8.0, 4, 4)
    """
    if leverage > 1:
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
def find_exit_rules_nb(o, h, lo, c, i, side, entry, open_fill, tp, sl, leverage, last, exit_flag, hold,
                       moves=NO_MOVES):  # fmt: skip
    """:func:`find_exit_nb` plus the exit rules a strategy can say in words (docs/exits.md): on each
    candle from the fill on, rules 1-3 first (stop first, gaps at the open); then, at the candle's
    close, an exit condition (``exit_flag``, one bool per candle, may be empty) or the end of the
    holding time (``hold`` candles counting the fill candle, 0 = none) closes the trade at the
    next candle's open (reason ``signal`` or ``time``), unless that open gaps through the stop or
    the take-profit, which then names the exit (at the same price). On the last candle it ends
    there at its close (``end``).

    ``moves`` (see ``NO_MOVES``) move the stop: a trailing stop follows the best price reached
    (long: highest high) at a fraction or a distance below it, from the start or once that best
    price is a fraction above the entry; a break-even move lifts the stop to the entry once the best
    price is a fraction above it. A candle's own high moves the stop only from the next candle on
    (its order against the low is unknown); on an intrabar fill candle only its close counts. The
    reason names the level that was hit: ``trailing_stop`` or ``breakeven`` where that level lay
    beyond the initial stop.

    Example:
        >>> o = np.array([10.0, 10.0, 10.2, 10.4]); h = o + 0.1; lo = o - 0.1
        >>> flag = np.array([False, False, True, False])
        >>> find_exit_rules_nb(o, h, lo, o, 1, LONG, 10.0, True, np.inf, -np.inf, 1.0, 3, flag, 0)
        (3, 10.4, 6)
        >>> find_exit_rules_nb(o, h, lo, o, 1, LONG, 10.0, True, np.inf, -np.inf, 1.0, 3, flag[:0], 1)
        (2, 10.2, 7)
    """
    base, base_reason, base_gap = stop_level_nb(entry, side, sl, leverage)
    stop, stop_reason, gap_reason = base, base_reason, base_gap
    moving = not (np.isnan(moves[0]) and np.isnan(moves[1]) and np.isnan(moves[3]))
    armed = (not (np.isnan(moves[0]) and np.isnan(moves[1]))) and np.isnan(moves[2])
    be_armed, best = False, entry
    for j in range(i, last + 1):
        hit, x, reason = candle_rules_nb(
            o[j], h[j], lo[j], c[i], side, j == i and not open_fill, tp, stop, stop_reason, gap_reason
        )
        if hit:
            return j, x, reason
        if j == last:
            break
        if moving:
            reach = c[i] if (j == i and not open_fill) else (h[j] if side == LONG else lo[j])
            best = max(best, reach) if side == LONG else min(best, reach)
            armed, be_armed, stop, stop_reason, gap_reason = move_stop_nb(
                moves, side, entry, best, armed, be_armed, base, base_reason, base_gap
            )
        ends, j1, x, reason = rule_exit_nb(o, j, i, side, tp, stop, gap_reason, exit_flag, hold)
        if ends:
            return j1, x, reason
    return last, c[last], np.int64(R_END)


@njit(cache=True, nogil=True)
def move_stop_nb(moves, side, entry, best, armed, be_armed, base, base_reason, base_gap):
    """The stop of the next candle from the best price reached so far (docs/exits.md, "The stop
    of each candle"): (trailing armed, break-even armed, stop, its reason, its gap reason). Both
    moves arm once ``best`` is their fraction beyond the entry and then stay armed.

    Example:
        >>> move_stop_nb(np.array([np.nan, 0.5, np.nan, np.nan]), LONG, 10.0, 12.0, True, False,
        ...              9.0, R_SL, R_SL_GAP)[2:]
        (11.5, 8, 8)
    """
    frac, dist, after, be = moves[0], moves[1], moves[2], moves[3]
    trailing = not (np.isnan(frac) and np.isnan(dist))
    gain = (best / entry - 1.0) * side
    if trailing and not armed and gain >= after:
        armed = True
    if not np.isnan(be) and gain >= be:
        be_armed = True
    stop, stop_reason, gap_reason = base, base_reason, base_gap
    if be_armed and (entry - stop) * side > 0:
        stop, stop_reason, gap_reason = entry, np.int64(R_BE), np.int64(R_BE)
    if armed:
        level = best * (1.0 - side * frac) if not np.isnan(frac) else best - side * dist
        if (level - stop) * side > 0:
            stop, stop_reason, gap_reason = level, np.int64(R_TRAIL), np.int64(R_TRAIL)
    return armed, be_armed, stop, stop_reason, gap_reason


@njit(cache=True, nogil=True)
def rule_exit_nb(o, j, i, side, tp, stop, gap_reason, exit_flag, hold):
    """Rule 3 of docs/exits.md at the close of candle ``j`` (not the last): (ends?, exit candle,
    raw exit price, reason). An exit condition on ``j`` or the end of the holding time closes the
    trade at the open of ``j + 1``, named for the stop or take-profit that open gaps through.

    Example:
        >>> rule_exit_nb(np.array([10.0, 10.0, 9.0]), 1, 1, LONG, np.inf, 9.5, R_SL_GAP,
        ...              np.array([False, True, False]), 0)
        (True, 2, 9.0, 1)
    """
    by_signal = exit_flag.shape[0] > 0 and exit_flag[j]
    if not (by_signal or (hold > 0 and j - i + 1 >= hold)):
        return False, j, 0.0, np.int64(0)
    nxt = o[j + 1]
    if (side == LONG and nxt <= stop) or (side == SHORT and nxt >= stop):
        return True, j + 1, nxt, np.int64(gap_reason)
    if (side == LONG and nxt >= tp) or (side == SHORT and nxt <= tp):
        return True, j + 1, nxt, np.int64(R_TP_GAP)
    return True, j + 1, nxt, np.int64(R_SIGNAL if by_signal else R_TIME)


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
            o, h, lo, c, memo[k].fill_candle, side, memo[k].entry_raw, memo[k].open_fill,
            tp, sl, leverage, last,
        )  # fmt: skip
        memo[k].exit_candle, memo[k].exit_raw, memo[k].reason = j, x, reason
        memo[k].done = 2


@njit(cache=True, nogil=True)
def ensure_order_fill_nb(memo, k, t, o, h, lo, s, side, limit, deadline_ms, market):
    """:func:`ensure_fill_nb` for a limit order or, where ``market[k]`` (``market`` may be empty:
    all limit orders), a market order filling at the next candle's open (docs/exits.md)."""
    if memo[k].done == 0 and market.shape[0] > 0 and market[k]:
        i, e_raw, open_fill, e = find_market_fill_nb(t, o, s, deadline_ms)
        memo[k].fill_candle, memo[k].entry_raw, memo[k].open_fill = i, e_raw, open_fill
        memo[k].expiry_candle = e
        memo[k].done = 1
    ensure_fill_nb(memo, k, t, o, h, lo, s, side, limit, deadline_ms)


@njit(cache=True, nogil=True)
def has_rules_nb(exit_flag, hold, moves):
    """Whether any exit rule is present (each array may be empty: that rule is unused)."""
    return exit_flag.shape[0] > 0 or hold.shape[0] > 0 or moves.shape[0] > 0


@njit(cache=True, nogil=True)
def ensure_rule_exit_nb(memo, k, o, h, lo, c, side, tp, sl, leverage, last, exit_flag, hold, moves):
    """:func:`ensure_exit_nb` with the exit rules of signal ``k`` (docs/exits.md): ``exit_flag``
    one bool per candle of ``o``, ``hold`` and ``moves`` one entry per signal; each may be empty
    (unused), and with none :func:`find_exit_nb` runs as without rules."""
    if not has_rules_nb(exit_flag, hold, moves):
        ensure_exit_nb(memo, k, o, h, lo, c, side, tp, sl, leverage, last)
    elif memo[k].done == 1 and memo[k].fill_candle >= 0:
        j, x, reason = find_exit_rules_nb(
            o, h, lo, c, memo[k].fill_candle, side, memo[k].entry_raw, memo[k].open_fill,
            tp, sl, leverage, last, exit_flag, hold[k] if hold.shape[0] > 0 else 0,
            moves[k] if moves.shape[0] > 0 else NO_MOVES,
        )  # fmt: skip
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


# ---------------------------------------------------------------- intrabar detail


@njit(cache=True, nogil=True)
def fine_fill_nb(fo, fh, flo, a, b, side, limit):
    """The fill replayed on the fine candles ``a .. b-1`` of the fill candle: (fine candle or -1,
    price, open fill on that fine candle?).

    Example:
        >>> p = np.array([10.5, 9.8])
        >>> fine_fill_nb(p, p + 0.1, p - 0.1, 0, 2, LONG, 10.0)
        (1, 9.8, True)
    """
    for f in range(a, b):
        if side == LONG and flo[f] <= limit:
            return f, min(fo[f], limit), fo[f] <= limit
        if side == SHORT and fh[f] >= limit:
            return f, max(fo[f], limit), fo[f] >= limit
    return -1, np.nan, False


@njit(cache=True, nogil=True)
def replay_nb(fo, fh, flo, fc, start, stop_f, fill_f, open_fill_f, side, tp, stop, stop_reason, gap_reason):
    """Rules 1-3 on fine candles ``start .. stop_f-1`` (``fill_f`` = the fine fill candle, or -1
    when the fill happened before them): (hit?, raw exit price, reason)."""
    c_fill = fc[fill_f] if fill_f >= 0 else 0.0
    for f in range(start, stop_f):
        hit, x, reason = candle_rules_nb(
            fo[f],
            fh[f],
            flo[f],
            c_fill,
            side,
            f == fill_f and not open_fill_f,
            tp,
            stop,
            stop_reason,
            gap_reason,
        )
        if hit:
            return True, x, reason
    return False, 0.0, np.int64(0)


@njit(cache=True, nogil=True)
def find_exit_detail_nb(
    o, h, lo, c, i, side, entry, open_fill, tp, sl, leverage, last, fo, fh, flo, fc, fs, fe, fill_f,
    exit_flag, hold, moves,
):  # fmt: skip
    """``find_exit_nb`` with the fill candle (from the fine fill on) and every candle that touches
    both levels replayed on its fine candles ``fs[j] .. fe[j]-1``; where a candle has no fine
    candles, or the replay finds no exit on a both-touching candle, the conservative rules stand.

    The exit rules (``exit_flag``, ``hold``, ``moves`` as in :func:`find_exit_rules_nb`; an empty
    flag array, 0 and ``NO_MOVES`` when unused) apply at each candle's close as there. The stop of
    a candle stays the same through its fine candles; the best price of a replayed fill candle is
    the extreme of its fine candles after the fine fill (the fine fill candle's own extreme after
    an open fill on it, else its close)."""
    base, base_reason, base_gap = stop_level_nb(entry, side, sl, leverage)
    stop, stop_reason, gap_reason = base, base_reason, base_gap
    moving = not (np.isnan(moves[0]) and np.isnan(moves[1]) and np.isnan(moves[3]))
    armed = (not (np.isnan(moves[0]) and np.isnan(moves[1]))) and np.isnan(moves[2])
    be_armed, best = False, entry
    for j in range(i, last + 1):
        hit, x, reason = False, 0.0, np.int64(0)
        if j == i and fill_f >= 0:
            hit, x, reason = replay_nb(
                fo, fh, flo, fc, fill_f, fe[i], fill_f, open_fill, side, tp, stop, stop_reason, gap_reason
            )
        else:
            at_fill = j == i and not open_fill
            both = (lo[j] <= stop and h[j] >= tp) if side == LONG else (h[j] >= stop and lo[j] <= tp)
            if both and not at_fill and fe[j] > fs[j]:
                hit, x, reason = replay_nb(
                    fo, fh, flo, fc, fs[j], fe[j], -1, False, side, tp, stop, stop_reason, gap_reason
                )
            if not hit:
                hit, x, reason = candle_rules_nb(
                    o[j], h[j], lo[j], c[i], side, at_fill, tp, stop, stop_reason, gap_reason
                )
        if hit:
            return j, x, reason
        if j == last:
            break
        if moving:
            if j == i and fill_f >= 0:
                reach = fine_reach_nb(fh, flo, fc, fill_f, fe[i], open_fill, side)
            elif j == i and not open_fill:
                reach = c[i]
            else:
                reach = h[j] if side == LONG else lo[j]
            best = max(best, reach) if side == LONG else min(best, reach)
            armed, be_armed, stop, stop_reason, gap_reason = move_stop_nb(
                moves, side, entry, best, armed, be_armed, base, base_reason, base_gap
            )
        ends, j1, x, reason = rule_exit_nb(o, j, i, side, tp, stop, gap_reason, exit_flag, hold)
        if ends:
            return j1, x, reason
    return last, c[last], np.int64(R_END)


@njit(cache=True, nogil=True)
def fine_reach_nb(fh, flo, fc, f, stop_f, open_fill, side):
    """The best price (long: highest) reached on fine candles ``f .. stop_f-1`` after a fill on
    ``f``: the extreme of ``f`` itself only after an open fill (else its close), then each later one.

    Example:
        >>> p = np.array([10.0, 10.5])
        >>> fine_reach_nb(p + 0.2, p - 0.2, p, 0, 2, False, LONG)
        10.7
        >>> fine_reach_nb(p + 0.2, p - 0.2, p, 0, 1, True, LONG)
        10.2
    """
    if side == LONG:
        best = fh[f] if open_fill else fc[f]
        for g in range(f + 1, stop_f):
            best = max(best, fh[g])
    else:
        best = flo[f] if open_fill else fc[f]
        for g in range(f + 1, stop_f):
            best = min(best, flo[g])
    return best


# ---------------------------------------------------------------- money


@njit(cache=True, nogil=True)
def executed_nb(price, side, is_entry, half_spread):
    """Executed price: a buy at ``price * (1 + h)``, a sell at ``price * (1 - h)``.

    Example:
        >>> executed_nb(100.0, SHORT, True, 0.001)
        99.9
    """
    buy = (side == LONG) == is_entry
    return price * (1 + half_spread) if buy else price * (1 - half_spread)


@njit(cache=True, nogil=True)
def net_return(side, entry, exit_, commission):
    """Net return ``r`` of one unit of stake between executed prices, commission on each side."""
    if side == LONG:
        return exit_ * (1 - commission) / (entry * (1 + commission)) - 1
    return (entry * (1 - commission) - exit_ * (1 + commission)) / entry


@njit(cache=True, nogil=True)
def levered_return(side, entry, exit_, commission, leverage):
    """``max(leverage * r, -1)``: the trade's return on its stake (a stake is never lost twice).

    Example:
        >>> levered_return(LONG, 100.0, 50.0, 0.0, 3.0)
        -1.0
    """
    return max(leverage * net_return(side, entry, exit_, commission), -1.0)


@njit(cache=True, nogil=True)
def mark_coeffs(side, entry, comm, hs):
    """(a0, a1) with ``r = a0 + a1 * close``: the net return if closed at ``close`` with all costs
    (the exit spread included); linear in the close, so a mark is one multiply-add per candle."""
    if side == LONG:
        return -1.0, (1 - hs) * (1 - comm) / (entry * (1 + comm))
    return 1 - comm, -(1 + hs) * (1 + comm) / entry


@njit(cache=True, nogil=True)
def mark_from(stake, a0, a1, close, lev):
    """Marked value ``max(0, stake * (1 + leverage * r))`` from the coefficients of ``mark_coeffs``."""
    return stake * (1 + max(lev * (a0 + a1 * close), -1.0))


@njit(cache=True, nogil=True)
def mark_value(stake, side, entry, close, comm, lev, hs):
    """Value of an open position as if closed at ``close`` with all costs (section 5).

    Example:
        >>> mark_value(100.0, LONG, 10.0, 11.0, 0.0, 1.0, 0.0)
        110.00000000000001
    """
    a0, a1 = mark_coeffs(side, entry, comm, hs)
    return mark_from(stake, a0, a1, close, lev)


@njit(cache=True, nogil=True)
def fill_trade_nb(tr, n, coin, k, s, side, limit, tp, sl, tp_d, sl_d, memo, stake, comm, lev, hs):
    """Write the entry half of trade ``n`` (exit fields follow in ``close_trade_nb``)."""
    tr[n].coin, tr[n].signal_row, tr[n].signal_candle, tr[n].fill_candle = coin, k, s, memo[k].fill_candle
    tr[n].side, tr[n].open_fill = side, memo[k].open_fill
    tr[n].limit, tr[n].tp, tr[n].sl, tr[n].tp_dist, tr[n].sl_dist = limit, tp, sl, tp_d, sl_d
    tr[n].entry_raw = memo[k].entry_raw
    tr[n].entry = executed_nb(memo[k].entry_raw, side, True, hs)
    tr[n].stake = stake


@njit(cache=True, nogil=True)
def close_trade_nb(tr, n, memo, k, comm, lev, hs):
    """Write the exit half of trade ``n``; returns its profit."""
    side = tr[n].side
    tr[n].exit_candle, tr[n].reason, tr[n].exit_raw = memo[k].exit_candle, memo[k].reason, memo[k].exit_raw
    tr[n].exit = executed_nb(memo[k].exit_raw, side, False, hs)
    # a liquidation loses exactly the stake (the formula can miss -1 by a rounding)
    tr[n].ret = -1.0 if memo[k].reason == R_LIQ else levered_return(side, tr[n].entry, tr[n].exit, comm, lev)
    tr[n].profit = tr[n].stake * tr[n].ret
    return tr[n].profit


# ---------------------------------------------------------------- (b) single coin

SIZE_FRACTION, SIZE_RISK, SIZE_QUANTITY = 0, 1, 2
"""Position sizing modes: a fraction of the balance, a risk per trade, a fixed quantity."""


@njit(cache=True, nogil=True)
def stake_nb(sizing, size, balance, sl_dist, entry_raw, lev):
    """The amount a fill commits, never more than the balance.

    - fraction: ``size * balance``;
    - risk: ``size * balance / (leverage * sl_dist)``, so that a stop at its level loses ``size``
      of the balance (before costs, spread and gaps);
    - quantity: ``size`` units at the raw fill price, ``size * entry / leverage`` (the margin).
    """
    if sizing == SIZE_FRACTION:
        stake = size * balance
    elif sizing == SIZE_RISK:
        stake = size * balance / (lev * sl_dist) if sl_dist > 0 else 0.0
    else:
        stake = size * entry_raw / lev
    return min(stake, balance)


@njit(cache=True, nogil=True)
def single_sweep_nb(
    t,
    o,
    h,
    lo,
    c,
    sidx,
    side,
    limit,
    tp,
    sl,
    tp_d,
    sl_d,
    fate,
    trades,
    tf_ms,
    wait_ms,
    gap,
    sizing,
    size,
    initial,
    comm,
    lev,
    hs,
    fine,
    exit_flag,
    market,
    hold,
    moves,
):
    """The sequential sweep of one coin. The stake of a fill is :func:`stake_nb` of ``sizing``
    and ``size`` (a fraction of the balance, by default). ``fate`` holds the filter's fates on entry and every
    signal's final fate on exit; ``trades`` (capacity = signals) is filled in order. ``fine`` =
    (open, high, low, close, first, stop) of a finer series, ``first``/``stop`` per candle, for
    ``intrabar="detail"``; empty arrays otherwise. ``exit_flag`` (one bool per candle), ``market``
    ``hold`` and ``moves`` (per signal) are the exit rules and market entries of docs/exits.md; empty arrays
    when unused, which leaves every result as it was. Returns (number of trades, final balance)."""
    fs = fine[4]
    detail = fs.shape[0] > 0
    memo = np.zeros(sidx.shape[0], OUTCOME_DTYPE)
    last = t.shape[0] - 1
    balance, n_tr = initial, 0
    anchor, free_at = np.int64(-1), np.int64(-1)
    has_anchor = False
    for k in range(sidx.shape[0]):
        if fate[k] != F_OK:
            continue
        s = sidx[k]
        if has_anchor and s - anchor < gap:
            fate[k] = F_MIN_GAP
            continue
        if s < free_at:
            fate[k] = F_BUSY
            continue
        anchor, has_anchor = s, True
        ensure_order_fill_nb(memo, k, t, o, h, lo, s, side[k], limit[k], t[s] + tf_ms + wait_ms, market)
        if memo[k].fill_candle < 0:
            fate[k], free_at = F_EXPIRED, memo[k].expiry_candle
            continue
        if sizing == SIZE_FRACTION:
            stake = size * balance
            if stake <= 0:
                fate[k], free_at = F_NO_SLOT, memo[k].fill_candle
                continue
        if detail:
            _detail_outcome_nb(
                memo, k, o, h, lo, c, side[k], limit[k], tp[k], sl[k], lev, last, fine, exit_flag, market,
                hold[k] if hold.shape[0] > 0 else 0, moves[k] if moves.shape[0] > 0 else NO_MOVES,
            )  # fmt: skip
        else:
            ensure_rule_exit_nb(
                memo, k, o, h, lo, c, side[k], tp[k], sl[k], lev, last, exit_flag, hold, moves
            )
        if sizing != SIZE_FRACTION:
            stake = stake_nb(sizing, size, balance, sl_d[k], memo[k].entry_raw, lev)
            if stake <= 0:
                fate[k], free_at = F_NO_SLOT, memo[k].fill_candle
                continue
        fill_trade_nb(
            trades,
            n_tr,
            0,
            k,
            s,
            side[k],
            limit[k],
            tp[k],
            sl[k],
            tp_d[k],
            sl_d[k],
            memo,
            stake,
            comm,
            lev,
            hs,
        )
        balance += close_trade_nb(trades, n_tr, memo, k, comm, lev, hs)
        trades[n_tr].balance = balance
        fate[k], free_at = F_TRADED, memo[k].exit_candle
        n_tr += 1
    return n_tr, balance


@njit(cache=True, nogil=True)
def _detail_outcome_nb(memo, k, o, h, lo, c, side, limit, tp, sl, lev, last, fine, exit_flag, market, hold,
                       moves):  # fmt: skip
    """Refine a filled order's entry on the fine candles of its fill candle, then find its exit
    with ``find_exit_detail_nb`` and the signal's exit rules. A market order fills at the open of
    its fill candle, so its fine fill is the first fine candle (an open fill at the same price)."""
    fo, fh, flo, fc, fs, fe = fine
    i = memo[k].fill_candle
    if market.shape[0] > 0 and market[k]:
        f = fs[i] if fe[i] > fs[i] else np.int64(-1)
    else:
        f, price, open_fill = fine_fill_nb(fo, fh, flo, fs[i], fe[i], side, limit)
        if f >= 0:
            memo[k].entry_raw, memo[k].open_fill = price, open_fill
    memo[k].fine_fill_candle = f
    j, x, reason = find_exit_detail_nb(
        o, h, lo, c, i, side, memo[k].entry_raw, memo[k].open_fill, tp, sl, lev, last,
        fo, fh, flo, fc, fs, fe, f, exit_flag, hold, moves,
    )  # fmt: skip
    memo[k].exit_candle, memo[k].exit_raw, memo[k].reason = j, x, reason
    memo[k].done = 2


# ---------------------------------------------------------------- (c) equity and drawdown


@njit(cache=True, nogil=True)
def _dd_segment(eq, dd, start, stop, peak, worst):
    """Drawdown % of ``eq[start:stop]`` into ``dd`` from the running peak; the reciprocal of the
    peak is kept because the peak changes rarely and a division per candle is the cost here."""
    scale = 100.0 / peak
    for k in range(start, stop):
        v = eq[k]
        if v > peak:
            peak = v
            scale = 100.0 / peak
        d = (peak - v) * scale
        dd[k] = d
        if d > worst:
            worst = d
    return peak, worst


@njit(cache=True, nogil=True)
def _flat_segment(eq, dd, start, stop, cash, peak, worst):
    """A stretch with no open position: equity is the cash, so its drawdown is one number."""
    if stop <= start:
        return peak, worst
    peak = max(peak, cash)
    d = (peak - cash) * (100.0 / peak)
    eq[start:stop] = cash
    dd[start:stop] = d
    return peak, max(worst, d)


@njit(cache=True, nogil=True)
def equity_drawdown_nb(c, trades, initial, comm, lev, hs, eq, dd):
    """Equity at every candle close after that candle's events, for sequential (non-overlapping)
    trades of one coin (realised balance, minus the open stake, plus its marked value), and the
    drawdown %, into ``eq`` and ``dd`` in one pass; returns the max drawdown %. The outputs come
    from the caller: NumPy's large allocations are cheaper to fault in."""
    cash, peak, worst, pos = initial, initial, 0.0, 0
    for n in range(trades.shape[0]):
        i, j, stake = trades[n].fill_candle, trades[n].exit_candle, trades[n].stake
        a0, a1 = mark_coeffs(trades[n].side, trades[n].entry, comm, hs)
        peak, worst = _flat_segment(eq, dd, pos, i, cash, peak, worst)
        scale = 100.0 / peak
        base = cash - stake
        for k in range(i, j):
            v = base + mark_from(stake, a0, a1, c[k], lev)
            eq[k] = v
            if v > peak:
                peak = v
                scale = 100.0 / peak
            d = (peak - v) * scale
            dd[k] = d
            worst = max(worst, d)
        cash += trades[n].profit
        peak, worst = _flat_segment(eq, dd, j, j + 1, cash, peak, worst)
        pos = j + 1
    peak, worst = _flat_segment(eq, dd, pos, eq.shape[0], cash, peak, worst)
    return worst


@njit(cache=True, nogil=True)
def drawdown_nb(eq, initial):
    """Drawdown in percent below the running peak (which starts at ``initial``), and its max.

    Example:
        >>> drawdown_nb(np.array([100.0, 120.0, 90.0]), 100.0)[1]
        25.0
    """
    dd = np.empty(eq.shape[0])
    _, worst = _dd_segment(eq, dd, 0, eq.shape[0], initial, 0.0)
    return dd, worst


@njit(cache=True, nogil=True)
def max_drawdown_nb(eq, initial):
    """The largest drawdown in percent (peak starting at ``initial``).

    Example:
        >>> max_drawdown_nb(np.array([100.0, 120.0, 90.0]), 100.0)
        25.0
    """
    peak, worst = initial, 0.0
    scale = 100.0 / peak
    for k in range(eq.shape[0]):
        v = eq[k]
        if v > peak:
            peak = v
            scale = 100.0 / peak
        worst = max(worst, (peak - v) * scale)
    return worst


# ---------------------------------------------------------------- (d) portfolio sweep


@njit(cache=True, nogil=True)
def _open_stakes(staked):
    """The stakes of the open positions summed in coin order; a free coin holds 0.0, which
    leaves the sum exactly as skipping it would, without reading the trades."""
    total = 0.0
    for ci in range(staked.shape[0]):
        total += staked[ci]
    return total


@njit(cache=True, nogil=True)
def portfolio_sweep_nb(
    t,
    o,
    h,
    lo,
    c,
    off,
    upos,
    n_times,
    sidx,
    side,
    limit,
    tp,
    sl,
    tp_d,
    sl_d,
    fate,
    soff,
    memo,
    exit_flag,
    market,
    hold,
    moves,
    trades,
    eq,
    divide,
    initial,
    comm,
    lev,
    hs,
    tf_ms,
    wait_ms,
    gap,
    sizing=SIZE_FRACTION,
    size=1.0,
):
    """One sweep over the union of candle times with ``divide`` slots (section 6). With
    ``sizing`` other than a fraction, a fill's stake is :func:`stake_nb` of the balance (cash plus
    open stakes), capped at the free cash; ``divide`` still caps the open positions. Candles and
    signals of all coins are concatenated coin by coin (``off``, ``soff``); ``upos`` maps each
    candle to its union time; ``memo`` caches outcomes across sweeps. ``fate`` holds the filter's
    fates on entry and final fates on exit; ``eq`` receives equity per union time (cash after the
    events, then every open position's mark added trade by trade); ``hs`` is the half spread of
    each coin. ``exit_flag`` (per candle, concatenated like the candles), ``market``, ``hold`` and
    ``moves`` (per signal) are the exit rules and market entries of docs/exits.md, run as in the
    single-coin sweep; empty arrays when unused. Only event times are visited: each coin is filed
    under the union time of its next event (a coin's events touch only itself, and coins sharing a
    time go in coin order).
    Returns (trades, final cash, most open positions)."""
    nc = off.shape[0] - 1
    sp = soff[:-1].copy()
    state, cur, slot = np.zeros(nc, np.int8), np.full(nc, -1, np.int64), np.full(nc, -1, np.int64)
    anchor, staked = np.full(nc, -1, np.int64), np.zeros(nc)
    at = np.empty(nc, np.int64)  # local candle of each coin's pending event
    head, link = np.full(n_times, -1, np.int64), np.empty(nc, np.int64)
    ready = np.empty(nc, np.int64)
    for ci in range(nc):
        _schedule(head, link, at, ci, state, cur, sp, soff, sidx, off, upos, memo, fate, anchor, gap)
    cash, n_open, n_tr, max_open = initial, 0, 0, 0
    for u in range(n_times):
        if head[u] < 0:
            eq[u] = cash
            continue
        m = _take_bucket(head, link, u, ready)
        # exits and expiries of positions and orders from earlier candles
        for q in range(m):
            ci = ready[q]
            a, k = at[ci], cur[ci]
            if state[ci] == 2 and memo[k].exit_candle == a:
                cash += trades[slot[ci]].stake + close_trade_nb(trades, slot[ci], memo, k, comm, lev, hs[ci])
                state[ci], staked[ci] = 0, 0.0
                n_open -= 1
                trades[slot[ci]].balance = cash + _open_stakes(staked)
            elif state[ci] == 1 and memo[k].fill_candle < 0 and memo[k].expiry_candle == a:
                fate[k], state[ci] = F_EXPIRED, 0
        # fills coin by coin, then each coin's new signals (they touch only their own coin)
        for q in range(m):
            ci = ready[q]
            a, k = at[ci], cur[ci]
            b, z = off[ci], off[ci + 1]
            if state[ci] == 1 and memo[k].fill_candle == a:
                if sizing == SIZE_FRACTION:
                    stake = min((cash + _open_stakes(staked)) / divide, cash)
                else:
                    balance = cash + _open_stakes(staked)
                    stake = min(stake_nb(sizing, size, balance, sl_d[k], memo[k].entry_raw, lev), cash)
                if n_open >= divide or stake <= 0:
                    fate[k], state[ci] = F_NO_SLOT, 0
                else:
                    if memo[k].done == 1:  # slices only when needed: views cost reference counting
                        ensure_rule_exit_nb(
                            memo, k, o[b:z], h[b:z], lo[b:z], c[b:z], side[k], tp[k], sl[k], lev, z - b - 1,
                            exit_flag[b:z], hold, moves,
                        )  # fmt: skip
                    fill_trade_nb(
                        trades,
                        n_tr,
                        ci,
                        k,
                        sidx[k],
                        side[k],
                        limit[k],
                        tp[k],
                        sl[k],
                        tp_d[k],
                        sl_d[k],
                        memo,
                        stake,
                        comm,
                        lev,
                        hs[ci],
                    )
                    fate[k], state[ci], slot[ci], staked[ci] = F_TRADED, 2, n_tr, stake
                    cash -= stake
                    n_open += 1
                    n_tr += 1
                    max_open = max(max_open, n_open)
                    if memo[k].exit_candle == a:  # closes right after its own fill
                        cash += stake + close_trade_nb(trades, slot[ci], memo, k, comm, lev, hs[ci])
                        state[ci], staked[ci] = 0, 0.0
                        n_open -= 1
                        trades[slot[ci]].balance = cash + _open_stakes(staked)
            while sp[ci] < soff[ci + 1] and sidx[sp[ci]] == a:  # minimum gap, then busy
                k = sp[ci]
                sp[ci] += 1
                if fate[k] != F_OK:
                    continue
                if anchor[ci] >= 0 and a - anchor[ci] < gap:
                    fate[k] = F_MIN_GAP
                elif state[ci] != 0:
                    fate[k] = F_COIN_BUSY
                else:
                    anchor[ci], state[ci], cur[ci] = a, 1, k
                    if memo[k].done == 0:
                        deadline = t[b + a] + tf_ms + wait_ms
                        ensure_order_fill_nb(
                            memo, k, t[b:z], o[b:z], h[b:z], lo[b:z], a, side[k], limit[k], deadline, market
                        )
                    # no live candle: expires at once
                    if memo[k].fill_candle < 0 and memo[k].expiry_candle == a:
                        fate[k], state[ci] = F_EXPIRED, 0
            _schedule(head, link, at, ci, state, cur, sp, soff, sidx, off, upos, memo, fate, anchor, gap)
        eq[u] = cash
    _add_marks(eq, trades, n_tr, off, upos, c, comm, lev, hs)
    return n_tr, cash, max_open


@njit(cache=True, nogil=True)
def _add_marks(eq, trades, n_tr, off, upos, c, comm, lev, hs):
    """Add each position's marked value to the cash in ``eq`` at every union time it is open,
    valued at its coin's latest close (held until the coin's next candle)."""
    for n in range(n_tr):
        ci, i, j, stake = trades[n].coin, trades[n].fill_candle, trades[n].exit_candle, trades[n].stake
        a0, a1 = mark_coeffs(trades[n].side, trades[n].entry, comm, hs[ci])
        b = off[ci]
        for g in range(i, j):
            v = mark_from(stake, a0, a1, c[b + g], lev)
            for u in range(upos[b + g], upos[b + g + 1]):
                eq[u] += v


@njit(cache=True, nogil=True)
def _schedule(head, link, at, ci, state, cur, sp, soff, sidx, off, upos, memo, fate, anchor, gap):
    """File coin ``ci`` under the union time of its next event (its next signal, or the fill,
    expiry or exit of what it holds), always a later time than the present one; its local
    candle goes into ``at``. A busy coin's signals before its next event are decided here at
    once (minimum gap, else busy), as the sweep would decide them one by one."""
    k, x = cur[ci], np.int64(-1)
    if state[ci] == 1:
        x = memo[k].fill_candle if memo[k].fill_candle >= 0 else memo[k].expiry_candle
    elif state[ci] == 2:
        x = memo[k].exit_candle
    end = soff[ci + 1]
    if x >= 0:
        while sp[ci] < end and sidx[sp[ci]] < x:
            q = sp[ci]
            sp[ci] += 1
            if fate[q] == F_OK:
                fate[q] = F_MIN_GAP if sidx[q] - anchor[ci] < gap else F_COIN_BUSY
    a = x
    if sp[ci] < end:
        a = sidx[sp[ci]] if x < 0 else min(x, sidx[sp[ci]])
    if a >= 0:
        at[ci] = a
        u = upos[off[ci] + a]
        link[ci], head[u] = head[u], ci


@njit(cache=True, nogil=True)
def _take_bucket(head, link, u, ready):
    """The coins filed under time ``u`` into ``ready`` in coin order (an insertion sort: few
    coins share a time); returns how many."""
    m, ci = 0, head[u]
    while ci >= 0:
        x = m
        while x > 0 and ready[x - 1] > ci:
            ready[x] = ready[x - 1]
            x -= 1
        ready[x] = ci
        m += 1
        ci = link[ci]
    return m


# ---------------------------------------------------------------- (e) divide search


@njit(cache=True, nogil=True)
def divide_search_nb(
    t,
    o,
    h,
    lo,
    c,
    off,
    upos,
    n_times,
    sidx,
    side,
    limit,
    tp,
    sl,
    tp_d,
    sl_d,
    fate0,
    soff,
    memo,
    exit_flag,
    market,
    hold,
    moves,
    candidates,
    initial,
    comm,
    lev,
    hs,
    tf_ms,
    wait_ms,
    gap,
    sizing=SIZE_FRACTION,
    size=1.0,
):
    """Run the sweep for each candidate divide; per candidate: final balance, max drawdown %,
    trades, fills cancelled for lack of a slot, most positions open at once."""
    m = candidates.shape[0]
    finals, dds = np.empty(m), np.empty(m)
    n_trades, no_slot, max_open = np.empty(m, np.int64), np.empty(m, np.int64), np.empty(m, np.int64)
    trades = np.zeros(sidx.shape[0], TRADE_DTYPE)
    eq = np.empty(n_times)
    for x in range(m):
        fate = fate0.copy()
        n_tr, cash, mo = portfolio_sweep_nb(
            t,
            o,
            h,
            lo,
            c,
            off,
            upos,
            n_times,
            sidx,
            side,
            limit,
            tp,
            sl,
            tp_d,
            sl_d,
            fate,
            soff,
            memo,
            exit_flag,
            market,
            hold,
            moves,
            trades,
            eq,
            candidates[x],
            initial,
            comm,
            lev,
            hs,
            tf_ms,
            wait_ms,
            gap,
            sizing,
            size,
        )
        finals[x], dds[x] = cash, max_drawdown_nb(eq, initial)
        n_trades[x], max_open[x] = n_tr, mo
        no_slot[x] = np.sum(fate == F_NO_SLOT)
    return finals, dds, n_trades, no_slot, max_open
