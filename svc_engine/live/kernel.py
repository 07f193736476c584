"""The live step: every pair advanced over its new candles in one numba call, by the per-candle
rules the backtest kernels use (``svc_engine.sim.kernels``: ``limit_fill_nb``, ``candle_rules_nb``,
``next_stop_nb``, ``exit_due_nb``, ``rule_exit_at_nb``, ``stop_level_nb``, ``stake_nb`` and the money
functions), so a pair stepped candle by candle ends where ``single_sweep_nb`` puts it.

The backtest decides one signal at a time over the whole range; live, a candle decides, in the
order the backtest's outcomes imply: (1) the waiting order (expired through a data gap, filled, or
known to expire), (2) the open trade on this candle (an exit due at its open, rules 1-3, then at the
close the stop of the next candle and the exit rules), (3) a signal at this candle's close, if the
coin is free and the minimum gap has passed. A trade or an order that ends on a candle frees it for
a signal there, as ``free_at`` does in the sweep.

Example:
    >>> from svc_engine.live.args import Pairs, Tape, Terms
    >>> from svc_engine.live.shared import Candidates
    >>> from svc_engine.live.state import fresh_state, EVENT_DTYPE
    >>> t = np.array([[0, 60_000]], np.int64); p = np.array([[10.0, 10.0]])
    >>> state = fresh_state(1, initial_balance=100.0, half_spread=0.0)
    >>> one, none_i, none_f = np.zeros(1, np.int64), np.zeros(0, np.int64), np.zeros(0)
    >>> pairs = Pairs(one, np.ones(1, np.int8), np.zeros(1, np.bool_), one, one)
    >>> cands = Candidates(np.zeros(2, np.int64), none_i, np.zeros(0, np.int8), *(none_f,) * 5,
    ...                    np.zeros((0, 4)), np.zeros(2, np.int64), none_i)
    >>> terms = Terms(60_000, 86_400_000, 4, 0, 1.0, 0.0, 1.0)
    >>> advance_nb(Tape(t, p, p + 1, p - 1, p), pairs, cands, terms, state, np.zeros(4, EVENT_DTYPE))
    0
"""

from __future__ import annotations

import numpy as np
from numba import njit

from svc_engine.live.state import (
    DUE_SIGNAL,
    DUE_TIME,
    E_CLOSED,
    E_EXPIRED,
    E_FILLED,
    E_NO_SLOT,
    E_PLACED,
    FLAT,
    NEVER,
    NO_DUE,
    OPEN,
    WAITING,
)
from svc_engine.sim.kernels.money import executed_nb, levered_return, stake_nb
from svc_engine.sim.kernels.outcome import candle_rules_nb, limit_fill_nb, stop_level_nb
from svc_engine.sim.kernels.records import F_OK, R_LIQ
from svc_engine.sim.kernels.rules import exit_due_nb, next_stop_nb, rule_exit_at_nb


