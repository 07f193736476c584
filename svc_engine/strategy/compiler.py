"""Evaluation: a strategy tree over a kline frame -> NumPy arrays, whole series at once.

Every numeric node becomes a float64 array (NaN while undefined) and every condition a bool array,
each computed once per evaluation (equal sub-trees share the cache). All operations are causal, so
the arrays of the first k candles equal the first k entries of the whole series.
`Context` lives here; the evaluators of numeric nodes in `values`, of conditions in `conditions`, and
the warm-up measures (`lookback`, `settle`) in `warmup`, all re-exported from here.

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

import numpy as np
import polars as pl

from svc_engine import indicators as K  # noqa: F401  (kept: `compiler.K` names the kernels in use)
from svc_engine import scratch as pool  # the per-thread scratch-buffer pool
from svc_engine.data import arrays as kept
from svc_engine.data.frames import as_klines
from svc_engine.data.times import as_time, ms_array, time_series
from svc_engine.strategy import ast as A
from svc_engine.strategy.conditions import TRUTH
from svc_engine.strategy.values import VALUE, shift
from svc_engine.strategy.warmup import TREND_LOOKBACK, TREND_SETTLE, lookback, settle

__all__ = [
    "KLINE_COLUMNS",
    "TREND_LOOKBACK",
    "TREND_SETTLE",
    "Context",
    "lookback",
    "settle",
    "shift",
]

KLINE_COLUMNS = ("open", "high", "low", "close", "volume")


class Context:
    """The arrays of one kline frame and the cache of everything computed from them."""

    def __init__(self, klines: pl.DataFrame, *, scratch: bool = False) -> None:
        """``klines``: any frame `svc_engine.data.frames.as_klines` takes (polars or pandas, any
        case, times as datetimes, Unix ms or s), converted once. ``scratch``: the owner calls
        `release` once no computed array is used any more (an evaluation of its own), so large
        indicator arrays can be written into kept ones."""
        klines = as_klines(klines)
        self.klines = klines
        self.size = klines.height
        self.arrays: dict[str, np.ndarray] = {}
        self.cache: dict[A.Node, np.ndarray] = {}
        self._trend: dict[str, np.ndarray] | None = None
        self._higher: dict[str, tuple[Context, np.ndarray]] = {}
        self._lent: list[np.ndarray] | None = [] if scratch else None
        self.rows: dict[A.Node, np.ndarray] = {}
        """Where a condition holds, for those whose evaluation found it on the way (`where`)."""

    def array(self, name: str) -> np.ndarray:
        """A kline column as a contiguous array, converted on first use: ``open_time`` as int64 Unix
        ms (from integer ms or any datetime column, a view when it can be), the others as float64.

        >>> Context(pl.DataFrame({"open_time": [0], "open": [1.0], "high": [1.0], "low": [1.0],
        ...     "close": [2.0], "volume": [0.0]})).array("close").tolist()
        [2.0]
        """
        out = self.arrays.get(name)
        if out is None:  # a frame already seen gives the arrays it was given (svc_engine.data.arrays)
            out = kept.column(self.klines, name, _times if name == "open_time" else _floats)
            self.arrays[name] = out
        return out

    def buffer(self) -> np.ndarray | None:
        """An array of `size` float64 for a kernel to write a large result into (``out=``): a kept
        one (`svc_engine.scratch.take`) in a scratch context, else None (the kernel allocates).

        >>> k = pl.DataFrame({"open_time": [0], "open": [1.0], "high": [1.0], "low": [1.0],
        ...     "close": [2.0], "volume": [0.0]})
        >>> Context(k).buffer() is None, Context(k, scratch=True).buffer() is None  # small: allocate
        (True, True)
        """
        if self._lent is None or self.size * 8 < pool.ADVISE_BYTES:
            return None
        out = pool.take(self.size)
        out = np.empty(self.size) if out is None else out
        self._lent.append(out)
        return out

    def release(self) -> None:
        """Forget every computed array and give the `buffer` arrays back for the thread's next
        evaluation (`svc_engine.scratch.keep`); the caller holds none of them."""
        self.cache.clear()
        self.rows.clear()
        self._higher.clear()
        if self._lent:
            pool.keep(self._lent)
            self._lent = []

    def values(self, node: A.Node) -> np.ndarray:
        """Float64 values of a numeric node (cached).

        >>> k = pl.DataFrame({"open_time": [0, 1], "open": [1.0, 2.0], "high": [1.0, 2.0], "low": [1.0, 2.0],
        ...     "close": [1.0, 3.0], "volume": [0.0, 0.0]})
        >>> Context(k).values(A.Arith("-", A.Field("close"), A.Field("open"))).tolist()
        [0.0, 1.0]
        """
        cached = self.cache.get(node)
        if cached is None:
            cached = VALUE[type(node)](self, node)
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
                cached = TRUTH[type(node)](self, node)
            self.cache[node] = cached
        return cached

    def where(self, node: A.Node) -> np.ndarray:
        """The rows where a condition node holds (``np.flatnonzero`` of `truth`, kept once known).

        >>> k = pl.DataFrame({"open_time": [0, 1], "open": [1.0, 2.0], "high": [1.0, 2.0], "low": [1.0, 2.0],
        ...     "close": [1.0, 3.0], "volume": [0.0, 0.0]})
        >>> Context(k).where(A.Candles("green", 1)).tolist()
        [1]
        """
        rows = self.rows.get(node)
        if rows is None:
            rows = np.flatnonzero(self.truth(node))
            self.rows[node] = rows
        return rows

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
    frame = pl.DataFrame(
        {
            "open_time": time_series("open_time", bucket[starts] * length + offset),
            "open": ctx.array("open")[starts],
            "high": np.maximum.reduceat(ctx.array("high"), starts) if t.size else np.zeros(0),
            "low": np.minimum.reduceat(ctx.array("low"), starts) if t.size else np.zeros(0),
            "close": ctx.array("close")[ends],
            "volume": np.add.reduceat(ctx.array("volume"), starts) if t.size else np.zeros(0),
        }
    )
    position = np.cumsum(first) - 1
    closed = t + base >= (bucket + 1) * length + offset  # this candle closes its higher candle
    return Context(frame), np.where(closed, position, position - 1)


def _times(series: pl.Series) -> np.ndarray:
    """Unix ms of an integer or datetime column (a view of a ``TIME`` or ``Int64`` one); other
    types are cast as before, and the simulation refuses them."""
    if series.dtype.is_temporal() and not series.null_count():
        return ms_array(series)
    if series.dtype.is_temporal():
        series = as_time(series).to_physical()
    return _array(series, pl.Int64)


def _floats(series: pl.Series) -> np.ndarray:
    return _array(series, pl.Float64)


def _array(series: pl.Series, dtype: type[pl.DataType]) -> np.ndarray:
    """The column as a contiguous NumPy array, without a copy when it already is one."""
    if series.dtype != dtype:
        series = series.cast(dtype)
    if series.null_count():
        series = series.fill_null(np.nan) if dtype == pl.Float64 else series.fill_null(0)
    return np.ascontiguousarray(series.to_numpy())
