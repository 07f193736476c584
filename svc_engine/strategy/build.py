"""Python builder for strategy trees, so a quant never has to write a sentence.

Values support ``+ - * /``, comparisons ``> < >= <=``, ``.crosses_above(x)``, ``.crosses_below(x)``,
``.between(lo, hi)``, ``.within(pct, ref)``, ``.ago(n)``, ``.pct_above(p)``, ``.rises(n)``,
``.falls(n)``, ``.new_high(n)``, ``.equals(x)``; conditions combine with ``&``, ``|``, ``~`` and
``.after(prior)``. The trees are exactly what the parser builds from the same words.

Example:
    >>> from svc_engine.strategy import build as sb
    >>> cond = sb.rsi(14).crosses_above(30) & (sb.close > sb.ema(200))
    >>> cond.wording
    'RSI(14) crosses above 30 and close is above EMA(200)'
"""

from __future__ import annotations

from typing import Any

from svc_engine.strategy import ast as A
from svc_engine.strategy.wording import render

__all__ = [
    "Cond",
    "Value",
    "atr",
    "atr_target",
    "bollinger",
    "candles",
    "cci",
    "close",
    "donchian",
    "ema",
    "high",
    "highest",
    "keltner",
    "level",
    "low",
    "lowest",
    "macd",
    "new_high",
    "new_low",
    "open",
    "pct",
    "price",
    "risk_reward",
    "roc",
    "rsi",
    "sma",
    "stoch",
    "trend",
    "typical_price",
    "volume",
    "vwap",
    "williams_r",
    "wma",
]


def _node(x: Any) -> A.Node:
    if isinstance(x, Value | Cond):
        return x.node
    if isinstance(x, int | float) and not isinstance(x, bool):
        return A.Num(float(x))
    if isinstance(x, A.Node):
        return x
    raise TypeError(f"cannot use {type(x).__name__} in a strategy")


def _flat(kind: type[A.And] | type[A.Or], a: A.Node, b: A.Node) -> A.Node:
    items = (*(a.items if isinstance(a, kind) else (a,)), *(b.items if isinstance(b, kind) else (b,)))
    return kind(items)


class Cond:
    """A condition; combine with ``&``, ``|``, ``~``."""

    __slots__ = ("node",)

    def __init__(self, node: A.Node) -> None:
        self.node = node

    def __and__(self, other: Cond) -> Cond:
        return Cond(_flat(A.And, self.node, _node(other)))

    def __or__(self, other: Cond) -> Cond:
        return Cond(_flat(A.Or, self.node, _node(other)))

    def __invert__(self) -> Cond:
        return Cond(A.Not(self.node))

    def after(self, prior: Cond) -> Cond:
        """This now, and `prior` on the previous candle."""
        return Cond(A.After(self.node, _node(prior)))

    @property
    def wording(self) -> str:
        """Canonical wording."""
        return render(self.node)

    def __repr__(self) -> str:
        return f"Cond({self.wording!r})"


class Value:
    """A value per candle (price, indicator, arithmetic)."""

    __slots__ = ("node",)

    def __init__(self, node: A.Node) -> None:
        self.node = node

    def _arith(self, op: str, other: Any, swap: bool = False) -> Value:
        a, b = (_node(other), self.node) if swap else (self.node, _node(other))
        return Value(A.Arith(op, a, b))

    def __add__(self, o: Any) -> Value:
        return self._arith("+", o)

    def __radd__(self, o: Any) -> Value:
        return self._arith("+", o, True)

    def __sub__(self, o: Any) -> Value:
        return self._arith("-", o)

    def __rsub__(self, o: Any) -> Value:
        return self._arith("-", o, True)

    def __mul__(self, o: Any) -> Value:
        return self._arith("*", o)

    def __rmul__(self, o: Any) -> Value:
        return self._arith("*", o, True)

    def __truediv__(self, o: Any) -> Value:
        return self._arith("/", o)

    def __rtruediv__(self, o: Any) -> Value:
        return self._arith("/", o, True)

    def __gt__(self, o: Any) -> Cond:
        return Cond(A.Compare(">", self.node, _node(o)))

    def __lt__(self, o: Any) -> Cond:
        return Cond(A.Compare("<", self.node, _node(o)))

    def __ge__(self, o: Any) -> Cond:
        return Cond(A.Compare(">=", self.node, _node(o)))

    def __le__(self, o: Any) -> Cond:
        return Cond(A.Compare("<=", self.node, _node(o)))

    def equals(self, o: Any) -> Cond:
        """Equal to `o`."""
        return Cond(A.Compare("=", self.node, _node(o)))

    def crosses_above(self, o: Any) -> Cond:
        """Crosses `o` from below."""
        return Cond(A.Cross("above", self.node, _node(o)))

    def crosses_below(self, o: Any) -> Cond:
        """Crosses `o` from above."""
        return Cond(A.Cross("below", self.node, _node(o)))

    def between(self, low: Any, high: Any) -> Cond:
        """Inside [low, high]."""
        return Cond(A.Between(self.node, _node(low), _node(high)))

    def within(self, pct: float, ref: Any) -> Cond:
        """Within `pct` percent of `ref`."""
        return Cond(A.Within(self.node, float(pct), _node(ref)))

    def rises(self, n: int) -> Cond:
        """Rose on each of the last `n` candles."""
        return Cond(A.Streak("rise", n, self.node))

    def falls(self, n: int) -> Cond:
        """Fell on each of the last `n` candles."""
        return Cond(A.Streak("fall", n, self.node))

    def new_high(self, n: int) -> Cond:
        """Above the highest of its previous `n` values."""
        return Cond(A.NewExtreme("high", n, self.node))

    def new_low(self, n: int) -> Cond:
        """Below the lowest of its previous `n` values."""
        return Cond(A.NewExtreme("low", n, self.node))

    def ago(self, n: int) -> Value:
        """The value `n` candles ago."""
        return Value(A.Lag(self.node, n))

    def pct_above(self, pct: float) -> Value:
        """This value raised by `pct` percent."""
        return Value(A.PctOff(float(pct), self.node))

    def pct_below(self, pct: float) -> Value:
        """This value lowered by `pct` percent."""
        return Value(A.PctOff(-float(pct), self.node))

    @property
    def wording(self) -> str:
        """Canonical wording."""
        return render(self.node)

    def __repr__(self) -> str:
        return f"Value({self.wording!r})"


