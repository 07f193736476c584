"""Money (`../shared/design/engine-semantics.md` section 5): executed prices after spread, returns with
commission and leverage, marks of open positions, trade records and stakes.

Example:
    >>> round(net_return(LONG, 100.0, 110.0, 0.0), 12)
    0.1
"""

from __future__ import annotations

from numba import njit

from svc_engine.sim.kernels.records import LONG, R_LIQ, SIZE_FRACTION, SIZE_RISK


@njit(cache=True, nogil=True)
def executed_nb(price, side, is_entry, half_spread):
    """Executed price: a buy at ``price * (1 + h)``, a sell at ``price * (1 - h)``.

    Example:
        >>> from svc_engine.sim.kernels.records import SHORT
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
def fill_trade_nb(tr, n, coin, k, orders, memo, stake, hs):
    """Write the entry half of trade ``n``, of signal ``k`` of ``orders``
    (:class:`~svc_engine.sim.kernels.args.Orders`, read by position); exit fields follow in
    ``close_trade_nb``."""
    sidx, sides, limit, tp, sl, tp_d, sl_d, _ = orders
    side = sides[k]
    tr[n].coin, tr[n].signal_row, tr[n].signal_candle = coin, k, sidx[k]
    tr[n].fill_candle, tr[n].side, tr[n].open_fill = memo[k].fill_candle, side, memo[k].open_fill
    tr[n].limit, tr[n].tp, tr[n].sl, tr[n].tp_dist, tr[n].sl_dist = limit[k], tp[k], sl[k], tp_d[k], sl_d[k]
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
