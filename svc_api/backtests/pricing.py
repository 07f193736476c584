"""The one price formula of backtests, used by ``estimate``, ``info.cost_preview`` and every launch.

A job costs ``max(1, chunks + ceil(total_candles / 100_000) + (2 if portfolio else 0))`` credits:
one credit per chunk dispatched (a time chunk of ``run``, a coin of ``full_range`` and
``portfolio``), one per started block of 100 000 candles, and two for the portfolio's
``recommended_divide`` search. It is the engine's
:func:`svc_engine.sim.drivers.estimate_cost_credits`; this module names it for the service and maps
the launch kinds to the engine's modes.

Example:
    >>> price("run", total_candles=250_000, chunks=3)
    6
    >>> price("portfolio", total_candles=5_000, chunks=2)
    5
"""

from __future__ import annotations

from svc_engine.sim.drivers import estimate_cost_credits

MODES = {"run": "range", "range": "range", "full_range": "full_range", "portfolio": "portfolio"}


def price(kind: str, *, total_candles: int, chunks: int) -> int:
    """Credits a ``kind`` job (``run``/``range``, ``full_range``, ``portfolio``) costs.

    Example:
        >>> price("full_range", total_candles=1_440, chunks=1)
        2
        >>> price("walk", total_candles=1, chunks=1)
        Traceback (most recent call last):
        ...
        ValueError: unknown job kind 'walk'; use one of run, range, full_range, portfolio
    """
    mode = MODES.get(kind)
    if mode is None:
        raise ValueError(f"unknown job kind {kind!r}; use one of {', '.join(MODES)}")
    return estimate_cost_credits(int(total_candles), int(chunks), mode)
