"""The inputs of the live step (:func:`svc_engine.live.kernel.advance_nb`) as typed records, as
the sweep kernels take theirs (`svc_engine.sim.kernels.args`): numba reads a ``typing.NamedTuple``
of arrays and scalars as one argument, so the kernel's signature reads like its docstring. The
signals come as :class:`svc_engine.live.shared.Candidates`.

Example:
    >>> Terms(3_600_000, 86_400_000, 0, 0, 1.0, 0.001, 1.0).wait_ms
    86400000
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np


class Tape(NamedTuple):
    """(coins, R) the last ``R`` candles of each coin: open time (ms), open, high, low, close;
    rows padded at the front with time -2 where a coin has fewer."""

    t: np.ndarray
    o: np.ndarray
    h: np.ndarray
    lo: np.ndarray
    c: np.ndarray


class Pairs(NamedTuple):
    """Per pair: ``coin`` its row in the :class:`Tape`, ``side``, ``market`` (market entries),
    ``hold`` (most candles held, 0: none) and ``count`` (``candle_count``: no signal before index
    ``count - 1``)."""

    coin: np.ndarray
    side: np.ndarray
    market: np.ndarray
    hold: np.ndarray
    count: np.ndarray


class Terms(NamedTuple):
    """The timing and money settings every pair shares: the timeframe and the longest wait of an
    order (ms), the minimum gap between signals (candles), the sizing mode and value
    (:func:`~svc_engine.sim.kernels.money.stake_nb`), commission (a fraction) and leverage."""

    tf_ms: int
    wait_ms: int
    gap: int
    sizing: int
    size: float
    comm: float
    lev: float
