"""The indicator functions of the Python strategy builder, each returning a `Value`; re-exported by
`svc_engine.strategy.build`.

Example:
    >>> (rsi(14) > sma(20, rsi(14))).wording
    'RSI(14) is above SMA(20) of RSI(14)'
"""

from __future__ import annotations

from svc_engine.strategy import ast as A
from svc_engine.strategy.build_terms import Value, high, low, src


def sma(period: int = 20, source: Value | None = None) -> Value:
    """Simple moving average (of close unless `source`).

    >>> from svc_engine.strategy.build import volume
    >>> sma(50, volume).wording
    'SMA(50) of volume'
    """
    return Value(A.Ind("sma", (int(period),), "", src(source)))


def ema(period: int = 20, source: Value | None = None) -> Value:
    """Exponential moving average.

    >>> ema(200).wording
    'EMA(200)'
    """
    return Value(A.Ind("ema", (int(period),), "", src(source)))


def wma(period: int = 20, source: Value | None = None) -> Value:
    """Linearly weighted moving average.

    >>> wma(10).wording
    'WMA(10)'
    """
    return Value(A.Ind("wma", (int(period),), "", src(source)))


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
    return Value(A.Ind("rsi", (int(period),), "", src(source)))


def roc(period: int = 10, source: Value | None = None) -> Value:
    """Rate of change in percent.

    >>> roc(5).wording
    'ROC(5)'
    """
    return Value(A.Ind("roc", (int(period),), "", src(source)))


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
    return Value(A.Ind("max", (int(period),), "", src(source)))


def lowest(period: int, source: Value = low) -> Value:
    """Lowest `source` of the last `period` candles (the current one included).

    >>> from svc_engine.strategy.build import close
    >>> lowest(10, close).wording
    'lowest close of the last 10 candles including the current candle'
    """
    return Value(A.Ind("min", (int(period),), "", src(source)))


def indicator(name: str, *params: float, output: str = "", source: Value | None = None) -> Value:
    """Any indicator of the vocabulary by its key (``vocab.SPECS``), e.g. the ones of issue 20.

    >>> indicator("dmi", 14, output="+di").wording, indicator("hma", 55).wording
    ('+DI(14)', 'HMA(55)')
    """
    return Value(A.Ind(name, tuple(params), output, src(source)))


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

    >>> from svc_engine.strategy.build import close
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
