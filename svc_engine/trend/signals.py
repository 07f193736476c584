"""The detector's public face: kline frame in, one row per trend signal out (and per-candle events).

Example:
    >>> import polars as pl
    >>> k = pl.DataFrame({"open_time": [0, 60_000], "open": [1.0, 1.0], "high": [1.0, 1.0],
    ...                   "low": [1.0, 1.0], "close": [1.0, 1.0], "volume": [0.0, 0.0]})
    >>> detect_trends(k).height, break_events(k)["break_up"].to_list()
    (0, [False, False])
"""

from __future__ import annotations

import numpy as np
import polars as pl
from numba import njit

from svc_engine.data.times import TIME, as_time
from svc_engine.indicators import atr_nb
from svc_engine.trend.breaks import detect_nb
from svc_engine.trend.params import TrendParams

_ANCHORS: tuple[str, ...] = ("high_p1", "high_p2", "low_p1", "low_p2")
SIGNAL_SCHEMA: dict[str, pl.DataType] = {
    "symbol": pl.Utf8(),
    "timeframe": pl.Utf8(),
    "open_time": TIME,
    "index": pl.Int64(),
    "way": pl.Utf8(),
    "is_return_to_trend": pl.Boolean(),
    "break_open_time": TIME,
    **{
        f"{a}_{f}": t
        for a in _ANCHORS
        for f, t in (("time", TIME), ("index", pl.Int64()), ("price", pl.Float64()))
    },
}
"""Columns of ``detect_trends``: the signal candle, the way, and the anchors of both lines.

Times (``open_time``, ``break_open_time``, ``*_time``) are ``Datetime("ms", "UTC")``: the open time
of the candle meant. ``high_p1_*``/``high_p2_*`` are anchor 1 and 2 of the resistance line (time,
index in the input frame, pivot price), ``low_*`` those of the support line; null where that side
has no line.
"""


def kline_arrays(klines: pl.DataFrame, extra: tuple[str, ...] = ()) -> dict[str, np.ndarray]:
    """``open_time`` (int64 Unix ms), ``high``, ``low``, ``close`` (float64) and ``extra``, checked.

    ``open_time`` may be a datetime column (``load_klines`` gives ``Datetime("ms", "UTC")``; any
    unit, naive = UTC) or integer Unix milliseconds.
    Arrays are views of the frame where polars allows it (one chunk, no nulls).

    Example:
        >>> kline_arrays(pl.DataFrame({"open_time": [0], "high": [2], "low": [1], "close": [1]}))["high"]
        array([2.])
    """
    if not isinstance(klines, pl.DataFrame):
        raise TypeError(f"klines must be a polars DataFrame, got {type(klines).__name__}")
    wanted = ("open_time", "high", "low", "close", *extra)
    missing = [c for c in wanted if c not in klines.columns]
    if missing:
        raise ValueError(f"klines lack the columns {missing}")
    out: dict[str, np.ndarray] = {}
    for name in wanted:
        column = klines[name]
        if name == "open_time" and column.dtype.is_temporal():
            column = as_time(column).to_physical()  # a view of Datetime("ms") as int64 ms
        if column.null_count():
            raise ValueError(f"klines column {name!r} has {column.null_count()} missing values")
        dtype = np.int64 if name == "open_time" else np.float64
        out[name] = np.ascontiguousarray(column.to_numpy(), dtype=dtype)
    row, problem = _first_bad_nb(out["open_time"], out["high"], out["low"], out["close"])
    if problem == 1:
        raise ValueError(f"klines open_time must be strictly increasing (row {row})")
    if problem == 2:
        raise ValueError(f"klines high, low or close has a NaN or infinite value (row {row})")
    return out


@njit(cache=True, nogil=True)
def _first_bad_nb(times: np.ndarray, high: np.ndarray, low: np.ndarray, close: np.ndarray) -> tuple[int, int]:
    # One pass instead of several temporary arrays: this check runs on every call of the detector.
    for i in range(times.shape[0]):
        if i > 0 and times[i] <= times[i - 1]:
            return i, 1
        if not (np.isfinite(high[i]) and np.isfinite(low[i]) and np.isfinite(close[i])):
            return i, 2
    return -1, 0


def signal_records(klines: pl.DataFrame, **params: object) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """The raw record array of ``detect_nb`` (see ``breaks.RECORD_FIELDS``) and the input arrays.

    Example:
        >>> k = pl.DataFrame({"open_time": [0], "high": [2.0], "low": [1.0], "close": [1.5]})
        >>> signal_records(k)[0].shape
        (0, 8)
    """
    p = TrendParams.from_kwargs(**params)
    arr = kline_arrays(klines)
    high, low, close = arr["high"], arr["low"], arr["close"]
    atr = atr_nb(high, low, close, p.atr_period)
    records = detect_nb(
        high,
        low,
        close,
        atr,
        p.left,
        p.right,
        p.min_gap,
        p.window,
        p.min_touches,
        float(p.touch_tol),
        float(p.break_tol),
        float(p.retest_tol),
        p.retest_min,
        p.retest_max,
    )
    return records, arr


