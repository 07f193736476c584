"""Evaluation: a strategy tree over a kline frame -> NumPy arrays, whole series at once.

Every numeric node becomes a float64 array (NaN while undefined) and every condition a bool array,
each computed once per evaluation (equal sub-trees share the cache). All operations are causal, so
the arrays of the first k candles equal the first k entries of the whole series.

Example:
    >>> import polars as pl
    >>> from svc_engine.strategy import ast as A
    >>> k = pl.DataFrame({"open_time": [0, 60_000, 120_000], "open": [1.0, 2.0, 3.0],
    ...                   "high": [2.0, 3.0, 4.0], "low": [0.5, 1.5, 2.5], "close": [1.5, 2.5, 3.5],
    ...                   "volume": [1.0, 1.0, 1.0]})
    >>> Context(k).values(A.Lag(A.Field("close"), 1)).tolist()
    [nan, 1.5, 2.5]
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import numpy as np
import polars as pl

from svc_engine import indicators as K
from svc_engine.indicators import derived as KD
from svc_engine.indicators import directional as KT
from svc_engine.indicators import patterns as KP
from svc_engine.indicators import volume as KV
from svc_engine.strategy import ast as A
from svc_engine.strategy.vocab import PATTERNS, SPECS, WHOLE_HISTORY, wilder_settle

# Candles a trend-line event needs before it can fire: ATR(14) of the break tolerance and the first
# pivot (10 candles left, 5 right).
TREND_LOOKBACK = 15
# Candles after which trend-line events no longer depend on where the series starts: the break
# tolerance's ATR(14) settles (Wilder, 100/alpha), then lines live at most `window` (199) candles
# after pivots confirmed `left + right` (15) candles late, and "after the last break" chains a few
# lines back (three spans), plus the longest retest wait (20).
TREND_SETTLE = 14 + 100 * 14 + 3 * (199 + 15) + 20

KLINE_COLUMNS = ("open", "high", "low", "close", "volume")


class Context:
    """The arrays of one kline frame and the cache of everything computed from them."""

    def __init__(self, klines: pl.DataFrame) -> None:
        missing = [c for c in ("open_time", *KLINE_COLUMNS) if c not in klines.columns]
        if missing:
            raise ValueError(f"klines lack column(s) {', '.join(missing)}")
        self.klines = klines
        self.size = klines.height
        self.arrays: dict[str, np.ndarray] = {}
        self.cache: dict[A.Node, np.ndarray] = {}
        self._trend: dict[str, np.ndarray] | None = None
        self._higher: dict[str, tuple[Context, np.ndarray]] = {}

    def array(self, name: str) -> np.ndarray:
        """A kline column as a contiguous array, converted on first use.

        >>> Context(pl.DataFrame({"open_time": [0], "open": [1.0], "high": [1.0], "low": [1.0],
        ...     "close": [2.0], "volume": [0.0]})).array("close").tolist()
        [2.0]
        """
        out = self.arrays.get(name)
        if out is None:
            out = _array(self.klines[name], pl.Int64 if name == "open_time" else pl.Float64)
            self.arrays[name] = out
        return out

    def values(self, node: A.Node) -> np.ndarray:
        """Float64 values of a numeric node (cached).

        >>> k = pl.DataFrame({"open_time": [0, 1], "open": [1.0, 2.0], "high": [1.0, 2.0], "low": [1.0, 2.0],
        ...     "close": [1.0, 3.0], "volume": [0.0, 0.0]})
        >>> Context(k).values(A.Arith("-", A.Field("close"), A.Field("open"))).tolist()
        [0.0, 1.0]
        """
        cached = self.cache.get(node)
        if cached is None:
            cached = _VALUE[type(node)](self, node)
            self.cache[node] = cached
        return cached

    def truth(self, node: A.Node) -> np.ndarray:
        """Bool values of a condition node (cached).

        >>> k = pl.DataFrame({"open_time": [0, 1], "open": [1.0, 2.0], "high": [1.0, 2.0], "low": [1.0, 2.0],
        ...     "close": [1.0, 3.0], "volume": [0.0, 0.0]})
        >>> Context(k).truth(A.Candles("green", 1)).tolist()
        [False, True]
        """
        cached = self.cache.get(node)
        if cached is None:
            with np.errstate(invalid="ignore"):
                cached = _TRUTH[type(node)](self, node)
            self.cache[node] = cached
        return cached

    def column(self, name: str) -> np.ndarray:
        """A field's values; ``typical`` is computed."""
        if name == "typical":
            return self.values(A.Ind("_typical", ()))
        return self.array(name)

    def higher(self, timeframe: str) -> tuple[Context, np.ndarray]:
        """The candles of a higher timeframe built from these (open first, high max, low min, close
        last, volume summed, on the UTC grid of `svc_engine.data`) and, per candle here, the index of
        the latest higher candle closed by its close (-1 before the first): no look-ahead.

        >>> one = [1.0, 2.0, 3.0]
        >>> k = pl.DataFrame({"open_time": [0, 3_600_000, 7_200_000], "open": one, "high": one,
        ...     "low": one, "close": one, "volume": one})
        >>> Context(k).higher("2h")[1].tolist()
        [-1, 0, 0]
        """
        cached = self._higher.get(timeframe)
        if cached is None:
            cached = _higher(self, timeframe)
            self._higher[timeframe] = cached
        return cached

    def trend(self, event: str) -> np.ndarray:
        """Flags of a trend-line event from `svc_engine.trend.break_events`, computed once."""
        if self._trend is None:
            from svc_engine.trend import break_events  # another package; imported only when used

            frame = break_events(self.klines)
            self._trend = {
                c: frame[c].fill_null(False).to_numpy().astype(bool)
                for c in ("break_up", "break_down", "return_up", "return_down")
            }
        if event in ("break", "return"):
            return self._trend[f"{event}_up"] | self._trend[f"{event}_down"]
        return self._trend[event]


