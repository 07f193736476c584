"""numba kernels of the simulation: filter, per-signal outcome, sweeps, equity and the divide search.

The kernels live in :mod:`svc_engine.sim.kernels`, one concern per module (codes and record
dtypes, filter, one signal's outcome, exit rules, intrabar detail, money, the single-coin sweep,
equity, the portfolio sweep and divide search); this module re-exports their public names, so
callers write ``nb.single_sweep_nb``. Kernels take only contiguous NumPy arrays and scalars (the
portfolio kernels group them in the NamedTuples of :mod:`svc_engine.sim.kernels.args`) and
release the GIL. Prices are float64, candle indices int64, sides int8 (``LONG`` = 1, ``SHORT`` =
-1). Every rule follows `../shared/design/engine-semantics.md`; a short position mirrors every comparison. The
Python layer (``single.py``, ``multi.py``) validates input and wraps the record arrays filled here.

Example:
    >>> round(net_return(LONG, 100.0, 110.0, 0.0), 12)
    0.1
"""

from __future__ import annotations

from svc_engine.sim.kernels.detail import (
    find_exit_detail_nb,
    fine_fill_nb,
    fine_reach_nb,
    replay_nb,
)
from svc_engine.sim.kernels.equity import (
    drawdown_nb,
    equity_drawdown_nb,
    max_drawdown_nb,
)
from svc_engine.sim.kernels.filter import (
    filter_signals_nb,
)
from svc_engine.sim.kernels.money import (
    close_trade_nb,
    executed_nb,
    fill_trade_nb,
    levered_return,
    mark_coeffs,
    mark_from,
    mark_value,
    net_return,
    stake_nb,
)
from svc_engine.sim.kernels.outcome import (
    candle_rules_nb,
    ensure_exit_nb,
    ensure_fill_nb,
    find_exit_nb,
    find_fill_nb,
    find_market_fill_nb,
    limit_fill_nb,
    outcomes_nb,
    stop_level_nb,
)
from svc_engine.sim.kernels.portfolio import (
    divide_search_nb,
    portfolio_sweep_nb,
)
from svc_engine.sim.kernels.records import (
    F_BUSY,
    F_COIN_BUSY,
    F_EXPIRED,
    F_INVALID,
    F_MIN_GAP,
    F_NO_SLOT,
    F_OK,
    F_SL_ABOVE_MAX,
    F_SL_BELOW_MIN,
    F_TP_ABOVE_MAX,
    F_TP_BELOW_MIN,
    F_TRADED,
    FATES,
    LONG,
    NO_MOVES,
    OUTCOME_DTYPE,
    R_BE,
    R_END,
    R_LIQ,
    R_REVERSE,
    R_SIGNAL,
    R_SL,
    R_SL_GAP,
    R_TIME,
    R_TP,
    R_TP_GAP,
    R_TRAIL,
    REASONS,
    SHORT,
    SIZE_FRACTION,
    SIZE_QUANTITY,
    SIZE_RISK,
    TOL,
    TRADE_DTYPE,
)
from svc_engine.sim.kernels.rules import (
    ensure_order_fill_nb,
    ensure_rule_exit_nb,
    exit_due_nb,
    find_exit_rules_nb,
    has_rules_nb,
    move_stop_nb,
    next_stop_nb,
    reverse_args,
    reverse_cut_nb,
    reverse_sides,
    rule_exit_at_nb,
    rule_exit_nb,
)
from svc_engine.sim.kernels.sweep import (
    single_sweep_nb,
)

__all__ = [
    "FATES",
    "F_BUSY",
    "F_COIN_BUSY",
    "F_EXPIRED",
    "F_INVALID",
    "F_MIN_GAP",
    "F_NO_SLOT",
    "F_OK",
    "F_SL_ABOVE_MAX",
    "F_SL_BELOW_MIN",
    "F_TP_ABOVE_MAX",
    "F_TP_BELOW_MIN",
    "F_TRADED",
    "LONG",
    "NO_MOVES",
    "OUTCOME_DTYPE",
    "REASONS",
    "R_BE",
    "R_END",
    "R_LIQ",
    "R_REVERSE",
    "R_SIGNAL",
    "R_SL",
    "R_SL_GAP",
    "R_TIME",
    "R_TP",
    "R_TP_GAP",
    "R_TRAIL",
    "SHORT",
    "SIZE_FRACTION",
    "SIZE_QUANTITY",
    "SIZE_RISK",
    "TOL",
    "TRADE_DTYPE",
    "candle_rules_nb",
    "close_trade_nb",
    "divide_search_nb",
    "drawdown_nb",
    "ensure_exit_nb",
    "ensure_fill_nb",
    "ensure_order_fill_nb",
    "ensure_rule_exit_nb",
    "equity_drawdown_nb",
    "executed_nb",
    "exit_due_nb",
    "fill_trade_nb",
    "filter_signals_nb",
    "find_exit_detail_nb",
    "find_exit_nb",
    "find_exit_rules_nb",
    "find_fill_nb",
    "find_market_fill_nb",
    "fine_fill_nb",
    "fine_reach_nb",
    "has_rules_nb",
    "levered_return",
    "limit_fill_nb",
    "mark_coeffs",
    "mark_from",
    "mark_value",
    "max_drawdown_nb",
    "move_stop_nb",
    "net_return",
    "next_stop_nb",
    "outcomes_nb",
    "portfolio_sweep_nb",
    "replay_nb",
    "reverse_args",
    "reverse_cut_nb",
    "reverse_sides",
    "rule_exit_at_nb",
    "rule_exit_nb",
    "single_sweep_nb",
    "stake_nb",
    "stop_level_nb",
]
