"""The portfolio sweep over the union of candle times with ``divide`` slots
(`../shared/design/engine-semantics.md` section 6), and the divide search that runs it once per candidate.

Example:
    >>> _open_stakes(np.array([1.0, 0.0, 2.5]))
    3.5
"""

from __future__ import annotations

import numpy as np
from numba import njit

from svc_engine.sim.kernels.equity import max_drawdown_nb
from svc_engine.sim.kernels.money import close_trade_nb, fill_trade_nb, mark_coeffs, mark_from, stake_nb
from svc_engine.sim.kernels.records import (
    F_COIN_BUSY,
    F_EXPIRED,
    F_MIN_GAP,
    F_NO_SLOT,
    F_OK,
    F_TRADED,
    R_REVERSE,
    SIZE_FRACTION,
    TRADE_DTYPE,
)
from svc_engine.sim.kernels.rules import ensure_order_fill_nb, ensure_rule_exit_nb, reverse_cut_nb


@njit(cache=True, nogil=True)
def _open_stakes(staked):
    """The stakes of the open positions summed in coin order; a free coin holds 0.0, which
    leaves the sum exactly as skipping it would, without reading the trades."""
    total = 0.0
    for ci in range(staked.shape[0]):
        total += staked[ci]
    return total


@njit(cache=True, nogil=True)
def portfolio_sweep_nb(bars, orders, rules, terms, fate, memo, trades, eq, divide):
    """One sweep over the union of candle times with ``divide`` slots (section 6), of the candles
    ``bars`` (:class:`~svc_engine.sim.kernels.args.Bars`), the signals ``orders``, the exit rules
    ``rules`` and the settings ``terms``. With ``terms.sizing`` other than a fraction, a fill's stake
    is :func:`stake_nb` of the balance (cash plus open stakes), capped at the free cash; ``divide``
    still caps the open positions. ``memo`` caches outcomes across sweeps. ``fate`` holds the
    filter's fates on entry and final fates on exit; ``eq`` receives equity per union time (cash
    after the events, then every open position's mark added trade by trade). The exit rules and
    market entries of docs/exits.md run as in the single-coin sweep (empty arrays when unused).
    Stop-and-reverse is as in the single-coin sweep: the reversing signal waits in ``queued`` until
    its coin's trade exits at the next open, and is then placed at once (its fill comes after the
    exits of that time, as every fill). Only event times are visited: each coin is filed under the
    union time of its next event (a coin's events touch only itself, and coins sharing a time go
    in coin order).
    Returns (trades, final cash, most open positions)."""
    # the records' fields under the short names of the loops below (free: numba unpacks them once)
    t, o, h, lo, c, off, upos, n_times = bars
    sidx, side, limit, tp, sl, _, sl_d, soff = orders
    exit_flag, market, hold, moves, reverse, rev_side = rules
    initial, comm, lev, hs, tf_ms, wait_ms, gap, sizing, size = terms
    nc = off.shape[0] - 1
    sp = soff[:-1].copy()
    state, cur, slot = np.zeros(nc, np.int8), np.full(nc, -1, np.int64), np.full(nc, -1, np.int64)
    anchor, staked = np.full(nc, -1, np.int64), np.zeros(nc)
    queued = np.full(nc, -1, np.int64)  # a reversing signal waiting for its coin's exit
    reversing = reverse.shape[0] > 0
    at = np.empty(nc, np.int64)  # local candle of each coin's pending event
    head, link = np.full(n_times, -1, np.int64), np.empty(nc, np.int64)
    ready = np.empty(nc, np.int64)
    for ci in range(nc):
        _schedule(
            head, link, at, ci, state, cur, sp, soff, sidx, side, off, upos, memo, fate, anchor, gap, queued
        )
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
                if queued[ci] >= 0:  # stop-and-reverse: the opposite signal's order, placed at its close
                    q, b, z = queued[ci], off[ci], off[ci + 1]
                    queued[ci], state[ci], cur[ci] = -1, 1, q
                    if memo[q].done == 0:
                        deadline = t[b + sidx[q]] + tf_ms + wait_ms
                        ensure_order_fill_nb(
                            memo,
                            q,
                            t[b:z],
                            o[b:z],
                            h[b:z],
                            lo[b:z],
                            sidx[q],
                            side[q],
                            limit[q],
                            deadline,
                            market,
                        )
                    if memo[q].fill_candle < 0 and memo[q].expiry_candle <= a:
                        fate[q], state[ci] = F_EXPIRED, 0
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
                        cut = np.int64(-1)
                        if reversing and reverse[k]:
                            cut = reverse_cut_nb(rev_side[b:z], side[k], max(a, sidx[k] + gap), z - b - 1)
                        ensure_rule_exit_nb(
                            memo,
                            k,
                            o[b:z],
                            h[b:z],
                            lo[b:z],
                            c[b:z],
                            side[k],
                            tp[k],
                            sl[k],
                            lev,
                            z - b - 1,
                            exit_flag[b:z],
                            hold,
                            moves,
                            cut,
                        )
                    fill_trade_nb(trades, n_tr, ci, k, orders, memo, stake, hs[ci])
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
                elif _reverses(state, cur, memo, side, ci, k, a):  # on the fill candle of what it reverses
                    queued[ci], anchor[ci] = k, a
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
            _schedule(
                head,
                link,
                at,
                ci,
                state,
                cur,
                sp,
                soff,
                sidx,
                side,
                off,
                upos,
                memo,
                fate,
                anchor,
                gap,
                queued,
            )
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
def _schedule(
    head, link, at, ci, state, cur, sp, soff, sidx, side, off, upos, memo, fate, anchor, gap, queued
):
    """File coin ``ci`` under the union time of its next event (its next signal, or the fill,
    expiry or exit of what it holds), always a later time than the present one; its local
    candle goes into ``at``. A busy coin's signals before its next event are decided here at
    once (minimum gap, else busy), as the sweep would decide them one by one; the opposite
    signal that reverses an open trade (on the candle before its exit) goes into ``queued``."""
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
                if _reverses(state, cur, memo, side, ci, q, sidx[q]):
                    queued[ci], anchor[ci] = q, sidx[q]
                else:
                    fate[q] = F_MIN_GAP if sidx[q] - anchor[ci] < gap else F_COIN_BUSY
    a = x
    if sp[ci] < end:
        a = sidx[sp[ci]] if x < 0 else min(x, sidx[sp[ci]])
    if a >= 0:
        at[ci] = a
        u = upos[off[ci] + a]
        link[ci], head[u] = head[u], ci


