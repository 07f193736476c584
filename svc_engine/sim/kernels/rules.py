"""The exit rules of docs/exits.md: exit conditions and holding times that close at the next
open, trailing stops and break-even moves that move the stop from candle to candle.

Example:
    >>> has_rules_nb(np.zeros(0, np.bool_), np.zeros(0, np.int64), np.zeros((0, 4)))
    False
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

from svc_engine.sim.kernels.outcome import (
    candle_rules_nb,
    ensure_exit_nb,
    ensure_fill_nb,
    find_market_fill_nb,
    stop_level_nb,
)
from svc_engine.sim.kernels.records import (
    F_OK,
    LONG,
    NO_MOVES,
    R_BE,
    R_END,
    R_REVERSE,
    R_SIGNAL,
    R_TIME,
    R_TP_GAP,
    R_TRAIL,
    SHORT,
)


@njit(cache=True, nogil=True)
def find_exit_rules_nb(
    o, h, lo, c, i, side, entry, open_fill, tp, sl, leverage, last, exit_flag, hold, moves=NO_MOVES, cut=-1
):
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

    ``cut`` (stop-and-reverse, docs/sim.md; -1: none) is the candle at whose close an opposite
    signal reverses the trade: if no level ends it first, it closes at the next open, reason
    ``reverse`` (whatever that open gaps through: the reversing order is placed all the same).

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
            best, armed, be_armed, stop, stop_reason, gap_reason = next_stop_nb(
                moves,
                side,
                entry,
                j == i and not open_fill,
                c[i],
                h[j],
                lo[j],
                best,
                armed,
                be_armed,
                base,
                base_reason,
                base_gap,
            )
        if j == cut:
            return j + 1, o[j + 1], np.int64(R_REVERSE)
        ends, j1, x, reason = rule_exit_nb(o, j, i, side, tp, stop, gap_reason, exit_flag, hold)
        if ends:
            return j1, x, reason
    return last, c[last], np.int64(R_END)


@njit(cache=True, nogil=True)
def reverse_cut_nb(rev_side, side, start, last):
    """Stop-and-reverse (docs/sim.md): the first candle ``j`` in ``[start, last)`` whose first
    valid signal (``rev_side``: per candle the side of the signal that passed the filter there, 0
    none) is on the side opposite to ``side``, or -1. A trade reverses at that candle's close; on
    the last candle it ends there (``end``) instead.

    Example:
        >>> reverse_cut_nb(np.array([0, 1, -1, 1], np.int8), LONG, 1, 3), reverse_cut_nb(
        ...     np.array([0, 1, -1, 1], np.int8), SHORT, 2, 3)
        (2, -1)
    """
    for j in range(max(start, 0), last):
        if rev_side[j] == -side:
            return np.int64(j)
    return np.int64(-1)


def reverse_sides(n: int, sidx: np.ndarray, side: np.ndarray, fate: np.ndarray) -> np.ndarray:
    """Per candle (``n`` of them) the side of the signal there that passed the filter (``fate``
    ``F_OK``: one per candle at most, later ones on a candle are ``skipped_min_gap``), 0 where none:
    what :func:`reverse_cut_nb` reads.

    Example:
        >>> ok = np.array([-1, -1], np.int8)
        >>> reverse_sides(4, np.array([1, 2]), np.array([1, -1], np.int8), ok).tolist()
        [0, 1, -1, 0]
    """
    out = np.zeros(n, np.int8)
    ok = fate == F_OK
    out[sidx[ok]] = side[ok]
    return out


@njit(cache=True, nogil=True)
def move_stop_nb(moves, side, entry, best, armed, be_armed, base, base_reason, base_gap):
    """The stop of the next candle from the best price reached so far (docs/exits.md, "The stop
    of each candle"): (trailing armed, break-even armed, stop, its reason, its gap reason). Both
    moves arm once ``best`` is their fraction beyond the entry and then stay armed.

    Example:
        >>> from svc_engine.sim.kernels.records import R_SL, R_SL_GAP
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
def next_stop_nb(
    moves, side, entry, at_fill, c_fill, hj, lj, best, armed, be_armed, base, base_reason, base_gap
):
    """After the close of candle ``j`` (no exit on it): the best price through ``j`` and the stop
    of candle ``j + 1`` (best, trailing armed, break-even armed, stop, its reason, its gap reason).
    On an intrabar fill candle (``at_fill``) only its close ``c_fill`` counts. The per-candle step
    that :func:`find_exit_rules_nb` and the live evaluator (``svc_engine.live``) share.

    Example:
        >>> from svc_engine.sim.kernels.records import R_SL, R_SL_GAP
        >>> next_stop_nb(np.array([0.1, np.nan, np.nan, np.nan]), LONG, 10.0, False, 10.0, 12.0, 11.0,
        ...              10.0, True, False, 9.0, R_SL, R_SL_GAP)[:4]
        (12.0, True, False, 10.8)
    """
    reach = c_fill if at_fill else (hj if side == LONG else lj)
    best = max(best, reach) if side == LONG else min(best, reach)
    armed, be_armed, stop, stop_reason, gap_reason = move_stop_nb(
        moves, side, entry, best, armed, be_armed, base, base_reason, base_gap
    )
    return best, armed, be_armed, stop, stop_reason, gap_reason


@njit(cache=True, nogil=True)
def exit_due_nb(flag_j, hold, held):
    """Whether the exit rules close the trade at the next open, decided at a candle's close:
    (due?, by the exit condition?). ``held`` counts the candles held, the fill candle included.

    Example:
        >>> exit_due_nb(False, 3, 3), exit_due_nb(True, 0, 1)
        ((True, False), (True, True))
    """
    return flag_j or (hold > 0 and held >= hold), flag_j


@njit(cache=True, nogil=True)
def rule_exit_at_nb(nxt, side, tp, stop, gap_reason, by_signal):
    """(raw exit price, reason) of a trade an exit rule closes at the open ``nxt``: named for the
    stop or take-profit that open gaps through, else ``signal`` or ``time``.

    Example:
        >>> rule_exit_at_nb(9.0, LONG, np.inf, 9.5, 1, True), rule_exit_at_nb(10.0, LONG, 11.0, 9.5, 1, False)
        ((9.0, 1), (10.0, 7))
    """
    if (side == LONG and nxt <= stop) or (side == SHORT and nxt >= stop):
        return nxt, np.int64(gap_reason)
    if (side == LONG and nxt >= tp) or (side == SHORT and nxt <= tp):
        return nxt, np.int64(R_TP_GAP)
    return nxt, np.int64(R_SIGNAL if by_signal else R_TIME)


@njit(cache=True, nogil=True)
def rule_exit_nb(o, j, i, side, tp, stop, gap_reason, exit_flag, hold):
    """Rule 3 of docs/exits.md at the close of candle ``j`` (not the last): (ends?, exit candle,
    raw exit price, reason). An exit condition on ``j`` or the end of the holding time closes the
    trade at the open of ``j + 1``, named for the stop or take-profit that open gaps through.

    Example:
        >>> from svc_engine.sim.kernels.records import R_SL_GAP
        >>> rule_exit_nb(np.array([10.0, 10.0, 9.0]), 1, 1, LONG, np.inf, 9.5, R_SL_GAP,
        ...              np.array([False, True, False]), 0)
        (True, 2, 9.0, 1)
    """
    due, by_signal = exit_due_nb(exit_flag.shape[0] > 0 and exit_flag[j], hold, j - i + 1)
    if not due:
        return False, j, 0.0, np.int64(0)
    x, reason = rule_exit_at_nb(o[j + 1], side, tp, stop, gap_reason, by_signal)
    return True, j + 1, x, reason


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
def ensure_rule_exit_nb(memo, k, o, h, lo, c, side, tp, sl, leverage, last, exit_flag, hold, moves, cut=-1):
    """:func:`ensure_exit_nb` with the exit rules of signal ``k`` (docs/exits.md): ``exit_flag``
    one bool per candle of ``o``, ``hold`` and ``moves`` one entry per signal; each may be empty
    (unused), and with none (and no reversing ``cut``) :func:`find_exit_nb` runs as without rules."""
    if cut < 0 and not has_rules_nb(exit_flag, hold, moves):
        ensure_exit_nb(memo, k, o, h, lo, c, side, tp, sl, leverage, last)
    elif memo[k].done == 1 and memo[k].fill_candle >= 0:
        j, x, reason = find_exit_rules_nb(
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
            exit_flag,
            hold[k] if hold.shape[0] > 0 else 0,
            moves[k] if moves.shape[0] > 0 else NO_MOVES,
            cut,
        )
        memo[k].exit_candle, memo[k].exit_raw, memo[k].reason = j, x, reason
        memo[k].done = 2


def reverse_args(sig: Any, fate: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Stop-and-reverse for the kernels (docs/sim.md): (reverse per signal, the side of the valid
    signal per candle), from the filter's ``fate`` (before the sweep changes it); empty when no
    signal reverses.

    Example:
        >>> from svc_engine.sim.inputs import Signals
        >>> one = lambda x: np.array([x])
        >>> sig = Signals(one(0), one(0), one(np.int8(1)), one(1.0), one(2.0), one(0.5), one(False))
        >>> [a.size for a in reverse_args(sig, one(np.int8(-1)), 3)]
        [0, 0]
    """
    if not sig.reverse.size or not sig.reverse.any():
        return sig.reverse[:0], np.zeros(0, np.int8)
    return sig.reverse, reverse_sides(n, sig.sidx, sig.side, fate)
