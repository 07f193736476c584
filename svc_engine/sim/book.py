"""The portfolio's book: all coins' candles and filtered signals concatenated coin by coin, the
shape the portfolio kernels sweep (built by :func:`svc_engine.sim.multi.simulate_portfolio`, read by
:mod:`svc_engine.sim.divide`).

Example:
    >>> from dataclasses import fields
    >>> [f.name for f in fields(Book)][:3]
    ['coins', 'windows', 'off']
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from svc_engine.sim.inputs import Candles
from svc_engine.sim.kernels.args import Bars, Orders, Rules


@dataclass(frozen=True, slots=True)
class Book:
    """All coins' candles and filtered signals, concatenated coin by coin, ready for the sweeps."""

    coins: list[str]
    windows: list[Candles]
    off: np.ndarray
    t: np.ndarray
    o: np.ndarray
    h: np.ndarray
    lo: np.ndarray
    c: np.ndarray
    union: np.ndarray
    upos: np.ndarray
    sidx: np.ndarray
    side: np.ndarray
    limit: np.ndarray
    soff: np.ndarray
    filtered: tuple[np.ndarray, ...]
    hs: np.ndarray
    tf_ms: int
    memo: np.ndarray
    rules: tuple[np.ndarray, ...]
    """The exit rules and market entries of docs/exits.md for the kernels: exit flags per candle
    (concatenated like the candles), market orders, holding times and stop moves per signal; each
    empty when no coin uses it."""
    start_ts: float | None = None
    end_ts: float | None = None
    series: tuple[tuple[Candles, tuple[int, int] | None], ...] = ()
    """Each coin's whole series (the range's ``windows`` are views of them) and its ``data_span``."""

    def records(self) -> tuple[Bars, Orders, Rules]:
        """The candles, filtered signals and exit rules as the portfolio kernels take them.

        Example:
            >>> Bars._fields[-2:], Orders._fields[0], Rules._fields[0]
            (('upos', 'n_times'), 'sidx', 'exit_flag')
        """
        _, tp, sl, tp_d, sl_d = self.filtered
        bars = Bars(self.t, self.o, self.h, self.lo, self.c, self.off, self.upos, int(self.union.shape[0]))
        orders = Orders(self.sidx, self.side, self.limit, tp, sl, tp_d, sl_d, self.soff)
        return bars, orders, Rules(*self.rules)
