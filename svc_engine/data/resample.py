"""Resampling a kline series to a coarser timeframe on the UTC grid.

Buckets open at ``offset + k * length`` (weeks on Monday 00:00 UTC like Binance, every other
timeframe, ``3d`` included, aligned to the epoch); a bucket without candles yields no row. The
aggregation is the usual one (first open, max high, min low, last close, summed volume) with one
refinement taken from Binance's native klines: candles with zero volume do not set a bucket's open,
high or low when the bucket has a traded candle. Exchange dumps hold idle minutes that repeat the
previous close; Binance's own hourly and 4-hourly candles ignore them, and so does this. The
result's ``open_time`` is ``Datetime("ms", "UTC")``, whatever integer or datetime form came in.

Example:
    >>> import polars as pl
    >>> m = pl.DataFrame({"open_time": [0, 60_000, 120_000], "open": [1.0, 2.0, 3.0],
    ...                   "high": [2.0, 4.0, 3.5], "low": [0.5, 1.5, 2.5],
    ...                   "close": [2.0, 3.0, 3.2], "volume": [1.0, 2.0, 3.0]})
    >>> resample(m, "3m").row(0)[1:], resample(m, "3m")["open_time"].dt.epoch("ms").to_list()
    ((1.0, 4.0, 0.5, 3.2, 6.0), [0])
"""

from __future__ import annotations

import numpy as np
import polars as pl
from numba import njit

from svc_engine.data.schema import COLUMNS, SCHEMA, conform, grid_offset_ms, timeframe_ms
from svc_engine.data.times import ms_array


def bucket_start(timeframe: str, column: str = "open_time") -> pl.Expr:
    """Expression giving the open time (Unix ms, ``Int64``) of the ``timeframe`` bucket that holds
    each candle; ``column`` holds integer Unix ms or ``Datetime("ms", "UTC")`` times.

    Example:
        >>> import polars as pl
        >>> monday = 1_704_067_200_000  # 2024-01-01 00:00 UTC, a Monday
        >>> pl.DataFrame({"t": [monday + 86_400_000]}).select(bucket_start("1w", "t"))["t"][0] == monday
        True
    """
    length, offset = timeframe_ms(timeframe), grid_offset_ms(timeframe)
    t = pl.col(column).to_physical()
    return t - (t - offset) % length


def resample(df: pl.DataFrame, timeframe: str, *, skip_idle: bool = True) -> pl.DataFrame:
    """Aggregate a kline frame sorted by ``open_time`` into ``timeframe`` candles on the UTC grid.

    ``skip_idle=False`` gives the plain first/max/min/last/sum aggregation. With the default, a
    bucket's open, high and low come from its candles with volume > 0 when it has any; the high
    and low still bound the open and close, so every output candle is valid. An unsorted frame
    is refused with ``ValueError``.

    Example:
        >>> import polars as pl
        >>> h = pl.DataFrame({"open_time": [0, 3_600_000], "open": [10.0, 11.0], "high": [12.0, 13.0],
        ...                   "low": [9.0, 10.5], "close": [11.0, 12.0], "volume": [0.0, 4.0]})
        >>> resample(h, "2h").row(0)[1:]
        (11.0, 13.0, 10.5, 12.0, 4.0)
        >>> resample(h, "2h", skip_idle=False).row(0)[1:]
        (10.0, 13.0, 9.0, 12.0, 4.0)
        >>> resample(h, "2h").schema["open_time"]
        Datetime(time_unit='ms', time_zone='UTC')
    """
    df = conform(df)
    t = ms_array(df["open_time"])
    o, h, lo, c, v = (np.ascontiguousarray(df[col].to_numpy()) for col in COLUMNS[1:])
    out = _resample_nb(t, o, h, lo, c, v, timeframe_ms(timeframe), grid_offset_ms(timeframe), skip_idle)
    count = out[0]
    if count < 0:
        raise ValueError(f"resample needs a series sorted by open_time; row {-count} goes back in time")
    return pl.DataFrame({col: arr[:count] for col, arr in zip(COLUMNS, out[1:], strict=True)}, schema=SCHEMA)


@njit(cache=True, nogil=True)
def _resample_nb(
    t: np.ndarray,
    o: np.ndarray,
    h: np.ndarray,
    lo: np.ndarray,
    c: np.ndarray,
    v: np.ndarray,
    length: int,
    offset: int,
    skip_idle: bool,
) -> tuple:
    # One pass: a sorted series leaves a bucket only forwards, so the modulo runs once per bucket.
    # Returns (count, arrays...) with count = -row of the first unsorted row.
    n = t.size
    for i in range(1, n):
        if t[i] < t[i - 1]:  # checked first: the capacity below holds for a sorted series only
            return -i, np.empty(0, np.int64), np.empty(0), np.empty(0), np.empty(0), np.empty(0), np.empty(0)
    cap = min(n, (t[n - 1] - t[0]) // length + 2) if n else 0
    ot = np.empty(cap, np.int64)
    oo, oh, ol, oc, ov = np.empty(cap), np.empty(cap), np.empty(cap), np.empty(cap), np.empty(cap)
    k = -1
    end = 0
    a_open = a_high = a_low = t_open = t_high = t_low = 0.0
    traded_seen = False
    for i in range(n):
        if k < 0 or t[i] >= end:
            if k >= 0:
                _close_bucket_nb(k, oo, oh, ol, oc, traded_seen, a_open, a_high, a_low, t_open, t_high, t_low)
            k += 1
            ot[k] = t[i] - (t[i] - offset) % length
            end, ov[k] = ot[k] + length, 0.0
            a_open, a_high, a_low, traded_seen = o[i], h[i], lo[i], False
        a_high, a_low = max(a_high, h[i]), min(a_low, lo[i])
        if v[i] > 0 or not skip_idle:
            if not traded_seen:
                t_open, t_high, t_low, traded_seen = o[i], h[i], lo[i], True
            t_high, t_low = max(t_high, h[i]), min(t_low, lo[i])
        oc[k] = c[i]
        ov[k] += v[i]
    if k >= 0:
        _close_bucket_nb(k, oo, oh, ol, oc, traded_seen, a_open, a_high, a_low, t_open, t_high, t_low)
    return k + 1, ot, oo, oh, ol, oc, ov


@njit(cache=True, nogil=True, inline="always")
def _close_bucket_nb(
    k: int,
    oo: np.ndarray,
    oh: np.ndarray,
    ol: np.ndarray,
    oc: np.ndarray,
    traded: bool,
    a_open: float,
    a_high: float,
    a_low: float,
    t_open: float,
    t_high: float,
    t_low: float,
) -> None:
    oo[k] = t_open if traded else a_open
    high, low = (t_high, t_low) if traded else (a_high, a_low)
    # the close may come from an idle candle outside the traded range: keep the candle valid
    oh[k] = max(high, oo[k], oc[k])
    ol[k] = min(low, oo[k], oc[k])