@njit(cache=True, nogil=True)
def advance_nb(tape, pairs, cands, terms, state, events):
    """Advance every pair over the candles of its coin newer than its ``last_ms``; returns the
    number of ``events`` written (in pair order, then time order).

    ``tape`` (:class:`~svc_engine.live.args.Tape`): the last ``R`` candles of each coin; ``pairs``
    (:class:`~svc_engine.live.args.Pairs`): each pair's coin, side, market entries, holding time
    and warm-up; ``cands`` (:class:`~svc_engine.live.shared.Candidates`): the signals and exit rows
    of every pair, sorted by pair then row; ``terms`` (:class:`~svc_engine.live.args.Terms`): the
    timing and money settings (all read by position: plain tuples of their fields too,
    :func:`~svc_engine.sim.kernels.args.plain`). ``events`` needs room for 4 per signal and 3 per
    pair not flat."""
    # the records' fields under the short names of the loop below (free: numba unpacks them once)
    t, o, h, lo, c = tape
    coin, side, market, hold, count = pairs
    cand_ptr, cand_row, _, _, _, _, _, _, _, flag_ptr, flag_row = cands
    tf_ms, _, _, sizing, size, comm, lev = terms
    n = 0
    R = t.shape[1]
    for p in range(state.shape[0]):
        k = coin[p]
        a, a_end = cand_ptr[p], cand_ptr[p + 1]
        f, f_end = flag_ptr[p], flag_ptr[p + 1]
        for r in range(R):
            tj = t[k, r]
            if tj <= state[p].last_ms:
                continue
            while a < a_end and cand_row[a] < r - 1:
                a += 1
            while f < f_end and flag_row[f] < r:
                f += 1
            j = state[p].seen
            # (1) the waiting order
            if state[p].phase == WAITING and tj >= state[p].deadline_ms:
                # only after a data gap: it was live on the previous candle and expired there,
                # which freed the coin for that candle's signal (the backtest's free_at = e)
                n = _emit_end(events, n, p, E_EXPIRED, state[p].last_ms, state, side[p])
                state[p].phase = FLAT
                if a < a_end and cand_row[a] == r - 1 and state[p].signal_index != j - 1:
                    n = _place(state, p, a, j - 1, t[k, r - 1], cands, terms, count[p], events, n, side[p])
                    if state[p].phase == WAITING and tj >= state[p].deadline_ms:
                        # that order had no live candle either (the same gap): it expires where placed
                        n = _emit_end(events, n, p, E_EXPIRED, state[p].last_ms, state, side[p])
                        state[p].phase = FLAT
            if state[p].phase == WAITING:
                if market[p]:
                    filled, e_raw, open_fill = True, o[k, r], True
                else:
                    filled, e_raw, open_fill = limit_fill_nb(
                        o[k, r], h[k, r], lo[k, r], side[p], state[p].limit
                    )
                if filled:
                    n = _fill(state, p, j, tj, e_raw, open_fill, side[p], sizing, size, lev, events, n)
                elif tj + tf_ms >= state[p].deadline_ms:  # no later candle can be live
                    n = _emit_end(events, n, p, E_EXPIRED, tj, state, side[p])
                    state[p].phase = FLAT
            # (2) the open trade on this candle
            if state[p].phase == OPEN:
                n = _trade_candle(
                    state,
                    p,
                    j,
                    tj,
                    o[k, r],
                    h[k, r],
                    lo[k, r],
                    c[k, r],
                    side[p],
                    hold[p],
                    f < f_end and flag_row[f] == r,
                    comm,
                    lev,
                    events,
                    n,
                )
            # (3) a signal at this candle's close
            if a < a_end and cand_row[a] == r - 1:
                a += 1
            if state[p].phase == FLAT and a < a_end and cand_row[a] == r:
                n = _place(state, p, a, j, tj, cands, terms, count[p], events, n, side[p])
            state[p].last_ms = tj
            state[p].seen = j + 1
    return n


@njit(cache=True, nogil=True)
def _place(state, p, a, s, ms, cands, terms, count, events, n, side):
    """Signal ``a`` (of ``cands``) at candle ``s`` places an order if it passed the filter, comes
    after the strategy's warm-up and the minimum gap (section 2); the coin is free (the caller
    checks)."""
    _, _, fate, limit, tp, sl, tp_d, sl_d, moves, _, _ = cands
    tf_ms, wait_ms, gap, _, _, _, _ = terms
    if fate[a] != F_OK or s < count - 1:
        return n
    if state[p].anchor != NEVER and s - state[p].anchor < gap:
        return n
    st = state[p]
    st.phase, st.due, st.anchor, st.signal_index, st.signal_ms = WAITING, NO_DUE, s, s, ms
    st.deadline_ms = ms + tf_ms + wait_ms
    st.limit, st.tp, st.sl, st.tp_dist, st.sl_dist = limit[a], tp[a], sl[a], tp_d[a], sl_d[a]
    st.moves[:] = moves[a]
    ev = events[n]
    ev.pair, ev.kind, ev.side, ev.reason, ev.open_fill = p, E_PLACED, side, -1, False
    ev.candle_ms, ev.signal_ms = ms, ms
    ev.limit, ev.tp, ev.sl = st.limit, st.tp, st.sl
    ev.price_raw, ev.price, ev.ret, ev.profit = np.nan, np.nan, np.nan, np.nan
    return n + 1


