"""Loading one instrument's candles over a range, and handing them to kernels as NumPy arrays.

Only the Parquet row groups that overlap the range are read (polars predicate pushdown on the
``open_time`` statistics). The loaded slice is validated again, so a file dropped into the store by
hand cannot reach a simulation with a broken candle. The same request on an unchanged file gives
the frame read the first time (`svc_engine.data.loaded`): a notebook's second backtest of a symbol
reads nothing, and the arrays kept for that frame serve it (`svc_engine.data.arrays`).

Example:
    >>> import tempfile, polars as pl
    >>> from svc_engine.data.store import DataStore
    >>> store = DataStore(tempfile.mkdtemp())
    >>> df = pl.DataFrame({"open_time": [0, 60_000, 120_000], "open": [1.0, 1.1, 1.2],
    ...                    "high": [1.2] * 3, "low": [0.9] * 3, "close": [1.1, 1.15, 1.1],
    ...                    "volume": [5.0, 6.0, 7.0]})
    >>> store.write_klines("crypto", "BTCUSDT", "1m", df)
    3
    >>> k = load_klines("BTCUSDT", "1m", start_ts=120, warmup=1, store=store)
    >>> k["open_time"].dt.epoch("ms").to_list(), k.schema["open_time"]
    ([60000, 120000], Datetime(time_unit='ms', time_zone='UTC'))
"""

from __future__ import annotations

import math
import numbers
from datetime import UTC, datetime
from typing import Any

import numpy as np
import polars as pl

from svc_engine.data import loaded
from svc_engine.data.derived import scan_series
from svc_engine.data.schema import COLUMNS, conform, timeframe_ms, validate_klines
from svc_engine.data.store import DataStore
from svc_engine.data.times import ms_array, to_seconds

_T = pl.col("open_time")  # on disk: Int64 Unix milliseconds


def load_klines(
    symbol: str,
    timeframe: str,
    start_ts: Any = None,
    end_ts: Any = None,
    market: str | None = None,
    warmup: int = 0,
    *,
    store: DataStore | None = None,
) -> pl.DataFrame:
    """Candles of one instrument with ``open_time`` in ``[start_ts, end_ts]`` (inclusive).

    ``start_ts``/``end_ts`` are Unix seconds, ``datetime``/``date`` objects or ISO strings
    (``svc_engine.data.times.to_seconds``). The frame's ``open_time`` is ``Datetime("ms", "UTC")``
    (``schema.SCHEMA``; int64 Unix milliseconds underneath, which the kernels read without a copy:
    :func:`to_arrays`).
    The range is clipped to the data; ``warmup`` earlier candles are prepended (fewer where the
    data starts sooner). ``market=None`` picks the one market that holds ``symbol``. A timeframe
    that is not stored is resampled from the finest stored one that divides it, and cached.
    Raises ``ValueError`` for an inverted range or one that selects no candle, and
    :class:`~svc_engine.data.store.DataNotFoundError` when the series does not exist.

    Example:
        >>> load_klines("BTCUSDT", "1m", 300, 200)
        Traceback (most recent call last):
        ...
        ValueError: inverted range: start_ts 300 is after end_ts 200
    """
    start_ts, end_ts = _seconds(start_ts), _seconds(end_ts)
    _check_ts("start_ts", start_ts)
    _check_ts("end_ts", end_ts)
    if start_ts is not None and end_ts is not None and start_ts > end_ts:
        raise ValueError(f"inverted range: start_ts {start_ts} is after end_ts {end_ts}")
    if isinstance(warmup, bool) or not isinstance(warmup, int) or warmup < 0:
        raise ValueError(f"warmup must be a whole number of candles >= 0, got {warmup!r}")
    tf_ms = timeframe_ms(timeframe)
    store = store if store is not None else DataStore()
    market = market if market is not None else store.find_market(symbol)
    lo = -(2**63) if start_ts is None else math.ceil(start_ts * 1000)
    hi = 2**63 - 1 if end_ts is None else math.floor(end_ts * 1000)
    version = _version(store, market, symbol, timeframe)
    request = (str(store.root), str(store.tail_root), market, symbol.upper(), timeframe, lo, hi, warmup)
    args = (store, market, symbol, timeframe, (start_ts, end_ts), (lo, hi), warmup, tf_ms)
    if version is not None:
        return loaded.get(request, version, lambda: _load(*args))
    return _load(*args)


