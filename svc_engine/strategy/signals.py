"""Signals of a compiled strategy: where its entry fires on a kline frame, and at which limit,
take-profit and stop-loss prices, as arrays or as the signal frame. `StrategySignals` holds these
methods of `svc_engine.strategy.program.Strategy`, which inherits them.

Example:
    >>> import polars as pl
    >>> from svc_engine.strategy.program import compile_strategy
    >>> k = pl.DataFrame({"open_time": [0, 1, 2], "open": [1.0, 2.0, 2.0], "high": [2.0, 3.0, 3.0],
    ...     "low": [1.0, 1.0, 1.0], "close": [2.0, 1.0, 2.5], "volume": [1.0, 1.0, 1.0]})
    >>> compile_strategy("close crosses above previous close").evaluate(k).columns
    ['open_time', 'side', 'limit_price', 'tp_price', 'sl_price']
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import polars as pl

from svc_engine.data.times import TIME
from svc_engine.strategy import ast as A
from svc_engine.strategy.compiler import Context

#: The stop-move columns of a strategy's signals with exit rules (docs/exits.md), in the order of
#: ``Strategy.rule_arrays``: percent columns in percent, ``trail_distance`` a price distance.
MOVE_COLUMNS: tuple[str, ...] = ("trail_pct", "trail_distance", "trail_after_pct", "breakeven_pct")
SIGNAL_SCHEMA: dict[str, Any] = {
    "open_time": TIME,
    "side": pl.Utf8,
    "limit_price": pl.Float64,
    "tp_price": pl.Float64,
    "sl_price": pl.Float64,
}


class StrategySignals:
    """The signal methods of `Strategy`; they read its fields (``entry``, ``tp``, ``sl``, ...) and
    properties (``candle_count``, ``has_rules``)."""

    __slots__ = ()

    if TYPE_CHECKING:  # the fields and properties `Strategy` defines, for the type checker
        entry: A.Node
        tp: A.Node
        sl: A.Node
        entry_price: A.Node | None
        position_side: str
        exit: A.Node | None
        hold: int
        entry_order: str
        breakeven: float

        @property
        def candle_count(self) -> int: ...

        @property
        def has_rules(self) -> bool: ...

    def signal_mask(self, klines: pl.DataFrame) -> np.ndarray:
        """Bool array: where the entry fires (never before `candle_count` candles).

        >>> import polars as pl
        >>> k = pl.DataFrame({"open_time": [0, 1, 2], "open": [1.0, 1.0, 1.0], "high": [2.0, 2.0, 2.0],
        ...     "low": [0.5, 0.5, 0.5], "close": [1.5, 1.0, 1.8], "volume": [1.0, 1.0, 1.0]})
        >>> from svc_engine.strategy.program import compile_strategy
        >>> compile_strategy("close rises for 1 candle").signal_mask(k).tolist()
        [False, False, True]
        """
        ctx = Context(klines)
        return self._mask(ctx)

    def _mask(self, ctx: Context) -> np.ndarray:
        fired = ctx.truth(self.entry).copy()
        fired[: min(self.candle_count - 1, ctx.size)] = False
        return fired

    def evaluate(self, klines: pl.DataFrame, *, context: Context | None = None) -> pl.DataFrame:
        """Signals: one row per candle where the entry fires, evaluated at that candle's close.

        Columns ``open_time`` (the open time of the signal candle as ``Datetime("ms", "UTC")``,
        whether the klines carry integer Unix ms or datetimes), ``side``, ``limit_price``,
        ``tp_price``, ``sl_price``. A ``context``
        of the same ``klines`` (``compiler.Context``) shares its computed indicators between
        strategies (a sweep computes each indicator once per coin).

        >>> import polars as pl
        >>> k = pl.DataFrame({"open_time": [0, 1, 2], "open": [1.0, 2.0, 2.0], "high": [2.0, 3.0, 3.0],
        ...     "low": [1.0, 1.0, 1.0], "close": [2.0, 1.0, 2.5], "volume": [1.0, 1.0, 1.0]})
        >>> from svc_engine.strategy.program import compile_strategy
        >>> compile_strategy("close crosses above previous close").evaluate(k)["tp_price"].to_list()
        [2.55]
        """
        if context is None:  # its arrays are seen by nobody after this call: scratch
            ctx = Context(klines, scratch=True)
            try:
                return self._frame(ctx)
            finally:
                ctx.release()
        return self._frame(context)

    def _frame(self, ctx: Context) -> pl.DataFrame:
        idx, limit, tp, sl = self.signal_arrays(ctx)
        frame = pl.DataFrame(
            {
                "open_time": ctx.array("open_time")[idx],
                "side": pl.Series([self.position_side], dtype=pl.Utf8).extend_constant(
                    self.position_side, idx.size - 1
                )
                if idx.size
                else pl.Series([], dtype=pl.Utf8),
                "limit_price": limit,
                "tp_price": tp,
                "sl_price": sl,
            },
            schema=SIGNAL_SCHEMA,
        )
        if not self.has_rules:
            return frame
        # Exit rules travel with the signals (svc_engine.sim.inputs.RULE_COLUMNS): the order type
        # and holding time of each entry, and one "exit" row per candle where the exit condition held.
        fired, moves = self.rule_arrays(ctx, idx)
        frame = frame.with_columns(
            pl.lit(self.entry_order).alias("order"),
            pl.lit(self.hold or None, dtype=pl.Int64).alias("max_candles"),
            *(pl.Series(name, np.ascontiguousarray(moves[:, m])) for m, name in enumerate(MOVE_COLUMNS)),
        )
        if fired is not None:
            at = ctx.array("open_time")[np.flatnonzero(fired)]
            exits = (
                pl.DataFrame({"open_time": at, "side": ["exit"] * at.size})
                .with_columns(
                    pl.lit(None, dtype=dtype).alias(name)
                    for name, dtype in frame.schema.items()
                    if name not in ("open_time", "side")
                )
                .select(frame.columns)
                .cast(dict[Any, Any](frame.schema))
            )
            frame = pl.concat([frame, exits]).sort("open_time", maintain_order=True)
        return frame

    def rule_arrays(self, ctx: Context, idx: np.ndarray) -> tuple[np.ndarray | None, np.ndarray]:
        """The exit rules of :meth:`evaluate` as arrays: where the exit condition holds (one bool
        per candle of ``ctx``, never before ``candle_count``; None without an exit condition), and
        the stop moves of the signals on candles ``idx``, one row each, columns in the order of
        ``MOVE_COLUMNS``: trailing percent, trailing distance (N x ATR of the signal candle), the
        profit in percent that starts the trailing, the profit that moves the stop to entry (NaN:
        none). ``evaluate`` turns them into rows and columns; a sweep gives them to the kernels.

        >>> import polars as pl
        >>> k = pl.DataFrame({"open_time": [0, 1, 2], "open": [1.0, 2.0, 2.0], "high": [2.0, 3.0, 3.0],
        ...     "low": [1.0, 1.0, 1.0], "close": [2.0, 1.0, 2.5], "volume": [1.0, 1.0, 1.0]})
        >>> from svc_engine.strategy.program import compile_strategy
        >>> s = compile_strategy("close rises for 1 candle", "no take profit", "trailing stop 2%",
        ...                      exit_condition="exit when close drops for 1 candle")
        >>> fired, moves = s.rule_arrays(Context(k), np.array([2]))
        >>> fired.tolist(), moves.tolist()
        ([False, True, False], [[2.0, nan, nan, nan]])
        """
        fired = None
        if self.exit is not None:
            fired = ctx.truth(self.exit).copy()
            fired[: min(self.candle_count - 1, ctx.size)] = False
        trail = self.sl if isinstance(self.sl, A.Trailing) else A.Trailing()
        moves = np.full((idx.size, len(MOVE_COLUMNS)), np.nan)
        if trail.pct:
            moves[:, 0] = trail.pct
        if trail.atr_mult:
            moves[:, 1] = trail.atr_mult * ctx.values(A.Ind("atr", (trail.atr_period,)))[idx]
        if trail.after_pct:
            moves[:, 2] = trail.after_pct
        if self.breakeven:
            moves[:, 3] = self.breakeven
        return fired, moves

    def signal_arrays(self, ctx: Context) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(candle rows, limit, take-profit, stop-loss) of the signals, as arrays (``evaluate``
        without the frame; every signal has the strategy's ``position_side``).

        >>> import polars as pl
        >>> k = pl.DataFrame({"open_time": [0, 1, 2], "open": [1.0, 2.0, 2.0], "high": [2.0, 3.0, 3.0],
        ...     "low": [1.0, 1.0, 1.0], "close": [2.0, 1.0, 2.5], "volume": [1.0, 1.0, 1.0]})
        >>> from svc_engine.strategy.program import compile_strategy
        >>> compile_strategy("close crosses above previous close").signal_arrays(Context(k))[0].tolist()
        [2]
        """
        idx = ctx.where(self.entry)
        idx = idx[np.searchsorted(idx, self.candle_count - 1) :]  # never before `candle_count`
        limit = (ctx.values(self.entry_price) if self.entry_price is not None else ctx.array("close"))[idx]
        sign = 1.0 if self.position_side == "long" else -1.0
        sl = self._exit_price(ctx, self.sl, idx, limit, -sign, None)
        tp = self._exit_price(ctx, self.tp, idx, limit, sign, sl)
        return idx, limit, tp, sl

    @staticmethod
    def _exit_price(
        ctx: Context,
        target: A.Node,
        idx: np.ndarray,
        limit: np.ndarray,
        sign: float,
        stop: np.ndarray | None,
    ) -> np.ndarray:
        if isinstance(target, A.PctTarget):
            return limit * (1.0 + sign * target.pct / 100.0)
        if isinstance(target, A.AtrTarget):
            atr = ctx.values(A.Ind("atr", (target.period,)))[idx]
            return limit + sign * target.mult * atr
        if isinstance(target, A.NoTarget):
            return np.full(idx.size, sign * np.inf)
        if isinstance(target, A.Trailing):  # the first stop: the trailing distance from the entry
            if target.pct:
                return limit * (1.0 + sign * target.pct / 100.0)
            atr = ctx.values(A.Ind("atr", (target.atr_period,)))[idx]
            return limit + sign * target.atr_mult * atr
        if isinstance(target, A.RiskReward):
            assert stop is not None
            return limit + sign * target.ratio * np.abs(limit - stop)
        assert isinstance(target, A.LevelTarget)
        return ctx.values(target.expr)[idx]
