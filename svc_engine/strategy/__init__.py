"""The strategy condition language: a trader's words (or Python builder expressions) compiled into
a program that yields entry signals with limit, take-profit and stop-loss prices.

Example:
    >>> from svc_engine import strategy as sv
    >>> s = sv.compile_strategy("RSI(14) crosses above 30 and close is above EMA(200)", "3%")
    >>> s == sv.compile_strategy(sv.rsi(14).crosses_above(30) & (sv.close > sv.ema(200)), 3)
    True

Stages, one module each: `tokens` -> `parser` and `exits` (+ `checks`) -> `ast` -> `compiler` (with the
`indicators` kernels) and `wording`; `program` holds `Strategy`, `build` the Python builder.
"""

from __future__ import annotations

from svc_engine.strategy import build
from svc_engine.strategy.build import *  # noqa: F403  (the builder's names, from its one list)
from svc_engine.strategy.errors import StrategyCompileError
from svc_engine.strategy.program import DEFAULT_SL_PCT, DEFAULT_TP_PCT, Strategy, compile_strategy

__all__ = [
    "DEFAULT_SL_PCT",
    "DEFAULT_TP_PCT",
    "Strategy",
    "StrategyCompileError",
    "compile_strategy",
    *build.__all__,
]