def _higher(ctx: Context, timeframe: str) -> tuple[Context, np.ndarray]:
    from svc_engine.data.schema import grid_offset_ms, timeframe_ms  # data layer, only when used

    t = ctx.array("open_time")
    length, offset = timeframe_ms(timeframe), grid_offset_ms(timeframe)
    steps = np.diff(t)
    base = int(steps[steps > 0].min()) if (steps > 0).any() else length
    if length < base:
        raise ValueError(f"a {timeframe} value needs candles of {timeframe} or shorter; these are longer")
    bucket = (t - offset) // length
    first = np.r_[True, bucket[1:] != bucket[:-1]] if t.size else np.zeros(0, bool)
    starts = np.flatnonzero(first)
    ends = np.r_[starts[1:], t.size] - 1
    frame = pl.DataFrame({
        "open_time": bucket[starts] * length + offset,
        "open": ctx.array("open")[starts],
        "high": np.maximum.reduceat(ctx.array("high"), starts) if t.size else np.zeros(0),
        "low": np.minimum.reduceat(ctx.array("low"), starts) if t.size else np.zeros(0),
        "close": ctx.array("close")[ends],
        "volume": np.add.reduceat(ctx.array("volume"), starts) if t.size else np.zeros(0),
    })  # fmt: skip
    position = np.cumsum(first) - 1
    closed = t + base >= (bucket + 1) * length + offset  # this candle closes its higher candle
    return Context(frame), np.where(closed, position, position - 1)


def _array(series: pl.Series, dtype: type[pl.DataType]) -> np.ndarray:
    """The column as a contiguous NumPy array, without a copy when it already is one."""
    if series.dtype != dtype:
        series = series.cast(dtype)
    if series.null_count():
        series = series.fill_null(np.nan) if dtype == pl.Float64 else series.fill_null(0)
    return np.ascontiguousarray(series.to_numpy())


def shift(x: np.ndarray, n: int) -> np.ndarray:
    """`x` delayed by `n` candles (NaN, or False for bools, at the start).

    >>> shift(np.array([1.0, 2.0, 3.0]), 1).tolist()
    [nan, 1.0, 2.0]
    """
    out = np.zeros(x.size, bool) if x.dtype == bool else np.full(x.size, np.nan)
    if n < x.size:
        out[n:] = x[: x.size - n]
    return out


# ---- values --------------------------------------------------------------------------------------


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


def _source(ctx: Context, node: A.Ind) -> np.ndarray:
    return ctx.values(node.source) if node.source is not None else ctx.array("close")


def _hlc(ctx: Context) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    return ctx.array("high"), ctx.array("low"), ctx.array("close")


def _ema(x: np.ndarray, n: int) -> np.ndarray:
    return K.ema_nb(x, n)


def _macd(ctx: Context, node: A.Ind) -> np.ndarray:
    fast, slow, signal = (int(p) for p in node.params)
    close = _source(ctx, node)
    line = K.ema_seeded_nb(close, fast, 2.0 / (fast + 1), slow - 1) - K.ema_seeded_nb(
        close, slow, 2.0 / (slow + 1), slow - 1
    )
    if node.output == "line":
        return line
    sig = K.ema_nb(line, signal)
    return sig if node.output == "signal" else line - sig