open = Value(A.Field("open"))
high = Value(A.Field("high"))
low = Value(A.Field("low"))
close = Value(A.Field("close"))
price = close
volume = Value(A.Field("volume"))
typical_price = Value(A.Field("typical"))


def _src(source: Value | None) -> A.Node | None:
    node = None if source is None else source.node
    return None if node == A.Field("close") else node


def sma(period: int = 20, source: Value | None = None) -> Value:
    """Simple moving average (of close unless `source`)."""
    return Value(A.Ind("sma", (int(period),), "", _src(source)))


def ema(period: int = 20, source: Value | None = None) -> Value:
    """Exponential moving average."""
    return Value(A.Ind("ema", (int(period),), "", _src(source)))


def wma(period: int = 20, source: Value | None = None) -> Value:
    """Linearly weighted moving average."""
    return Value(A.Ind("wma", (int(period),), "", _src(source)))


def vwap(period: int = 0) -> Value:
    """VWAP: of the UTC day when `period` is 0, else of the last `period` candles."""
    return Value(A.Ind("vwap", (int(period),)))


def rsi(period: int = 14, source: Value | None = None) -> Value:
    """Wilder's RSI."""
    return Value(A.Ind("rsi", (int(period),), "", _src(source)))


def roc(period: int = 10, source: Value | None = None) -> Value:
    """Rate of change in percent."""
    return Value(A.Ind("roc", (int(period),), "", _src(source)))


def atr(period: int = 14) -> Value:
    """Wilder's average true range."""
    return Value(A.Ind("atr", (int(period),)))


def cci(period: int = 20) -> Value:
    """Commodity channel index."""
    return Value(A.Ind("cci", (int(period),)))


def williams_r(period: int = 14) -> Value:
    """Williams %R."""
    return Value(A.Ind("willr", (int(period),)))


def macd(fast: int = 12, slow: int = 26, signal: int = 9, output: str = "line") -> Value:
    """MACD ``line``, ``signal`` or ``histogram``."""
    return Value(A.Ind("macd", (int(fast), int(slow), int(signal)), output))


def stoch(k: int = 14, slow_k: int = 3, slow_d: int = 3, output: str = "%k") -> Value:
    """Slow stochastic ``%k`` or ``%d``."""
    return Value(A.Ind("stoch", (int(k), int(slow_k), int(slow_d)), output))


def bollinger(period: int = 20, mult: float = 2.0, band: str = "middle") -> Value:
    """Bollinger ``upper``, ``middle``, ``lower`` band or ``bandwidth``."""
    return Value(A.Ind("bb", (int(period), float(mult)), band))


def keltner(period: int = 20, mult: float = 2.0, band: str = "middle") -> Value:
    """Keltner channel: EMA(period) +/- mult x ATR(period)."""
    return Value(A.Ind("keltner", (int(period), float(mult)), band))


def donchian(period: int = 20, band: str = "middle") -> Value:
    """Donchian channel: highest high / lowest low of the last `period` candles."""
    return Value(A.Ind("donchian", (int(period),), band))


def highest(period: int, source: Value = high) -> Value:
    """Highest `source` of the last `period` candles (the current one included)."""
    return Value(A.Ind("max", (int(period),), "", _src(source)))


def lowest(period: int, source: Value = low) -> Value:
    """Lowest `source` of the last `period` candles (the current one included)."""
    return Value(A.Ind("min", (int(period),), "", _src(source)))


def candles(n: int, color: str) -> Cond:
    """The last `n` candles all ``green`` or all ``red``."""
    return Cond(A.Candles(color, n))


def new_high(n: int) -> Cond:
    """High above the highest high of the previous `n` candles."""
    return high.new_high(n)


def new_low(n: int) -> Cond:
    """Low below the lowest low of the previous `n` candles."""
    return low.new_low(n)


def trend(event: str) -> Cond:
    """Trend-line event: break_up, break_down, break, return_up, return_down or return."""
    return Cond(A.TrendEvent(event))


def pct(value: float) -> A.PctTarget:
    """Exit `value` percent from the entry."""
    return A.PctTarget(float(value))


def atr_target(mult: float, period: int = 14) -> A.AtrTarget:
    """Exit `mult` x ATR(`period`) from the entry."""
    return A.AtrTarget(float(mult), int(period))


def level(value: Value) -> A.LevelTarget:
    """Exit at the value of an expression on the signal candle."""
    return A.LevelTarget(value.node)


def risk_reward(ratio: float) -> A.RiskReward:
    """Take profit at `ratio` times the stop distance."""
    return A.RiskReward(float(ratio))
