"""The terms of the Python strategy builder: `Value` (a value per candle, with arithmetic,
comparisons and the value-to-condition methods), `Cond` (a condition, combined with ``&``, ``|``,
``~``) and the kline fields. The builder functions are in `svc_engine.strategy.build`.

Example:
    >>> ((close - open) / open > 0.01).wording
    '(close minus open) divided by open is above 0.01'
"""

from __future__ import annotations

from typing import Any

from svc_engine.strategy import ast as A
from svc_engine.strategy.vocab import THEN_WINDOW
from svc_engine.strategy.wording import render


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

    def after(self, prior: Cond, within: int = THEN_WINDOW) -> Cond:
        """This now, and `prior` on one of the `within` candles before (1: the previous candle).

        >>> from svc_engine.strategy.build import candles, close, open
        >>> (close > open).after(candles(2, 'red')).wording
        'close is above open within 10 candles after 2 red candles in a row'
        >>> (close > open).after(candles(2, 'red'), within=1).wording
        'close is above open right after 2 red candles in a row'
        """
        return Cond(A.After(self.node, _node(prior), within))

    @property
    def wording(self) -> str:
        """Canonical wording.

        >>> (~(close > open)).wording
        'close is not above open'
        """
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
        """Equal to `o`.

        >>> from svc_engine.strategy.build import rsi
        >>> rsi().equals(50).wording
        'RSI(14) equals 50'
        """
        return Cond(A.Compare("=", self.node, _node(o)))

    def crosses_above(self, o: Any) -> Cond:
        """Crosses `o` from below.

        >>> from svc_engine.strategy.build import rsi
        >>> rsi().crosses_above(30).wording
        'RSI(14) crosses above 30'
        """
        return Cond(A.Cross("above", self.node, _node(o)))

    def crosses_below(self, o: Any) -> Cond:
        """Crosses `o` from above.

        >>> from svc_engine.strategy.build import close, sma
        >>> close.crosses_below(sma(20)).wording
        'close crosses below SMA(20)'
        """
        return Cond(A.Cross("below", self.node, _node(o)))

    def between(self, low: Any, high: Any) -> Cond:
        """Inside [low, high].

        >>> from svc_engine.strategy.build import rsi
        >>> rsi().between(40, 60).wording
        'RSI(14) is between 40 and 60'
        """
        return Cond(A.Between(self.node, _node(low), _node(high)))

    def within(self, pct: float, ref: Any) -> Cond:
        """Within `pct` percent of `ref`.

        >>> from svc_engine.strategy.build import close, sma
        >>> close.within(2, sma(100)).wording
        'close is within 2% of SMA(100)'
        """
        return Cond(A.Within(self.node, float(pct), _node(ref)))

    def rises(self, n: int) -> Cond:
        """Rose on each of the last `n` candles.

        >>> close.rises(3).wording
        'close rises for 3 candles in a row'
        """
        return Cond(A.Streak("rise", n, self.node))

    def falls(self, n: int) -> Cond:
        """Fell on each of the last `n` candles.

        >>> volume.falls(2).wording
        'volume falls for 2 candles in a row'
        """
        return Cond(A.Streak("fall", n, self.node))

    def new_high(self, n: int) -> Cond:
        """Above the highest of its previous `n` values.

        >>> from svc_engine.strategy.build import new_high
        >>> new_high(55).wording
        'high makes a new 55-candle high'
        """
        return Cond(A.NewExtreme("high", n, self.node))

    def new_low(self, n: int) -> Cond:
        """Below the lowest of its previous `n` values.

        >>> from svc_engine.strategy.build import new_low
        >>> new_low(20).wording
        'low makes a new 20-candle low'
        """
        return Cond(A.NewExtreme("low", n, self.node))

    def ago(self, n: int) -> Value:
        """The value `n` candles ago.

        >>> close.ago(3).wording
        'close 3 candles ago'
        """
        return Value(A.Lag(self.node, n))

    def pct_above(self, pct: float) -> Value:
        """This value raised by `pct` percent.

        >>> close.pct_above(2).wording
        '2% above close'
        """
        return Value(A.PctOff(float(pct), self.node))

    def pct_below(self, pct: float) -> Value:
        """This value lowered by `pct` percent.

        >>> high.pct_below(1).wording
        '1% below high'
        """
        return Value(A.PctOff(-float(pct), self.node))

    @property
    def wording(self) -> str:
        """Canonical wording.

        >>> (high - low).wording
        'high minus low'
        """
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


def src(source: Value | None) -> A.Node | None:
    """The source node of an indicator built in Python, None for the default (``close``).

    Example:
        >>> src(None) is None
        True
    """
    node = None if source is None else source.node
    return None if node == A.Field("close") else node
