"""Values of a strategy tree: each numeric node (number, field, lag, arithmetic, indicator, higher
timeframe) evaluated over a `Context` into a float64 array, NaN while undefined.

Example:
    >>> import polars as pl
    >>> from svc_engine.strategy import ast as A
    >>> from svc_engine.strategy.compiler import Context
    >>> k = pl.DataFrame({"open_time": [0, 1], "open": [1.0, 2.0], "high": [1.0, 2.0], "low": [1.0, 2.0],
    ...     "close": [1.0, 3.0], "volume": [0.0, 0.0]})
    >>> VALUE[A.Lag](Context(k), A.Lag(A.Field("close"), 1)).tolist()
    [nan, 1.0]
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import numpy as np

from svc_engine import indicators as K
from svc_engine.indicators import calendar as KC
from svc_engine.indicators import derived as KD
from svc_engine.indicators import directional as KT
from svc_engine.indicators import volume as KV
from svc_engine.strategy import ast as A

if TYPE_CHECKING:
    from svc_engine.strategy.context import Context


def shift(x: np.ndarray, n: int) -> np.ndarray:
    """`x` delayed by `n` candles (NaN, or False for bools, at the start).

    >>> shift(np.array([1.0, 2.0, 3.0]), 1).tolist()
    [nan, 1.0, 2.0]
    """
    out = np.zeros(x.size, bool) if x.dtype == bool else np.full(x.size, np.nan)
    if n < x.size:
        out[n:] = x[: x.size - n]
    return out


def _num(ctx: Context, node: A.Num) -> np.ndarray:
    return np.full(ctx.size, float(node.value))


def _field(ctx: Context, node: A.Field) -> np.ndarray:
    return ctx.column(node.name)


def _lag(ctx: Context, node: A.Lag) -> np.ndarray:
    return shift(ctx.values(node.expr), node.n)


def _arith(ctx: Context, node: A.Arith) -> np.ndarray:
    left, right = ctx.values(node.left), ctx.values(node.right)
    with np.errstate(divide="ignore", invalid="ignore"):
        if node.op == "+":
            return left + right
        if node.op == "-":
            return left - right
        if node.op == "*":
            return left * right
        return left / right


def _pctoff(ctx: Context, node: A.PctOff) -> np.ndarray:
    return ctx.values(node.expr) * (1.0 + node.pct / 100.0)


def _tf(ctx: Context, node: A.Tf) -> np.ndarray:
    higher, index = ctx.higher(node.timeframe)
    values = higher.values(node.expr)
    out = np.full(ctx.size, np.nan)
    known = index >= 0
    out[known] = values[index[known]]
    return out


def _ind(ctx: Context, node: A.Ind) -> np.ndarray:
    return _INDICATORS[node.name](ctx, node)


def source_of(ctx: Context, node: A.Ind) -> np.ndarray:
    """The values an indicator is computed on: its source, or the close."""
    return ctx.values(node.source) if node.source is not None else ctx.array("close")


def hlc(ctx: Context) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The high, low and close arrays, the inputs of the range indicators."""
    return ctx.array("high"), ctx.array("low"), ctx.array("close")


def _ema(x: np.ndarray, n: int) -> np.ndarray:
    return K.ema_nb(x, n)


def _macd(ctx: Context, node: A.Ind) -> np.ndarray:
    fast, slow, signal = (int(p) for p in node.params)
    if node.output != "line":  # the line (and the signal line) once, shared by line, signal and histogram
        line = ctx.values(replace(node, output="line"))
        if node.output == "signal":
            return K.ema_nb(line, signal, ctx.buffer())
        return K.difference_nb(line, ctx.values(replace(node, output="signal")), ctx.buffer())
    return K.macd_line_nb(source_of(ctx, node), fast, slow, ctx.buffer())


def _stoch(ctx: Context, node: A.Ind) -> np.ndarray:
    k, d = K.stoch_nb(*hlc(ctx), *(int(p) for p in node.params))
    return k if node.output == "%k" else d


def _bollinger(ctx: Context, node: A.Ind) -> np.ndarray:
    n, mult = int(node.params[0]), float(node.params[1])
    close = ctx.array("close")
    if node.output == "%b":
        return KD.percent_b_nb(close, n, mult)
    mid = K.sma_nb(close, n, ctx.buffer())
    if node.output == "middle":
        return mid
    if node.output in ("upper", "lower"):  # the band in the deviation's pass (the same floats)
        return K.rolling_band_nb(close, mid, n, mult if node.output == "upper" else -mult, ctx.buffer())
    sd = K.rolling_std_nb(close, mid, n, ctx.buffer())
    with np.errstate(divide="ignore", invalid="ignore"):
        return (2.0 * mult * sd) / mid


def _keltner(ctx: Context, node: A.Ind) -> np.ndarray:
    n, mult = int(node.params[0]), float(node.params[1])
    mid = _ema(ctx.array("close"), n)
    if node.output == "middle":
        return mid
    atr = K.atr_nb(*hlc(ctx), n)
    return mid + mult * atr if node.output == "upper" else mid - mult * atr


def _donchian(ctx: Context, node: A.Ind) -> np.ndarray:
    n = int(node.params[0])
    upper = K.rolling_max_nb(ctx.array("high"), n)
    lower = K.rolling_min_nb(ctx.array("low"), n)
    if node.output == "upper":
        return upper
    return lower if node.output == "lower" else (upper + lower) / 2.0


def _vwap(ctx: Context, node: A.Ind) -> np.ndarray:
    n = int(node.params[0])
    if n == 0:
        return K.vwap_session_nb(ctx.array("open_time"), *hlc(ctx), ctx.array("volume"))
    return K.vwap_rolling_nb(*hlc(ctx), ctx.array("volume"), n)


