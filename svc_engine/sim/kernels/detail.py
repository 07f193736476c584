"""``intrabar="detail"``: the fill candle and the candles touching both levels replayed on a
finer series (docs/sim.md), with the exit rules of docs/exits.md.

Example:
    >>> p = np.array([10.5, 9.8])
    >>> fine_fill_nb(p, p + 0.1, p - 0.1, 0, 2, LONG, 10.0)
    (1, 9.8, True)
"""

from __future__ import annotations

import numpy as np
from numba import njit

from svc_engine.sim.kernels.outcome import candle_rules_nb, stop_level_nb
from svc_engine.sim.kernels.records import LONG, R_END, R_REVERSE, SHORT
from svc_engine.sim.kernels.rules import move_stop_nb, rule_exit_nb


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
    o,
    h,
    lo,
    c,
    i,
    side,
    entry,
    open_fill,
    tp,
    sl,
    leverage,
    last,
    fo,
    fh,
    flo,
    fc,
    fs,
    fe,
    fill_f,
    exit_flag,
    hold,
    moves,
    cut=-1,
):
    """``find_exit_nb`` with the fill candle (from the fine fill on) and every candle that touches
    both levels replayed on its fine candles ``fs[j] .. fe[j]-1``; where a candle has no fine
    candles, or the replay finds no exit on a both-touching candle, the conservative rules stand.

    The exit rules (``exit_flag``, ``hold``, ``moves`` as in :func:`find_exit_rules_nb`; an empty
    flag array, 0 and ``NO_MOVES`` when unused) apply at each candle's close as there. The stop of
    a candle stays the same through its fine candles; the best price of a replayed fill candle is
    the extreme of its fine candles after the fine fill (the fine fill candle's own extreme after
    an open fill on it, else its close). ``cut``: the reversing candle of stop-and-reverse (-1: none)."""
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
        if j == cut:
            return j + 1, o[j + 1], np.int64(R_REVERSE)
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


@njit(cache=True, nogil=True)
def detail_outcome_nb(
    memo, k, o, h, lo, c, side, limit, tp, sl, lev, last, fine, exit_flag, market, hold, moves, cut=-1
):
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
        o,
        h,
        lo,
        c,
        i,
        side,
        memo[k].entry_raw,
        memo[k].open_fill,
        tp,
        sl,
        lev,
        last,
        fo,
        fh,
        flo,
        fc,
        fs,
        fe,
        f,
        exit_flag,
        hold,
        moves,
        cut,
    )
    memo[k].exit_candle, memo[k].exit_raw, memo[k].reason = j, x, reason
    memo[k].done = 2
