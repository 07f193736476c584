"""Simulation: single-coin and portfolio backtests of signals, following
``../shared/design/engine-semantics.md``.

Example:
    >>> from svc_engine.sim import Settings
    >>> Settings().max_loss_pct
    50.0
"""

from svc_engine.sim.coverage import FilterWarning, RangeWarning
from svc_engine.sim.drivers import backtest, estimate, full_range, portfolio
from svc_engine.sim.multi import simulate_portfolio
from svc_engine.sim.results import BacktestResult, FullRangeResult, PortfolioResult
from svc_engine.sim.settings import Settings
from svc_engine.sim.single import simulate

__all__ = [
    "BacktestResult",
    "FilterWarning",
    "FullRangeResult",
    "PortfolioResult",
    "RangeWarning",
    "Settings",
    "backtest",
    "estimate",
    "full_range",
    "portfolio",
    "simulate",
    "simulate_portfolio",
]