def _hlcv(ctx: Context) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    return ctx.array("high"), ctx.array("low"), ctx.array("close"), ctx.array("volume")


def _dmi(ctx: Context, node: A.Ind) -> np.ndarray:
    plus, minus, adx = KT.dmi_nb(*hlc(ctx), period_of(node))
    return {"+di": plus, "-di": minus}.get(node.output, adx)


def _aroon(ctx: Context, node: A.Ind) -> np.ndarray:
    up, down, osc = KT.aroon_nb(ctx.array("high"), ctx.array("low"), period_of(node))
    return {"up": up, "down": down}.get(node.output, osc)


def _supertrend(ctx: Context, node: A.Ind) -> np.ndarray:
    line, way = KT.supertrend_nb(*hlc(ctx), period_of(node), float(node.params[1]))
    return way if node.output == "direction" else line


def _ichimoku(ctx: Context, node: A.Ind) -> np.ndarray:
    tenkan_n, kijun_n, senkou_n = (int(p) for p in node.params)
    tenkan, kijun, span_a, span_b = KT.ichimoku_nb(
        ctx.array("high"), ctx.array("low"), tenkan_n, kijun_n, senkou_n, kijun_n
    )
    lines = {"tenkan": tenkan, "kijun": kijun, "senkou a": span_a, "senkou b": span_b}
    if node.output in lines:
        return lines[node.output]
    if node.output == "cloud":
        raise ValueError("the Ichimoku cloud is a zone: compare with its top or its bottom")
    # The cloud exists where both spans do.
    return np.maximum(span_a, span_b) if node.output == "cloud top" else np.minimum(span_a, span_b)


def _stochrsi(ctx: Context, node: A.Ind) -> np.ndarray:
    k, d = KD.stochrsi_nb(source_of(ctx, node), *(int(p) for p in node.params))
    return k if node.output == "%k" else d


def period_of(node: A.Ind) -> int:
    """An indicator's first parameter, its period.

    Example:
        >>> period_of(A.Ind("sma", (14,)))
        14
    """
    return int(node.params[0])


_INDICATORS: dict[str, Callable[[Context, A.Ind], np.ndarray]] = {
    "sma": lambda c, n: K.sma_nb(source_of(c, n), period_of(n), c.buffer()),
    "ema": lambda c, n: K.ema_nb(source_of(c, n), period_of(n), c.buffer()),
    "wma": lambda c, n: K.wma_nb(source_of(c, n), period_of(n)),
    "rsi": lambda c, n: K.rsi_nb(source_of(c, n), period_of(n), c.buffer()),
    "roc": lambda c, n: K.roc_nb(source_of(c, n), period_of(n)),
    "max": lambda c, n: K.rolling_max_nb(source_of(c, n), period_of(n)),
    "min": lambda c, n: K.rolling_min_nb(source_of(c, n), period_of(n)),
    "atr": lambda c, n: K.atr_nb(*hlc(c), period_of(n), c.buffer()),
    "cci": lambda c, n: K.cci_nb(*hlc(c), period_of(n)),
    "willr": lambda c, n: K.willr_nb(*hlc(c), period_of(n)),
    "_typical": lambda c, n: K.typical_price_nb(*hlc(c)),
    "macd": _macd,
    "stoch": _stoch,
    "bb": _bollinger,
    "keltner": _keltner,
    "donchian": _donchian,
    "vwap": _vwap,
    "dmi": _dmi,
    "aroon": _aroon,
    "sar": lambda c, n: KT.sar_nb(c.array("high"), c.array("low"), float(n.params[0]), float(n.params[1])),
    "supertrend": _supertrend,
    "ichimoku": _ichimoku,
    "obv": lambda c, n: KV.obv_nb(c.array("close"), c.array("volume")),
    "ad": lambda c, n: KV.ad_nb(*_hlcv(c)),
    "mfi": lambda c, n: KV.mfi_nb(*_hlcv(c), period_of(n)),
    "cmf": lambda c, n: KV.cmf_nb(*_hlcv(c), period_of(n)),
    "stochrsi": _stochrsi,
    "mom": lambda c, n: KD.mom_nb(source_of(c, n), period_of(n)),
    "dema": lambda c, n: KD.dema_nb(source_of(c, n), period_of(n)),
    "tema": lambda c, n: KD.tema_nb(source_of(c, n), period_of(n)),
    "hma": lambda c, n: KD.hma_nb(source_of(c, n), period_of(n)),
    "stddev": lambda c, n: KD.stddev_nb(source_of(c, n), period_of(n)),
    "zscore": lambda c, n: KD.zscore_nb(source_of(c, n), period_of(n)),
    "natr": lambda c, n: KD.natr_nb(*hlc(c), period_of(n)),
    "prank": lambda c, n: KC.percent_rank_nb(source_of(c, n), period_of(n)),
    "roct": lambda c, n: KC.change_over_time_nb(c.array("open_time"), source_of(c, n), period_of(n) * 60_000),
    "hour": lambda c, n: KC.hour_nb(c.array("open_time")),
    "weekday": lambda c, n: KC.weekday_nb(c.array("open_time")),
}

VALUE: dict[type, Callable[[Context, Any], np.ndarray]] = {  # each takes the node type it is keyed by
    A.Num: _num,
    A.Field: _field,
    A.Lag: _lag,
    A.Arith: _arith,
    A.PctOff: _pctoff,
    A.Ind: _ind,
    A.Tf: _tf,
}
"""The evaluator of each numeric node type: the registry ``Context.values`` dispatches on."""