@njit(cache=True, nogil=True)
def _reverses(state, cur, memo, side, ci, q, a):
    """Whether signal ``q`` at candle ``a`` of coin ``ci`` is the one that reverses its open trade
    (stop-and-reverse): that trade exits by reversal at the next open, and ``q`` is on the other
    side (the only valid signal of that candle, so the one the kernel found)."""
    k = cur[ci]
    return (
        state[ci] == 2
        and memo[k].reason == R_REVERSE
        and memo[k].exit_candle == a + 1
        and side[q] == -side[k]
    )


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


@njit(cache=True, nogil=True)
def divide_search_nb(bars, orders, rules, terms, fate0, memo, candidates):
    """Run the sweep for each candidate divide on the same records (``fate0``: the filter's
    fates, copied for each candidate; ``memo`` shared, outcomes do not depend on the divide); per
    candidate: final balance, max drawdown %, trades, fills cancelled for lack of a slot, most
    positions open at once."""
    m = candidates.shape[0]
    finals, dds = np.empty(m), np.empty(m)
    n_trades, no_slot, max_open = np.empty(m, np.int64), np.empty(m, np.int64), np.empty(m, np.int64)
    trades = np.zeros(orders.sidx.shape[0], TRADE_DTYPE)
    eq = np.empty(bars.n_times)
    for x in range(m):
        fate = fate0.copy()
        n_tr, cash, mo = portfolio_sweep_nb(bars, orders, rules, terms, fate, memo, trades, eq, candidates[x])
        finals[x], dds[x] = cash, max_drawdown_nb(eq, terms.initial)
        n_trades[x], max_open[x] = n_tr, mo
        no_slot[x] = np.sum(fate == F_NO_SLOT)
    return finals, dds, n_trades, no_slot, max_open