def detect_trends(
    klines: pl.DataFrame, *, symbol: str = "", timeframe: str = "", **params: object
) -> pl.DataFrame:
    """Every trend break and return to trend of a kline frame, oldest first (columns: ``SIGNAL_SCHEMA``).

    ``params`` are those of ``TrendParams`` (``left``, ``right``, ``min_gap``, ``window``, ...).
    Signals of one candle come in the order break BUY, break SELL, return BUY, return SELL.

    Example:
        >>> import numpy as np
        >>> high = np.r_[np.linspace(20, 10, 40), [30.0]]
        >>> high[[12, 25]] += 5  # two pivots on a falling line, broken by the last candle
        >>> k = pl.DataFrame({"open_time": np.arange(41) * 60_000, "high": high,
        ...                   "low": high - 1, "close": high - 0.5})
        >>> detect_trends(k, symbol="X").select("index", "way", "high_p1_index", "high_p2_index").row(0)
        (40, 'BUY', 12, 25)
    """
    records, arr = signal_records(klines, **params)
    return signals_frame(records, arr, symbol=symbol, timeframe=timeframe)


def signals_frame(
    records: np.ndarray, arr: dict[str, np.ndarray], *, symbol: str = "", timeframe: str = ""
) -> pl.DataFrame:
    """Turn a record array and the kline arrays into the ``detect_trends`` frame.

    Example:
        >>> signals_frame(np.empty((0, 8), np.int64), {"open_time": np.empty(0, np.int64)}).columns[:4]
        ['symbol', 'timeframe', 'open_time', 'index']
    """
    times = arr["open_time"]
    n = records.shape[0]
    idx, way, ret, brk = (records[:, k] for k in range(4))
    up = way == 1
    columns: dict[str, object] = {
        "symbol": pl.repeat(symbol, n, dtype=pl.Utf8(), eager=True),
        "timeframe": pl.repeat(timeframe, n, dtype=pl.Utf8(), eager=True),
        "open_time": times[idx],
        "index": idx,
        # Mapping a Boolean is far cheaper than building a NumPy unicode array.
        "way": pl.Series(up).replace_strict({True: "BUY", False: "SELL"}, return_dtype=pl.Utf8()),
        "is_return_to_trend": ret == 1,
        "break_open_time": times[brk],
    }
    # The broken line sits on the signal's own side, the other line on the opposite side.
    high_cols = np.where(up[:, None], records[:, 4:6], records[:, 6:8])
    low_cols = np.where(up[:, None], records[:, 6:8], records[:, 4:6])
    for name, anchors in (("high", high_cols), ("low", low_cols)):
        prices = arr.get(name, np.empty(0))
        for k, anchor in enumerate((f"{name}_p1", f"{name}_p2")):
            at = anchors[:, k]
            present = at >= 0
            safe = np.where(present, at, 0)
            columns[f"{anchor}_time"] = _masked(times[safe] if n else at, present)
            columns[f"{anchor}_index"] = _masked(at, present)
            columns[f"{anchor}_price"] = _masked(prices[safe] if n else at.astype(float), present)
    return pl.DataFrame(columns, schema=SIGNAL_SCHEMA)


def _masked(values: np.ndarray, present: np.ndarray) -> pl.Series:
    series = pl.Series(values)
    return series.set(pl.Series(~present), None) if (~present).any() else series


def break_events(klines: pl.DataFrame, **params: object) -> pl.DataFrame:
    """One row per candle: did a trend line break up/down, or a return to trend happen, at its close.

    Aligned candle by candle with ``klines``, the frame has their ``open_time`` as
    ``Datetime("ms", "UTC")``, like the klines of ``load_klines`` and the signal frames it sits beside.

    Meant for strategy phrases such as "a trend line breaks upward"; each flag only uses candles
    up to its own, so it can be used as an entry condition without look-ahead.

    Example:
        >>> import numpy as np
        >>> high = np.r_[np.linspace(20, 10, 40), [30.0]]
        >>> high[[12, 25]] += 5
        >>> k = pl.DataFrame({"open_time": np.arange(41) * 60_000, "high": high,
        ...                   "low": high - 1, "close": high - 0.5})
        >>> ev = break_events(k)
        >>> ev["break_up"].arg_max(), ev["break_down"].sum(), ev.columns
        (40, 0, ['open_time', 'break_up', 'break_down', 'return_up', 'return_down'])
    """
    records, arr = signal_records(klines, **params)
    n = arr["open_time"].size
    flags: dict[str, object] = {"open_time": arr["open_time"]}
    for name, way, ret in (
        ("break_up", 1, 0),
        ("break_down", -1, 0),
        ("return_up", 1, 1),
        ("return_down", -1, 1),
    ):
        mask = np.zeros(n, dtype=bool)
        rows = (records[:, 1] == way) & (records[:, 2] == ret)
        mask[records[rows, 0]] = True
        flags[name] = mask
    return pl.DataFrame(
        flags,
        schema={
            "open_time": TIME,
            **dict.fromkeys(("break_up", "break_down", "return_up", "return_down"), pl.Boolean()),
        },
    )