def _stoch(ctx: Context, node: A.Ind) -> np.ndarray:
    k, d = K.stoch_nb(*_hlc(ctx), *(int(p) for p in node.params))
    return k if node.output == "%k" else d


def _bollinger(ctx: Context, node: A.Ind) -> np.ndarray:
    n, mult = int(node.params[0]), float(node.params[1])
    close = ctx.array("close")
    if node.output == "%b":
        return KD.percent_b_nb(close, n, mult)
    mid = K.sma_nb(close, n)
    if node.output == "middle":
        return mid
    sd = K.rolling_std_nb(close, mid, n)
    if node.output == "upper":
        return mid + mult * sd
    if node.output == "lower":
        return mid - mult * sd
    with np.errstate(divide="ignore", invalid="ignore"):
        return (2.0 * mult * sd) / mid


def _keltner(ctx: Context, node: A.Ind) -> np.ndarray:
    n, mult = int(node.params[0]), float(node.params[1])
    mid = _ema(ctx.array("close"), n)
    if node.output == "middle":
        return mid
    atr = K.atr_nb(*_hlc(ctx), n)
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
        return K.vwap_session_nb(ctx.array("open_time"), *_hlc(ctx), ctx.array("volume"))
    return K.vwap_rolling_nb(*_hlc(ctx), ctx.array("volume"), n)


def _hlcv(ctx: Context) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    return ctx.array("high"), ctx.array("low"), ctx.array("close"), ctx.array("volume")


def _dmi(ctx: Context, node: A.Ind) -> np.ndarray:
    plus, minus, adx = KT.dmi_nb(*_hlc(ctx), _period(node))
    return {"+di": plus, "-di": minus}.get(node.output, adx)


def _aroon(ctx: Context, node: A.Ind) -> np.ndarray:
    up, down, osc = KT.aroon_nb(ctx.array("high"), ctx.array("low"), _period(node))
    return {"up": up, "down": down}.get(node.output, osc)


def _supertrend(ctx: Context, node: A.Ind) -> np.ndarray:
    line, way = KT.supertrend_nb(*_hlc(ctx), _period(node), float(node.params[1]))
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
    k, d = KD.stochrsi_nb(_source(ctx, node), *(int(p) for p in node.params))
    return k if node.output == "%k" else d


def _period(node: A.Ind) -> int:
    return int(node.params[0])


_INDICATORS: dict[str, Callable[[Context, A.Ind], np.ndarray]] = {
    "sma": lambda c, n: K.sma_nb(_source(c, n), _period(n)),
    "ema": lambda c, n: _ema(_source(c, n), _period(n)),
    "wma": lambda c, n: K.wma_nb(_source(c, n), _period(n)),
    "rsi": lambda c, n: K.rsi_nb(_source(c, n), _period(n)),
    "roc": lambda c, n: K.roc_nb(_source(c, n), _period(n)),
    "max": lambda c, n: K.rolling_max_nb(_source(c, n), _period(n)),
    "min": lambda c, n: K.rolling_min_nb(_source(c, n), _period(n)),
    "atr": lambda c, n: K.atr_nb(*_hlc(c), _period(n)),
    "cci": lambda c, n: K.cci_nb(*_hlc(c), _period(n)),
    "willr": lambda c, n: K.willr_nb(*_hlc(c), _period(n)),
    "_typical": lambda c, n: K.typical_price_nb(*_hlc(c)),
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
    "mfi": lambda c, n: KV.mfi_nb(*_hlcv(c), _period(n)),
    "cmf": lambda c, n: KV.cmf_nb(*_hlcv(c), _period(n)),
    "stochrsi": _stochrsi,
    "mom": lambda c, n: KD.mom_nb(_source(c, n), _period(n)),
    "dema": lambda c, n: KD.dema_nb(_source(c, n), _period(n)),
    "tema": lambda c, n: KD.tema_nb(_source(c, n), _period(n)),
    "hma": lambda c, n: KD.hma_nb(_source(c, n), _period(n)),
    "stddev": lambda c, n: KD.stddev_nb(_source(c, n), _period(n)),
    "zscore": lambda c, n: KD.zscore_nb(_source(c, n), _period(n)),
    "natr": lambda c, n: KD.natr_nb(*_hlc(c), _period(n)),
}

_VALUE: dict[type, Callable[[Context, A.Node], np.ndarray]] = {
    A.Num: _num,
    A.Field: _field,
    A.Lag: _lag,
    A.Arith: _arith,
    A.PctOff: _pctoff,
    A.Ind: _ind,
    A.Tf: _tf,
}


# ---- conditions ----------------------------------------------------------------------------------


