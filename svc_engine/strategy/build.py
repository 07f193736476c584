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
from svc_engine.strategy.vocab import THEN_WINDOW
from svc_engine.strategy.wording import render

__all__ = [
    "Cond",
    "Value",
    "adx",
    "aroon",
    "atr",
    "atr_target",
    "bollinger",
    "candles",
    "cci",
    "close",
    "cmf",
    "donchian",
    "ema",
    "high",
    "highest",
    "ichimoku",
    "indicator",
    "keltner",
    "level",
    "low",
    "lowest",
    "macd",
    "mfi",
    "new_high",
    "new_low",
    "no_target",
    "obv",
    "open",
    "pattern",
    "pct",
    "price",
    "risk_reward",
    "roc",
    "rsi",
    "sar",
    "sma",
    "stoch",
    "stochrsi",
    "supertrend",
    "trailing",
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

    def after(self, prior: Cond, within: int = THEN_WINDOW) -> Cond:
        """This now, and `prior` on one of the `within` candles before (1: the previous candle).

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

        >>> rsi().equals(50).wording
        'RSI(14) equals 50'
        """
        return Cond(A.Compare("=", self.node, _node(o)))

    def crosses_above(self, o: Any) -> Cond:
        """Crosses `o` from below.

        >>> rsi().crosses_above(30).wording
        'RSI(14) crosses above 30'
        """
        return Cond(A.Cross("above", self.node, _node(o)))

    def crosses_below(self, o: Any) -> Cond:
        """Crosses `o` from above.

        >>> close.crosses_below(sma(20)).wording
        'close crosses below SMA(20)'
        """
        return Cond(A.Cross("below", self.node, _node(o)))

    def between(self, low: Any, high: Any) -> Cond:
        """Inside [low, high].

        >>> rsi().between(40, 60).wording
        'RSI(14) is between 40 and 60'
        """
        return Cond(A.Between(self.node, _node(low), _node(high)))

    def within(self, pct: float, ref: Any) -> Cond:
        """Within `pct` percent of `ref`.

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

        >>> new_high(55).wording
        'high makes a new 55-candle high'
        """
        return Cond(A.NewExtreme("high", n, self.node))

    def new_low(self, n: int) -> Cond:
        """Below the lowest of its previous `n` values.

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


def _src(source: Value | None) -> A.Node | None:
    node = None if source is None else source.node
    return None if node == A.Field("close") else node


def sma(period: int = 20, source: Value | None = None) -> Value:
    """Simple moving average (of close unless `source`).

    >>> sma(50, volume).wording
    'SMA(50) of volume'
    """
    return Value(A.Ind("sma", (int(period),), "", _src(source)))


def ema(period: int = 20, source: Value | None = None) -> Value:
    """Exponential moving average.

    >>> ema(200).wording
    'EMA(200)'
    """
    return Value(A.Ind("ema", (int(period),), "", _src(source)))


def wma(period: int = 20, source: Value | None = None) -> Value:
    """Linearly weighted moving average.

    >>> wma(10).wording
    'WMA(10)'
    """
    return Value(A.Ind("wma", (int(period),), "", _src(source)))


def vwap(period: int = 0) -> Value:
    """VWAP: of the UTC day when `period` is 0, else of the last `period` candles.

    >>> vwap().wording, vwap(30).wording
    ('VWAP', 'VWAP(30)')
    """
    return Value(A.Ind("vwap", (int(period),)))


def rsi(period: int = 14, source: Value | None = None) -> Value:
    """Wilder's RSI.

    >>> rsi().wording
    'RSI(14)'
    """
    return Value(A.Ind("rsi", (int(period),), "", _src(source)))


def roc(period: int = 10, source: Value | None = None) -> Value:
    """Rate of change in percent.

    >>> roc(5).wording
    'ROC(5)'
    """
    return Value(A.Ind("roc", (int(period),), "", _src(source)))


def atr(period: int = 14) -> Value:
    """Wilder's average true range.

    >>> atr(10).wording
    'ATR(10)'
    """
    return Value(A.Ind("atr", (int(period),)))


def cci(period: int = 20) -> Value:
    """Commodity channel index.

    >>> cci().wording
    'CCI(20)'
    """
    return Value(A.Ind("cci", (int(period),)))


def williams_r(period: int = 14) -> Value:
    """Williams %R.

    >>> williams_r().wording
    'Williams %R(14)'
    """
    return Value(A.Ind("willr", (int(period),)))


def macd(fast: int = 12, slow: int = 26, signal: int = 9, output: str = "line") -> Value:
    """MACD ``line``, ``signal`` or ``histogram``.

    >>> macd(output='histogram').wording
    'MACD histogram(12, 26, 9)'
    """
    return Value(A.Ind("macd", (int(fast), int(slow), int(signal)), output))


def stoch(k: int = 14, slow_k: int = 3, slow_d: int = 3, output: str = "%k") -> Value:
    """Slow stochastic ``%k`` or ``%d``.

    >>> stoch(output='%d').wording
    'stochastic %D(14, 3, 3)'
    """
    return Value(A.Ind("stoch", (int(k), int(slow_k), int(slow_d)), output))


def bollinger(period: int = 20, mult: float = 2.0, band: str = "middle") -> Value:
    """Bollinger ``upper``, ``middle``, ``lower`` band or ``bandwidth``.

    >>> bollinger(band='upper').wording
    'upper Bollinger band(20, 2)'
    """
    return Value(A.Ind("bb", (int(period), float(mult)), band))


def keltner(period: int = 20, mult: float = 2.0, band: str = "middle") -> Value:
    """Keltner channel: EMA(period) +/- mult x ATR(period).

    >>> keltner(band='lower').wording
    'lower Keltner channel(20, 2)'
    """
    return Value(A.Ind("keltner", (int(period), float(mult)), band))


def donchian(period: int = 20, band: str = "middle") -> Value:
    """Donchian channel: highest high / lowest low of the last `period` candles.

    >>> donchian(55, 'upper').wording
    'upper Donchian channel(55)'
    """
    return Value(A.Ind("donchian", (int(period),), band))


def highest(period: int, source: Value = high) -> Value:
    """Highest `source` of the last `period` candles (the current one included).

    >>> highest(20).wording
    'highest high of the last 20 candles including the current candle'
    """
    return Value(A.Ind("max", (int(period),), "", _src(source)))


def lowest(period: int, source: Value = low) -> Value:
    """Lowest `source` of the last `period` candles (the current one included).

    >>> lowest(10, close).wording
    'lowest close of the last 10 candles including the current candle'
    """
    return Value(A.Ind("min", (int(period),), "", _src(source)))


def candles(n: int, color: str) -> Cond:
    """The last `n` candles all ``green`` or all ``red``.

    >>> candles(3, 'red').wording
    '3 red candles in a row'
    """
    return Cond(A.Candles(color, n))


def new_high(n: int) -> Cond:
    """High above the highest high of the previous `n` candles.

    >>> new_high(55).wording
    'high makes a new 55-candle high'
    """
    return high.new_high(n)


def new_low(n: int) -> Cond:
    """Low below the lowest low of the previous `n` candles.

    >>> new_low(20).wording
    'low makes a new 20-candle low'
    """
    return low.new_low(n)


def trend(event: str) -> Cond:
    """Trend-line event: break_up, break_down, break, return_up, return_down or return.

    >>> trend('break_up').wording
    'a trend line breaks upward'
    """
    return Cond(A.TrendEvent(event))


def pct(value: float) -> A.PctTarget:
    """Exit `value` percent from the entry.

    >>> pct(2)
    PctTarget(pct=2.0)
    """
    return A.PctTarget(float(value))


def atr_target(mult: float, period: int = 14) -> A.AtrTarget:
    """Exit `mult` x ATR(`period`) from the entry.

    >>> atr_target(2)
    AtrTarget(mult=2.0, period=14)
    """
    return A.AtrTarget(float(mult), int(period))


def level(value: Value) -> A.LevelTarget:
    """Exit at the value of an expression on the signal candle.

    >>> level(ema(20)).expr == ema(20).node
    True
    """
    return A.LevelTarget(value.node)


def risk_reward(ratio: float) -> A.RiskReward:
    """Take profit at `ratio` times the stop distance.

    >>> risk_reward(2)
    RiskReward(ratio=2.0)
    """
    return A.RiskReward(float(ratio))


def indicator(name: str, *params: float, output: str = "", source: Value | None = None) -> Value:
    """Any indicator of the vocabulary by its key (``vocab.SPECS``), e.g. the ones of issue 20.

    >>> indicator("dmi", 14, output="+di").wording, indicator("hma", 55).wording
    ('+DI(14)', 'HMA(55)')
    """
    return Value(A.Ind(name, tuple(params), output, _src(source)))


def adx(period: int = 14, line: str = "adx") -> Value:
    """ADX, or its ``+di`` / ``-di`` line (TA-Lib ADX, PLUS_DI, MINUS_DI).

    >>> (adx(line="+di") > adx(line="-di")).wording
    '+DI(14) is above -DI(14)'
    """
    return indicator("dmi", int(period), output=line)


def aroon(period: int = 25, line: str = "oscillator") -> Value:
    """Aroon ``up``, ``down`` or ``oscillator``.

    >>> aroon(line="up").wording
    'Aroon up(25)'
    """
    return indicator("aroon", int(period), output=line)


def sar(acceleration: float = 0.02, maximum: float = 0.2) -> Value:
    """Parabolic SAR (TA-Lib SAR).

    >>> sar().wording
    'parabolic SAR(0.02, 0.2)'
    """
    return indicator("sar", float(acceleration), float(maximum))


def supertrend(period: int = 10, mult: float = 3.0, line: str = "line") -> Value:
    """Supertrend ``line`` or ``direction`` (+1 up, -1 down).

    >>> (supertrend(line="direction") > 0).wording
    'Supertrend direction(10, 3) is above 0'
    """
    return indicator("supertrend", int(period), float(mult), output=line)


def ichimoku(line: str = "cloud top", tenkan: int = 9, kijun: int = 26, senkou: int = 52) -> Value:
    """An Ichimoku line: tenkan, kijun, senkou a, senkou b, cloud top, cloud bottom.

    >>> (close > ichimoku()).wording
    'close is above Ichimoku cloud top(9, 26, 52)'
    """
    return indicator("ichimoku", int(tenkan), int(kijun), int(senkou), output=line)


def obv() -> Value:
    """On-balance volume (TA-Lib OBV).

    >>> obv().wording
    'OBV'
    """
    return indicator("obv")


def mfi(period: int = 14) -> Value:
    """Money flow index (TA-Lib MFI).

    >>> mfi().wording
    'MFI(14)'
    """
    return indicator("mfi", int(period))


def cmf(period: int = 20) -> Value:
    """Chaikin money flow.

    >>> cmf().wording
    'CMF(20)'
    """
    return indicator("cmf", int(period))


def stochrsi(period: int = 14, k: int = 14, d: int = 3, line: str = "%k") -> Value:
    """Stochastic RSI %K or %D (TA-Lib STOCHRSI).

    >>> stochrsi(line="%d").wording
    'StochRSI %D(14, 14, 3)'
    """
    return indicator("stochrsi", int(period), int(k), int(d), output=line)


def pattern(name: str, side: str = "") -> Cond:
    """A candle pattern by TA-Lib's definition (``vocab.PATTERNS``), with its side where it has two.

    >>> pattern("engulfing", "bullish").wording
    'bullish engulfing pattern'
    """
    return Cond(A.Pattern(name, side))


def trailing(
    pct: float = 0.0, atr_mult: float = 0.0, atr_period: int = 14, after_pct: float = 0.0
) -> A.Trailing:
    """A trailing stop (docs/exits.md): ``pct`` percent or ``atr_mult`` x ATR behind the best price.

    >>> trailing(3, after_pct=1)
    Trailing(pct=3, atr_mult=0.0, atr_period=14, after_pct=1)
    """
    return A.Trailing(pct, atr_mult, int(atr_period), after_pct)


def no_target() -> A.NoTarget:
    """No take-profit (or no stop-loss): the trade leaves by its exit rules or at the end.

    >>> no_target()
    NoTarget()
    """
    return A.NoTarget()
