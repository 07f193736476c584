"""The sequential sweep of one coin (`../shared/design/engine-semantics.md` sections 3-5, docs/exits.md).

Example:
    >>> single_sweep_nb.__name__
    'single_sweep_nb'
"""

from __future__ import annotations

import numpy as np
from numba import njit

from svc_engine.sim.kernels.detail import detail_outcome_nb
from svc_engine.sim.kernels.money import close_trade_nb, fill_trade_nb, stake_nb
from svc_engine.sim.kernels.records import (
    F_BUSY,
    F_EXPIRED,
    F_MIN_GAP,
    F_NO_SLOT,
    F_OK,
    F_TRADED,
    NO_MOVES,
    OUTCOME_DTYPE,
    R_REVERSE,
    SIZE_FRACTION,
)
from svc_engine.sim.kernels.rules import ensure_order_fill_nb, ensure_rule_exit_nb, reverse_cut_nb


@njit(cache=True, nogil=True)
def single_sweep_nb(bars, orders, rules, terms, fate, trades, fine):
    """The sequential sweep of one coin: its candles ``bars``
    (:class:`~svc_engine.sim.kernels.args.Bars` of one coin, :func:`~svc_engine.sim.kernels.args.one_coin`),
    its signals ``orders``, the exit rules ``rules`` and the settings ``terms``, the records the
    portfolio sweep takes (read by position: plain tuples of their fields too,
    :func:`~svc_engine.sim.kernels.args.plain`). The stake of a fill is :func:`stake_nb` of
    ``terms.sizing`` and ``terms.size`` (a fraction of the balance, by default). ``fate`` holds
    the filter's fates on entry and every signal's final fate on exit; ``trades`` (capacity =
    signals) is filled in order.
    ``fine`` = (open, high, low, close, first, stop) of a finer series, ``first``/``stop`` per
    candle, for ``intrabar="detail"``; empty arrays otherwise. ``rules.exit_flag`` (one bool per
    candle), ``market``, ``hold`` and ``moves`` (per signal) are the exit rules and market entries
    of docs/exits.md; empty arrays when unused, which leaves every result as it was. ``reverse``
    (per signal) and ``rev_side`` (per candle, :func:`~svc_engine.sim.kernels.rules.reverse_sides`)
    are stop-and-reverse (docs/sim.md): a trade of a reversing signal closes at the open after the
    first valid opposite signal from its fill on (and at least the minimum gap after its own
    signal), and that signal then places its order although the trade was still open at its close.
    Empty arrays when unused.
    Returns (number of trades, final balance)."""
    # the records' fields under the short names of the loop below (free: numba unpacks them once)
    t, o, h, lo, c, _, _, _ = bars
    sidx, side, limit, tp, sl, _, sl_d, _ = orders
    exit_flag, market, hold, moves, reverse, rev_side = rules
    initial, comm, lev, hs, tf_ms, wait_ms, gap, sizing, size = terms
    hs = hs[0]
    fs = fine[4]
    detail = fs.shape[0] > 0
    memo = np.zeros(sidx.shape[0], OUTCOME_DTYPE)
    last = t.shape[0] - 1
    balance, n_tr = initial, 0
    anchor, free_at = np.int64(-1), np.int64(-1)
    rev_at = np.int64(-1)  # the candle at whose close the last trade was reversed
    has_anchor = False
    reversing = reverse.shape[0] > 0
    for k in range(sidx.shape[0]):
        if fate[k] != F_OK:
            continue
        s = sidx[k]
        if has_anchor and s - anchor < gap:
            fate[k] = F_MIN_GAP
            continue
        if s < free_at and s != rev_at:  # the reversing signal is the one valid signal on rev_at
            fate[k] = F_BUSY
            continue
        anchor, has_anchor, rev_at = s, True, np.int64(-1)
        ensure_order_fill_nb(memo, k, t, o, h, lo, s, side[k], limit[k], t[s] + tf_ms + wait_ms, market)
        if memo[k].fill_candle < 0:
            fate[k], free_at = F_EXPIRED, memo[k].expiry_candle
            continue
        if sizing == SIZE_FRACTION:
            stake = size * balance
            if stake <= 0:
                fate[k], free_at = F_NO_SLOT, memo[k].fill_candle
                continue
        cut = np.int64(-1)
        if reversing and reverse[k]:
            cut = reverse_cut_nb(rev_side, side[k], max(memo[k].fill_candle, s + gap), last)
        if detail:
            detail_outcome_nb(
                memo,
                k,
                o,
                h,
                lo,
                c,
                side[k],
                limit[k],
                tp[k],
                sl[k],
                lev,
                last,
                fine,
                exit_flag,
                market,
                hold[k] if hold.shape[0] > 0 else 0,
                moves[k] if moves.shape[0] > 0 else NO_MOVES,
                cut,
            )
        else:
            ensure_rule_exit_nb(
                memo, k, o, h, lo, c, side[k], tp[k], sl[k], lev, last, exit_flag, hold, moves, cut
            )
        if sizing != SIZE_FRACTION:
            stake = stake_nb(sizing, size, balance, sl_d[k], memo[k].entry_raw, lev)
            if stake <= 0:
                fate[k], free_at = F_NO_SLOT, memo[k].fill_candle
                continue
        fill_trade_nb(trades, n_tr, 0, k, orders, memo, stake, hs)
        balance += close_trade_nb(trades, n_tr, memo, k, comm, lev, hs)
        trades[n_tr].balance = balance
        fate[k], free_at = F_TRADED, memo[k].exit_candle
        if memo[k].reason == R_REVERSE:
            rev_at = free_at - 1
        n_tr += 1
    return n_tr, balance
