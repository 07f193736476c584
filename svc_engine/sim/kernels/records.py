"""Integer codes and record dtypes the kernels share: sides, exit reasons, fates, sizing modes,
the trade record and the per-signal outcome memo (numba reads them as constants).

Example:
    >>> REASONS[R_TRAIL], FATES[F_NO_SLOT]
    ('trailing_stop', 'skipped_no_slot')
"""

from __future__ import annotations

import numpy as np

LONG: int = 1


SHORT: int = -1


R_SL, R_SL_GAP, R_TP, R_TP_GAP, R_LIQ, R_END, R_SIGNAL, R_TIME, R_TRAIL, R_BE = 0, 1, 2, 3, 4, 5, 6, 7, 8, 9


R_REVERSE = 10
"""Stop-and-reverse (docs/sim.md): an opposite signal closed the trade at the next open."""


REASONS: tuple[str, ...] = (
    "sl",
    "sl_gap",
    "tp",
    "tp_gap",
    "liquidation",
    "end",
    "signal",
    "time",
    "trailing_stop",
    "breakeven",
    "reverse",
)


NO_MOVES = np.full(4, np.nan)
"""Stop moves of a trade: trailing fraction, trailing distance, trailing activation, break-even
activation (fractions of the entry; NaN: none)."""


F_OK = -1


F_TRADED, F_EXPIRED, F_INVALID, F_TP_BELOW_MIN, F_TP_ABOVE_MAX = 0, 1, 2, 3, 4


F_SL_BELOW_MIN, F_SL_ABOVE_MAX, F_MIN_GAP, F_BUSY, F_COIN_BUSY, F_NO_SLOT = 5, 6, 7, 8, 9, 10


FATES: tuple[str, ...] = (
    "traded",
    "expired",
    "skipped_invalid",
    "skipped_tp_below_min",
    "skipped_tp_above_max",
    "skipped_sl_below_min",
    "skipped_sl_above_max",
    "skipped_min_gap",
    "skipped_busy",
    "skipped_coin_busy",
    "skipped_no_slot",
)


TOL = 1e-12
"""A distance is above (below) a limit when it passes it by more than this."""


TRADE_DTYPE = np.dtype(
    [
        ("coin", np.int32),
        ("signal_row", np.int64),
        ("signal_candle", np.int64),
        ("fill_candle", np.int64),
        ("exit_candle", np.int64),
        ("side", np.int8),
        ("reason", np.int8),
        ("open_fill", np.bool_),
        ("limit", np.float64),
        ("tp", np.float64),
        ("sl", np.float64),
        ("tp_dist", np.float64),
        ("sl_dist", np.float64),
        ("entry_raw", np.float64),
        ("exit_raw", np.float64),
        ("entry", np.float64),
        ("exit", np.float64),
        ("stake", np.float64),
        ("ret", np.float64),
        ("profit", np.float64),
        ("balance", np.float64),
    ]
)
"""One trade: ``signal_row`` its signal's index in the signal arrays; ``signal_candle``, ``fill_candle``,
``exit_candle`` candle indices local to its coin (``s``, ``i``, ``j`` of
`../shared/design/engine-semantics.md`); ``ret`` is ``max(leverage * r, -1)``; ``entry``/``exit`` are executed
prices (after spread)."""


OUTCOME_DTYPE = np.dtype(
    [
        ("done", np.int8),
        ("fill_candle", np.int64),
        ("expiry_candle", np.int64),
        ("open_fill", np.bool_),
        ("entry_raw", np.float64),
        ("exit_candle", np.int64),
        ("exit_raw", np.float64),
        ("reason", np.int8),
        ("fine_fill_candle", np.int64),
    ]
)
"""Memo of one signal's outcome: ``done`` 0 nothing, 1 fill known, 2 exit known; ``fill_candle``
= -1 when the order expires at ``expiry_candle``; ``fine_fill_candle`` the fine candle of the fill
(intrabar detail) or -1."""


SIZE_FRACTION, SIZE_RISK, SIZE_QUANTITY = 0, 1, 2
"""Position sizing modes: a fraction of the balance, a risk per trade, a fixed quantity."""