def _version(store: DataStore, market: str, symbol: str, timeframe: str) -> tuple[Any, ...] | None:
    """What identifies the stored series' content: the stat of its file and of its tail; None for
    a series not stored at this timeframe (a resample, not kept here) or not found."""
    key = store.key(market, symbol, timeframe)
    stat = store._stat(key)
    return None if stat is None else (stat, store._tail_stat(key))


def _load(
    store: DataStore,
    market: str,
    symbol: str,
    timeframe: str,
    asked: tuple[Any, Any],
    bounds: tuple[int, int],
    warmup: int,
    tf_ms: int,
) -> pl.DataFrame:
    (start_ts, end_ts), (lo, hi) = asked, bounds
    lf, source = scan_series(store, market, symbol, timeframe)
    body = lf.filter(_T.is_between(lo, hi)).select(COLUMNS).collect()
    if body.height == 0:
        raise ValueError(_no_candle(lf, f"{market}/{symbol.upper()} {timeframe}", start_ts, end_ts))
    if warmup:
        body = pl.concat([_warmup(lf, body["open_time"][0], warmup, tf_ms), body])
    body = conform(body.rechunk(), f"{source} (loaded range)")
    validate_klines(body, source=f"{source} (loaded range)", timeframe=timeframe)
    return body


def _seconds(ts: Any) -> Any:
    # Numbers are checked as they are (_check_ts), and so is a number written as a string (refused,
    # as before); datetimes, dates, datetime64 and ISO strings become seconds.
    if ts is None or isinstance(ts, numbers.Real) or (isinstance(ts, str) and _is_number(ts)):
        return ts
    return to_seconds(ts)


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _check_ts(name: str, ts: object) -> None:
    if ts is None:
        return
    if isinstance(ts, bool) or not isinstance(ts, numbers.Real) or not math.isfinite(ts):
        raise ValueError(f"{name} must be a finite number of Unix seconds, got {ts!r}")


def _warmup(lf: pl.LazyFrame, before_ms: int, count: int, tf_ms: int) -> pl.DataFrame:
    # Read a window twice the gap-free span first; only a long gap needs the full history before it.
    near = lf.filter(_T.is_between(before_ms - 2 * (count + 1) * tf_ms, before_ms - 1))
    got = near.select(COLUMNS).collect()
    if got.height < count:
        got = lf.filter(_T.lt(before_ms)).select(COLUMNS).collect()
    return got.tail(count)


def _iso(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%d %H:%M")


def _no_candle(lf: pl.LazyFrame, what: str, start_ts: float | None, end_ts: float | None) -> str:
    first, last = lf.select(_T.min().alias("a"), _T.max().alias("b")).collect().row(0)
    held = "no candles" if first is None else f"{_iso(first)} .. {_iso(last)} UTC"
    return f"range [{start_ts}, {end_ts}] selects no candle of {what}; the data covers {held}"


def to_arrays(df: pl.DataFrame) -> dict[str, np.ndarray]:
    """Contiguous NumPy arrays of a kline frame: ``open_time`` int64 Unix ms, prices and volume float64.

    ``open_time`` may be ``Datetime("ms", "UTC")`` (as loaded), another datetime or integer ms.

    A single-chunk column without nulls is a zero-copy, read-only view of the frame's Arrow buffer
    (frames from :func:`load_klines` are single-chunk); anything else is copied once.

    Example:
        >>> import polars as pl
        >>> df = pl.DataFrame({"open_time": [0], "open": [1.0], "high": [1.0], "low": [1.0],
        ...                    "close": [1.0], "volume": [0.0]})
        >>> a = to_arrays(df)
        >>> a["close"].dtype, a["open_time"].dtype, a["close"].flags.c_contiguous
        (dtype('float64'), dtype('int64'), True)
    """
    out: dict[str, np.ndarray] = {"open_time": ms_array(df["open_time"])}
    for col in COLUMNS[1:]:
        series = df[col]
        if series.dtype != pl.Float64:
            series = series.cast(pl.Float64)
        out[col] = np.ascontiguousarray(series.to_numpy(allow_copy=True), dtype=np.float64)
    return out
