"""The compact live state of a strategy-coin pair and the events a step emits: record dtypes and
codes the live kernel and its Python layer share.

A pair's whole memory between two closes is one ``STATE_DTYPE`` record (under 200 bytes): where it
is (flat, an order waiting, a trade open), the levels of its order or trade, the stop as the exit
rules have moved it, the candle of the last signal that placed an order (the minimum gap counts
from it) and the balance the backtest's money rules carry. Nothing else (no indicator state: the
indicators are recomputed from a short window of candles each close, see ``svc_engine.live.shared``),
so a worker that restarts rebuilds it by replaying the store's history
(:func:`svc_engine.live.rebuild_state`).

Example:
    >>> state = fresh_state(2, initial_balance=100.0, half_spread=0.0005)
    >>> state["phase"].tolist(), state["balance"].tolist(), STATE_DTYPE.itemsize <= 200
    ([0, 0], [100.0, 100.0], True)
"""

from __future__ import annotations

import numpy as np

FLAT, WAITING, OPEN = 0, 1, 2
"""Phases: no order, an order waiting to fill, a trade open."""

PHASES: tuple[str, ...] = ("flat", "waiting", "open")

NO_DUE, DUE_TIME, DUE_SIGNAL = 0, 1, 2
"""An exit rule decided at the last close: none, the holding time, the exit condition."""

E_PLACED, E_FILLED, E_CLOSED, E_EXPIRED, E_NO_SLOT = 0, 1, 2, 3, 4
"""Event kinds: a signal placed its order, the order filled, the trade closed, the order expired
unfilled, the fill was cancelled because its stake was not positive (``skipped_no_slot``)."""

EVENTS: tuple[str, ...] = ("placed", "filled", "closed", "expired", "no_slot")

NEVER = np.int64(-(2**62))
"""The candle index of "no signal yet" (far enough below any index that no gap test passes)."""

STATE_DTYPE = np.dtype(
    [
        ("phase", np.int8),
        ("due", np.int8),
        ("open_fill", np.bool_),
        ("armed", np.bool_),
        ("be_armed", np.bool_),
        ("stop_reason", np.int8),
        ("gap_reason", np.int8),
        ("last_ms", np.int64),
        ("seen", np.int64),
        ("anchor", np.int64),
        ("signal_index", np.int64),
        ("signal_ms", np.int64),
        ("deadline_ms", np.int64),
        ("fill_index", np.int64),
        ("fill_ms", np.int64),
        ("limit", np.float64),
        ("tp", np.float64),
        ("sl", np.float64),
        ("tp_dist", np.float64),
        ("sl_dist", np.float64),
        ("moves", np.float64, (4,)),
        ("entry_raw", np.float64),
        ("best", np.float64),
        ("stop", np.float64),
        ("stake", np.float64),
        ("balance", np.float64),
        ("half_spread", np.float64),
    ]
)
"""One pair between two closes. ``last_ms`` the open time of the newest candle it has seen, ``seen``
how many candles of the series it has seen (so the next candle's index), ``anchor`` the index of
the last signal that placed an order (``NEVER``: none). Of the order: ``signal_*``, ``deadline_ms``
(candles opening from then on are not live), the levels after the filter and the stop moves (as
``Signals.moves``). Of the trade: ``fill_*``, the raw fill price, ``best`` price reached, the stop
of the next candle with its reasons and arming flags, ``due`` (an exit at the next open), the
stake. ``balance`` the realised balance, ``half_spread`` the executed-price spread of the coin."""

EVENT_DTYPE = np.dtype(
    [
        ("pair", np.int64),
        ("kind", np.int8),
        ("side", np.int8),
        ("reason", np.int8),
        ("open_fill", np.bool_),
        ("candle_ms", np.int64),
        ("signal_ms", np.int64),
        ("limit", np.float64),
        ("tp", np.float64),
        ("sl", np.float64),
        ("price_raw", np.float64),
        ("price", np.float64),
        ("ret", np.float64),
        ("profit", np.float64),
    ]
)
"""One event: ``candle_ms`` the open time of the candle it happened on (the signal candle of a
placement, the fill candle, the exit candle, the last live candle of an expiry); ``price_raw`` /
``price`` the raw and executed fill (``filled``) or exit (``closed``) price; ``reason`` an index of
``svc_engine.sim.nb.REASONS`` (``closed``); ``ret`` and ``profit`` the trade's return on its stake
and its profit (``closed``); levels are the order's after the filter."""


def fresh_state(n: int, *, initial_balance: float, half_spread: float | np.ndarray) -> np.ndarray:
    """``n`` flat pairs that have seen no candle; see the module docstring.

    Example:
        >>> bool(fresh_state(1, initial_balance=50.0, half_spread=0.0)["anchor"][0] == NEVER)
        True
    """
    state = np.zeros(n, STATE_DTYPE)
    state["last_ms"] = -1  # candle times are Unix ms >= 0: every candle is new
    state["anchor"] = NEVER
    state["signal_index"] = state["fill_index"] = -1
    state["moves"] = np.nan
    state["balance"] = initial_balance
    state["half_spread"] = half_spread
    return state