@njit(cache=True, nogil=True)
def _fill(state, p, j, tj, e_raw, open_fill, side, sizing, size, lev, events, n):
    """The order fills on candle ``j``: the stake (a fill without one is ``no_slot`` and frees the
    coin there), then the trade's first stop and best price (docs/exits.md)."""
    st = state[p]
    stake = stake_nb(sizing, size, st.balance, st.sl_dist, e_raw, lev)
    if stake <= 0:
        st.phase = FLAT
        return _emit_end(events, n, p, E_NO_SLOT, tj, state, side)
    base, base_reason, base_gap = stop_level_nb(e_raw, side, st.sl, lev)
    st.phase, st.fill_index, st.fill_ms, st.entry_raw, st.open_fill = OPEN, j, tj, e_raw, open_fill
    st.stake, st.best, st.stop, st.stop_reason, st.gap_reason = stake, e_raw, base, base_reason, base_gap
    st.be_armed = False
    st.armed = (not (np.isnan(st.moves[0]) and np.isnan(st.moves[1]))) and np.isnan(st.moves[2])
    ev = events[n]
    ev.pair, ev.kind, ev.side, ev.reason, ev.open_fill = p, E_FILLED, side, -1, open_fill
    ev.candle_ms, ev.signal_ms = tj, st.signal_ms
    ev.limit, ev.tp, ev.sl = st.limit, st.tp, st.sl
    ev.price_raw, ev.price = e_raw, executed_nb(e_raw, side, True, st.half_spread)
    ev.ret, ev.profit = np.nan, np.nan
    return n + 1


@njit(cache=True, nogil=True)
def _trade_candle(state, p, j, tj, oj, hj, lj, cj, side, hold, flag_j, comm, lev, events, n):
    """Candle ``j`` of an open trade: an exit rule due at its open, else rules 1-3 with the stop of
    the candle; without an exit, the stop of the next candle and the exit rules at its close."""
    st = state[p]
    if st.due != NO_DUE:
        x, reason = rule_exit_at_nb(oj, side, st.tp, st.stop, st.gap_reason, st.due == DUE_SIGNAL)
        return _close(state, p, tj, x, reason, side, comm, lev, events, n)
    at_fill = j == st.fill_index and not st.open_fill
    hit, x, reason = candle_rules_nb(
        oj, hj, lj, cj, side, at_fill, st.tp, st.stop, st.stop_reason, st.gap_reason
    )
    if hit:
        return _close(state, p, tj, x, reason, side, comm, lev, events, n)
    mv = st.moves
    if not (np.isnan(mv[0]) and np.isnan(mv[1]) and np.isnan(mv[3])):
        base, base_reason, base_gap = stop_level_nb(st.entry_raw, side, st.sl, lev)
        st.best, st.armed, st.be_armed, st.stop, st.stop_reason, st.gap_reason = next_stop_nb(
            mv,
            side,
            st.entry_raw,
            at_fill,
            cj,
            hj,
            lj,
            st.best,
            st.armed,
            st.be_armed,
            base,
            base_reason,
            base_gap,
        )
    due, by_signal = exit_due_nb(flag_j, hold, j - st.fill_index + 1)
    if due:
        st.due = DUE_SIGNAL if by_signal else DUE_TIME
    return n


@njit(cache=True, nogil=True)
def _close(state, p, tj, x_raw, reason, side, comm, lev, events, n):
    """The trade exits on this candle at raw price ``x_raw``: money as ``close_trade_nb`` does."""
    st = state[p]
    x = executed_nb(x_raw, side, False, st.half_spread)
    entry = executed_nb(st.entry_raw, side, True, st.half_spread)
    # a liquidation loses exactly the stake (the formula can miss -1 by a rounding)
    ret = -1.0 if reason == R_LIQ else levered_return(side, entry, x, comm, lev)
    profit = st.stake * ret
    st.balance += profit
    st.phase, st.due = FLAT, NO_DUE
    ev = events[n]
    ev.pair, ev.kind, ev.side, ev.reason, ev.open_fill = p, E_CLOSED, side, reason, st.open_fill
    ev.candle_ms, ev.signal_ms = tj, st.signal_ms
    ev.limit, ev.tp, ev.sl = st.limit, st.tp, st.sl
    ev.price_raw, ev.price, ev.ret, ev.profit = x_raw, x, ret, profit
    return n + 1


@njit(cache=True, nogil=True)
def _emit_end(events, n, p, kind, ms, state, side):
    """An order that ends without a trade: ``expired`` (its last live candle) or ``no_slot``."""
    st = state[p]
    ev = events[n]
    ev.pair, ev.kind, ev.side, ev.reason, ev.open_fill = p, kind, side, -1, False
    ev.candle_ms, ev.signal_ms = ms, st.signal_ms
    ev.limit, ev.tp, ev.sl = st.limit, st.tp, st.sl
    ev.price_raw, ev.price, ev.ret, ev.profit = np.nan, np.nan, np.nan, np.nan
    return n + 1