def _compare_arrays(op: str, left: np.ndarray | float, right: np.ndarray | float) -> np.ndarray:
    if op == ">":
        return left > right
    if op == "<":
        return left < right
    if op == ">=":
        return left >= right
    if op == "<=":
        return left <= right
    return left == right


def _operand(ctx: Context, node: A.Node) -> np.ndarray | float:
    """A number stays a number (NumPy broadcasts it), not an array of one value per candle."""
    return float(node.value) if isinstance(node, A.Num) else ctx.values(node)


def _compare(ctx: Context, node: A.Compare) -> np.ndarray:
    left, right = _operand(ctx, node.left), _operand(ctx, node.right)
    if isinstance(left, float) and isinstance(right, float):  # two numbers: still one value a candle
        left = ctx.values(node.left)
    return _compare_arrays(node.op, left, right)


def _cross(ctx: Context, node: A.Cross) -> np.ndarray:
    left = ctx.values(node.left)
    if isinstance(node.right, A.Num):  # "crosses above 30": the level as a number
        level = float(node.right.value)
        if node.direction == "either":
            return K.cross_level_nb(left, level, True) | K.cross_level_nb(left, level, False)
        return K.cross_level_nb(left, level, node.direction == "above")
    right = ctx.values(node.right)
    if node.direction == "either":
        return K.cross_nb(left, right, True) | K.cross_nb(left, right, False)
    return K.cross_nb(left, right, node.direction == "above")


def _between(ctx: Context, node: A.Between) -> np.ndarray:
    x = ctx.values(node.expr)
    return (x >= ctx.values(node.low)) & (x <= ctx.values(node.high))


def _within(ctx: Context, node: A.Within) -> np.ndarray:
    x, ref = ctx.values(node.expr), ctx.values(node.ref)
    return np.abs(x - ref) <= (node.pct / 100.0) * np.abs(ref)


def _streak(ctx: Context, node: A.Streak) -> np.ndarray:
    x = ctx.values(node.expr)
    before = shift(x, 1)
    moved = x > before if node.direction == "rise" else x < before
    return K.run_length_nb(moved) >= node.n


def _candles(ctx: Context, node: A.Candles) -> np.ndarray:
    close, open_ = ctx.array("close"), ctx.array("open")
    colored = close > open_ if node.color == "green" else close < open_
    return K.run_length_nb(colored) >= node.n


def _new_extreme(ctx: Context, node: A.NewExtreme) -> np.ndarray:
    x = ctx.values(node.expr)
    if node.kind == "high":
        return x > shift(K.rolling_max_nb(x, node.n), 1)
    return x < shift(K.rolling_min_nb(x, node.n), 1)


_PATTERN_KERNELS: dict[str, Callable[..., np.ndarray]] = {
    "engulfing": KP.engulfing_nb,
    "harami": KP.harami_nb,
    "doji": KP.doji_nb,
    "hammer": KP.hammer_nb,
    "inverted hammer": KP.inverted_hammer_nb,
    "shooting star": KP.shooting_star_nb,
    "morning star": lambda o, h, lo, c: KP.star_nb(o, h, lo, c, True),
    "evening star": lambda o, h, lo, c: KP.star_nb(o, h, lo, c, False),
    "three white soldiers": KP.three_soldiers_nb,
    "three black crows": KP.three_crows_nb,
}


def _pattern(ctx: Context, node: A.Pattern) -> np.ndarray:
    key = A.Ind(f"_pattern {node.name}", ())
    values = ctx.cache.get(key)
    if values is None:
        values = _PATTERN_KERNELS[node.name](ctx.array("open"), *_hlc(ctx))
        ctx.cache[key] = values
    if node.side == "bullish":
        return values > 0
    if node.side == "bearish":
        return values < 0
    return values != 0


def _after(ctx: Context, node: A.After) -> np.ndarray:
    prior = ctx.truth(node.prior)
    index = np.arange(prior.size)
    # The latest candle before this one where `prior` held (-window - 1 when none yet).
    latest = np.maximum.accumulate(np.where(prior, index, -node.window - 1))
    before = np.r_[-node.window - 1, latest[:-1]] if prior.size else latest
    return ctx.truth(node.cond) & (index - before <= node.window)


def _and(ctx: Context, node: A.And) -> np.ndarray:
    out = ctx.truth(node.items[0]).copy()
    for item in node.items[1:]:
        out &= ctx.truth(item)
    return out


def _or(ctx: Context, node: A.Or) -> np.ndarray:
    out = ctx.truth(node.items[0]).copy()
    for item in node.items[1:]:
        out |= ctx.truth(item)
    return out


