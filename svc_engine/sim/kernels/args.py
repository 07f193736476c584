"""The inputs of the sweep kernels (one coin and portfolio) as typed records (numba takes a
``typing.NamedTuple`` of arrays and scalars as one argument and reads its fields as free as
separate arguments), so a kernel's signature reads like its docstring and every caller builds them
in one place (`svc_engine.sim.book.Book.records`, :func:`one_coin`,
`svc_engine.sim.run_args.kernel_terms`).

Example:
    >>> z = np.zeros(0)
    >>> Terms(100.0, 0.001, 1.0, z, 3_600_000, 0, 1).sizing
    0
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from svc_engine.sim.kernels.records import SIZE_FRACTION


class Bars(NamedTuple):
    """Every coin's candles concatenated coin by coin: open time (ms), open, high, low, close;
    ``off[ci]:off[ci + 1]`` are coin ``ci``'s candles, ``upos`` maps each candle to its position
    among the ``n_times`` union times."""

    t: np.ndarray
    o: np.ndarray
    h: np.ndarray
    lo: np.ndarray
    c: np.ndarray
    off: np.ndarray
    upos: np.ndarray
    n_times: int


class Orders(NamedTuple):
    """Every coin's filtered signals concatenated coin by coin (``soff[ci]:soff[ci + 1]``): the
    candle of each signal in its coin, side, limit, take-profit and stop-loss levels and their
    distances."""

    sidx: np.ndarray
    side: np.ndarray
    limit: np.ndarray
    tp: np.ndarray
    sl: np.ndarray
    tp_d: np.ndarray
    sl_d: np.ndarray
    soff: np.ndarray


class Rules(NamedTuple):
    """The exit rules and market entries of docs/exits.md: exit flags per candle (concatenated
    like the candles), market orders, holding times and stop moves per signal; stop-and-reverse
    flags per signal and opposite sides per candle. Each empty when no coin uses it."""

    exit_flag: np.ndarray
    market: np.ndarray
    hold: np.ndarray
    moves: np.ndarray
    reverse: np.ndarray
    rev_side: np.ndarray


class Terms(NamedTuple):
    """The money and timing settings: initial balance, commission (a fraction), leverage, the
    half spread of each coin (one entry for the one-coin sweep), the timeframe and the longest
    wait of an order (ms), the minimum gap between signals (candles), and the sizing mode and value
    (:func:`~svc_engine.sim.kernels.money.stake_nb`)."""

    initial: float
    comm: float
    lev: float
    hs: np.ndarray
    tf_ms: int
    wait_ms: int
    gap: int
    sizing: int = SIZE_FRACTION
    size: float = 1.0


_NO_UPOS = np.zeros(0, np.int64)


def one_coin(candles: tuple[np.ndarray, ...], signals: tuple[np.ndarray, ...]) -> tuple[Bars, Orders]:
    """The records of one coin for :func:`~svc_engine.sim.kernels.sweep.single_sweep_nb`: its
    candles (open time, open, high, low, close) and its filtered signals (candle, side, limit,
    take-profit, stop-loss, their distances). ``off`` and ``soff`` span everything; ``upos`` is
    empty (one coin's union times are its own, which the one-coin sweep never looks up).

    Example:
        >>> a = np.zeros(3)
        >>> bars, orders = one_coin((a,) * 5, (np.zeros(2, np.int64),) + (np.zeros(2),) * 6)
        >>> bars.off.tolist(), bars.n_times, orders.soff.tolist()
        ([0, 3], 3, [0, 2])
    """
    n, m = candles[0].shape[0], signals[0].shape[0]
    bars = Bars(*candles, np.array([0, n], np.int64), _NO_UPOS, n)  # type: ignore[call-arg, arg-type]
    return bars, Orders(*signals, np.array([0, m], np.int64))  # type: ignore[call-arg]


def plain(*records: tuple) -> tuple[tuple, ...]:
    """The records as plain tuples of the same fields, for a kernel that reads them by position
    and is called often: numba types a ``NamedTuple`` argument in Python on every call (about a
    microsecond a field), a plain tuple in its C fast path, as it types separate arguments.

    Example:
        >>> plain(Terms(100.0, 0.001, 1.0, np.zeros(1), 60_000, 0, 1))[0][-2:]
        (0, 1.0)
    """
    return tuple(tuple(r) for r in records)
