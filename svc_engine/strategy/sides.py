"""Long and short setups in one futures strategy: two compiled sides, one stream of signals.

The drivers run it like any strategy. Each side is evaluated on its own (each with its exits), the
signals are merged in time order, and the simulation's rules decide what trades: one position or
pending order per coin at a time (a signal while the coin is busy is ``skipped_busy``, or
``skipped_coin_busy`` in a portfolio), and the minimum gap counts signals of both sides. When both
sides fire on the same candle, the long one comes first and the short one counts as a second signal
on that candle (``skipped_min_gap``).

Stop-and-reverse (``reverse=True``, or the words ``reverse on the opposite signal`` as the exit
rule or closing either entry sentence): each valid signal of the other side closes the open
position at the next open and opens that side at the same open (docs/sim.md). Every entry row of
:meth:`LongShort.evaluate` then carries ``reverse = true``, which the simulation reads.

Example:
    >>> both = long_short("RSI(14) crosses above 30", "RSI(14) crosses below 70", tp="3%", sl="1.5%")
    >>> both.long.position_side, both.short.position_side, both.candle_count
    ('long', 'short', 16)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import polars as pl

from svc_engine.strategy.errors import StrategyCompileError
from svc_engine.strategy.program import Strategy, compile_strategy
from svc_engine.strategy.reverse import REVERSE_WORDS, split_reverse


@dataclass(frozen=True, slots=True)
class LongShort:
    """A futures strategy with a long and a short side (build it with :func:`long_short`)."""

    long: Strategy
    short: Strategy
    reverse: bool = False
    """Stop-and-reverse: an opposite signal closes the position and opens the other side."""

    @property
    def has_rules(self) -> bool:
        """Whether either side has exit rules, or the strategy reverses (its signals carry rule columns)."""
        return self.reverse or self.long.has_rules or self.short.has_rules

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
        words = f"long: {self.long.describe()} | short: {self.short.describe()}"
        return f"{words} | {REVERSE_WORDS}" if self.reverse else words

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
        sides = [self.long.evaluate(klines, context=ctx), self.short.evaluate(klines, context=ctx)]
        # one side may carry rule columns (a market entry, a holding time) that the other has not
        both = (
            pl.concat(sides, how="diagonal_relaxed")
            if sides[0].columns != sides[1].columns
            else pl.concat(sides)
        )
        if self.reverse:
            entry = pl.col("side") != "exit"
            both = both.with_columns(pl.when(entry).then(True).otherwise(None).alias("reverse"))
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
    exit_condition: Any = None,
    hold: int = 0,
    reverse: bool = False,
) -> LongShort:
    """A futures strategy trading ``long_entry`` long and ``short_entry`` short. ``tp``/``sl`` are
    both sides' exits (a percent or words, mirrored for the short side); ``long_tp``,
    ``short_sl``, ... set one side's. ``exit_condition`` and ``hold`` are exit rules of both sides
    (docs/exits.md: an exit condition closes whichever side is open). ``reverse=True``, or the
    words ``reverse on the opposite signal`` as ``exit_condition`` or closing an entry sentence,
    make it stop-and-reverse (docs/sim.md).

    Example:
        >>> long_short("close > open", "close < open", short_tp="5%").short.wording["tp"]
        'take profit 5% below entry'
        >>> sar = long_short("SMA(10) crosses above SMA(20), buy at market",
        ...                  "SMA(10) crosses below SMA(20), sell at market", tp="no take profit",
        ...                  sl="no stop loss", exit_condition="and reverse on the opposite signal")
        >>> sar.reverse, sar.describe().endswith("| reverse on the opposite signal")
        (True, True)
    """
    said = False
    if isinstance(long_entry, str):
        long_entry, said_long = split_reverse(long_entry)
        said |= said_long
    if isinstance(short_entry, str):
        short_entry, said_short = split_reverse(short_entry)
        said |= said_short
    if isinstance(exit_condition, str):
        exit_condition, said_exit = split_reverse(exit_condition)
        said |= said_exit
        exit_condition = exit_condition or None
    if not isinstance(reverse, bool):
        raise StrategyCompileError(f"reverse must be True or False, not {reverse!r}", field="exit")
    rules = {"exit_condition": exit_condition, "hold": hold}
    return LongShort(
        compile_strategy(
            long_entry,
            long_tp if long_tp is not None else tp,
            long_sl if long_sl is not None else sl,
            market_type="futures",
            position_side="long",
            **rules,
        ),
        compile_strategy(
            short_entry,
            short_tp if short_tp is not None else tp,
            short_sl if short_sl is not None else sl,
            market_type="futures",
            position_side="short",
            **rules,
        ),
        reverse or said,
    )


#: The names a mapping may give :func:`long_short`'s arguments (a sweep's template, a driver's dict).
_NAMES = {
    "long": "long_entry",
    "short": "short_entry",
    "tp_condition": "tp",
    "sl_condition": "sl",
    "exit": "exit_condition",
}


def long_short_of(spec: Any) -> LongShort:
    """:func:`long_short` of a mapping that names its parts ``long``/``long_entry``,
    ``short``/``short_entry``, ``tp``/``tp_condition``, ``sl``/``sl_condition``,
    ``exit``/``exit_condition`` and any other argument of :func:`long_short` (``reverse``, ...).

    Example:
        >>> long_short_of({"long": "close > open", "short": "close < open", "reverse": True}).reverse
        True
    """
    kw: dict[str, Any] = {_NAMES.get(str(k), str(k)): v for k, v in dict(spec).items()}
    kw.pop("market_type", None)  # both sides are futures
    if "long_entry" not in kw or "short_entry" not in kw:
        raise StrategyCompileError("a two-sided strategy needs both a long and a short entry condition")
    return long_short(**kw)