def _tf_cond(ctx: Context, node: A.TfCond) -> np.ndarray:
    higher, index = ctx.higher(node.timeframe)
    truth = higher.truth(node.cond)
    # Only on the candle that closes a higher candle: index moves to it there.
    closing = index >= 0
    closing[1:] &= index[1:] != index[:-1]
    out = np.zeros(ctx.size, np.bool_)
    out[closing] = truth[index[closing]]
    return out


def _day_end(ctx: Context, node: A.DayEnd) -> np.ndarray:
    t = ctx.array("open_time")
    steps = np.diff(t)
    base = int(steps[steps > 0].min()) if (steps > 0).any() else K.DAY_MS
    return (t + base) % K.DAY_MS == 0


_TRUTH: dict[type, Callable[[Context, A.Node], np.ndarray]] = {
    A.DayEnd: _day_end,
    A.TfCond: _tf_cond,
    A.Compare: _compare,
    A.Cross: _cross,
    A.Between: _between,
    A.Within: _within,
    A.Streak: _streak,
    A.Candles: _candles,
    A.NewExtreme: _new_extreme,
    A.After: _after,
    A.Pattern: _pattern,
    A.And: _and,
    A.Or: _or,
    A.Not: lambda c, n: ~c.truth(n.item),
    A.TrendEvent: lambda c, n: c.trend(n.event),
}


# ---- warm-up ---------------------------------------------------------------------------------------


def lookback(node: A.Node) -> int:
    """Index of the first candle where `node` is defined (0 = from the first candle).

    >>> from svc_engine.strategy import ast as A
    >>> lookback(A.Cross("above", A.Ind("rsi", (14,)), A.Num(30.0)))
    15
    """
    return _reach(node, _LOOKBACK)


def settle(node: A.Node) -> int:
    """Index from which `node`, evaluated on a series that starts anywhere earlier, has the whole
    history's values bit for bit: `lookback` plus the stabilisation of every recursive smoothing on
    the way (``ceil(100 / alpha)`` each, composed along sources).

    >>> from svc_engine.strategy import ast as A
    >>> settle(A.Cross("above", A.Ind("rsi", (14,)), A.Num(30.0)))
    1415
    >>> settle(A.Ind("sma", (20,), "", A.Ind("rsi", (14,))))
    1433
    """
    return _reach(node, _SETTLE)


class _Reach(NamedTuple):
    """What one warm-up measure counts for the leaves: an indicator, trend events, an ATR exit."""

    indicator: Callable[[A.Ind], int]
    trend: int
    atr_target: Callable[[int], int]


_LOOKBACK = _Reach(lambda n: SPECS[n.name].lookback(n.params, n.output), TREND_LOOKBACK, lambda p: p)
_SETTLE = _Reach(
    lambda n: SPECS[n.name].settle(n.params, n.output), TREND_SETTLE, lambda p: p + wilder_settle(p)
)


def _reach(node: A.Node, m: _Reach) -> int:
    # The same composition for both warm-ups: sources add up, lags and runs add their length,
    # a cross needs one candle more, a condition "after" another needs the other one candle earlier.
    if isinstance(node, A.Num | A.Field):
        return 0
    if isinstance(node, A.Ind):
        own = m.indicator(node) if node.name in SPECS else 0
        return own + (_reach(node.source, m) if node.source is not None else 0)
    if isinstance(node, A.Lag):
        return _reach(node.expr, m) + node.n
    if isinstance(node, A.Cross):
        return max(_reach(node.left, m), _reach(node.right, m)) + 1
    if isinstance(node, A.Streak | A.NewExtreme):
        return _reach(node.expr, m) + node.n
    if isinstance(node, A.Candles):
        return node.n - 1
    if isinstance(node, A.TrendEvent):
        return m.trend
    if isinstance(node, A.Pattern):
        return PATTERNS[node.name].lookback
    if isinstance(node, A.Tf | A.TfCond):
        # Counted in candles of the higher timeframe (the values are NaN until then); a restart
        # must rebuild the same higher candles, so it reads the whole history.
        inner = node.expr if isinstance(node, A.Tf) else node.cond
        return WHOLE_HISTORY if m is _SETTLE else _reach(inner, m) + 1
    if isinstance(node, A.After):
        return max(_reach(node.cond, m), _reach(node.prior, m) + node.window)
    if isinstance(node, A.AtrTarget):
        return m.atr_target(node.period)
    if isinstance(node, A.Trailing):
        return m.atr_target(node.atr_period) if node.atr_mult else 0
    return max((_reach(c, m) for c in node.children()), default=0)
