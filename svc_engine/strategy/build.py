"""Python builder for strategy trees, so a quant never has to write a sentence.

Values support ``+ - * /``, comparisons ``> < >= <=``, ``.crosses_above(x)``, ``.crosses_below(x)``,
``.between(lo, hi)``, ``.within(pct, ref)``, ``.ago(n)``, ``.pct_above(p)``, ``.rises(n)``,
``.falls(n)``, ``.new_high(n)``, ``.equals(x)``; conditions combine with ``&``, ``|``, ``~`` and
``.after(prior)``. The trees are exactly what the parser builds from the same words.
The terms (`Value`, `Cond`, the fields) are in `build_terms`, the indicator functions in
`build_indicators`; conditions and exit targets are here, and everything is importable from here.

Example:
    >>> from svc_engine.strategy import build as sb
    >>> cond = sb.rsi(14).crosses_above(30) & (sb.close > sb.ema(200))
    >>> cond.wording
    'RSI(14) crosses above 30 and close is above EMA(200)'
"""

from __future__ import annotations

from svc_engine.strategy import ast as A
from svc_engine.strategy.build_indicators import (
    adx,
    aroon,
    atr,
    bollinger,
    cci,
    cmf,
    donchian,
    ema,
    highest,
    ichimoku,
    indicator,
    keltner,
    lowest,
    macd,
    mfi,
    obv,
    roc,
    rsi,
    sar,
    sma,
    stoch,
    stochrsi,
    supertrend,
    vwap,
    williams_r,
    wma,
)
from svc_engine.strategy.build_terms import (
    Cond,
    Value,
    close,
    high,
    low,
    open,
    price,
    typical_price,
    volume,
)

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
