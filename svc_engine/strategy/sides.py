"""Long and short setups in one futures strategy: two compiled sides, one stream of signals.

The drivers run it like any strategy. Each side is evaluated on its own (each with its exits), the
signals are merged in time order, and the simulation's rules decide what trades: one position or
pending order per coin at a time (a signal while the coin is busy is ``skipped_busy``, or
``skipped_coin_busy`` in a portfolio), and the minimum gap counts signals of both sides. When both
sides fire on the same candle, the long one comes first and the short one counts as a second signal
on that candle (``skipped_min_gap``).

Example:
    >>> both = long_short("RSI(14) crosses above 30", "RSI(14) crosses below 70", tp="3%", sl="1.5%")
    >>> both.long.position_side, both.short.position_side, both.candle_count
    ('long', 'short', 16)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import polars as pl

from svc_engine.strategy.program import Strategy, compile_strategy


@dataclass(frozen=True, slots=True)
class LongShort:
    """A futures strategy with a long and a short side (build it with :func:`long_short`)."""

    long: Strategy
    short: Strategy

    @property
    def candle_count(self) -> int:
        """The warm-up of the side that needs more."""
        return max(self.long.candle_count, self.short.candle_count)

    @property
    def warmup_candles(self) -> int:
        """Candles of history that make both sides' values equal to the whole history's."""
        return max(self.long.warmup_candles, self.short.warmup_candles)

    def describe(self) -> str:
        """Both sides in canonical words.

        Example:
            >>> long_short("close > SMA(20)", "close < SMA(20)").describe().split(" | ")[1][:24]
            'short: short when close '
        """
        return f"long: {self.long.describe()} | short: {self.short.describe()}"

    def evaluate(self, klines: pl.DataFrame, *, context: Any = None) -> pl.DataFrame:
        """Both sides' signals in time order (long first on a shared candle).

        Example:
            >>> import polars as pl
            >>> k = pl.DataFrame({"open_time": [0, 1, 2], "open": [1.0, 2.0, 2.0], "high": [2.0, 3.0, 3.0],
            ...     "low": [1.0, 1.0, 1.0], "close": [2.0, 1.0, 2.5], "volume": [1.0, 1.0, 1.0]})
            >>> long_short("close > open", "close < open").evaluate(k)["side"].to_list()
            ['long', 'short', 'long']
        """
        from svc_engine.strategy.compiler import Context

        ctx = Context(klines) if context is None else context
        both = pl.concat([self.long.evaluate(klines, context=ctx), self.short.evaluate(klines, context=ctx)])
        return both.sort("open_time", maintain_order=True)


def long_short(
    long_entry: Any,
    short_entry: Any,
    *,
    tp: Any = None,
    sl: Any = None,
    long_tp: Any = None,
    long_sl: Any = None,
    short_tp: Any = None,
    short_sl: Any = None,
) -> LongShort:
    """A futures strategy trading ``long_entry`` long and ``short_entry`` short. ``tp``/``sl`` are
    both sides' exits (a percent or words, mirrored for the short side); ``long_tp``,
    ``short_sl``, ... set one side's.

    Example:
        >>> long_short("close > open", "close < open", short_tp="5%").short.wording["tp"]
        'take profit 5% below entry'
    """
    return LongShort(
        compile_strategy(
            long_entry, long_tp if long_tp is not None else tp, long_sl if long_sl is not None else sl,
            market_type="futures", position_side="long",
        ),
        compile_strategy(
            short_entry, short_tp if short_tp is not None else tp, short_sl if short_sl is not None else sl,
            market_type="futures", position_side="short",
        ),
    )  # fmt: skip
