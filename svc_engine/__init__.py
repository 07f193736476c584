"""svc_engine: the pure compute library of the platform.

Load candles, compile a trader's words into a strategy, simulate it on one coin, on every coin, or
as a portfolio, and detect trend breaks, all on plain polars frames and NumPy arrays.

Example:
    >>> import svc_engine as sv
    >>> "backtest" in sv.__all__ and sv.compile_strategy is sv.strategy.compile_strategy
    True

The names below are imported on first use, so ``import svc_engine`` stays cheap.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS: dict[str, str] = {
    # data
    "DataStore": "svc_engine.data",
    "Catalog": "svc_engine.data",
    "KlineValidationError": "svc_engine.data",
    "load_klines": "svc_engine.data",
    "validate_klines": "svc_engine.data",
    "resample": "svc_engine.data",
    "to_arrays": "svc_engine.data",
    "DataNotFoundError": "svc_engine.data",
    "generate_market": "svc_engine.data.synthetic",
    # instruments
    "Instrument": "svc_engine.instruments",
    "resolve": "svc_engine.instruments",
    "universe": "svc_engine.instruments",
    "format_price": "svc_engine.instruments",
    "format_quantity": "svc_engine.instruments",
    "spread_pct_for": "svc_engine.instruments",
    # strategy language
    "compile_strategy": "svc_engine.strategy",
    "Strategy": "svc_engine.strategy",
    "StrategyCompileError": "svc_engine.strategy",
    "long_short": "svc_engine.strategy.sides",
    # simulation
    "simulate": "svc_engine.sim",
    "backtest": "svc_engine.sim",
    "full_range": "svc_engine.sim",
    "portfolio": "svc_engine.sim",
    "simulate_portfolio": "svc_engine.sim",
    "estimate": "svc_engine.sim",
    "BacktestResult": "svc_engine.sim",
    "FullRangeResult": "svc_engine.sim",
    "PortfolioResult": "svc_engine.sim",
    # research
    "sweep": "svc_engine.research",
    "SweepResult": "svc_engine.research",
    "walk_forward": "svc_engine.research",
    "WalkForwardResult": "svc_engine.research",
    # executors
    "LocalExecutor": "svc_engine.executors",
    "RayExecutor": "svc_engine.executors",
    # trend
    "detect_trends": "svc_engine.trend",
    "break_events": "svc_engine.trend",
    "signal_to_api": "svc_engine.trend",
    "scan_trends": "svc_engine.trend",
    "trend_indicator": "svc_engine.trend",
}

__all__ = sorted(_EXPORTS)
__version__ = "0.1.0"


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'svc_engine' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    # the public names only: not the helpers this module imports (``Any``, ``importlib``, ...)
    return sorted([*__all__, "__version__"])
