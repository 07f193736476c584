"""Any candle frame in: polars or pandas, lowercase or backtesting.py's capitalised columns, times as
datetimes, Unix milliseconds or Unix seconds, made into the engine's kline frame once, at the edge.

The engine's form is a polars frame with ``open_time`` as ``Datetime("ms", "UTC")`` and lowercase
``open high low close volume`` (other columns kept). A pandas frame is taken column by column
(NumPy buffers, no copy where they are contiguous), its time from a time column or from a
``DatetimeIndex``; pandas is never imported here, and nothing past this module sees a pandas object.

Integer times are Unix milliseconds (the engine's contract) unless the data says seconds: values
that, read as milliseconds, fall before 1973 while the smallest spacing between candles is a
whole timeframe in seconds and not in milliseconds (60 apart: one minute; 60 ms is no candle).
Values that fit both readings without the spacing deciding, and values too large for either
(microseconds, nanoseconds), are refused with the reason: a wrong guess would shift every date.

Example:
    >>> k = pl.DataFrame({"Date": [1_700_000_000, 1_700_000_060], "Open": [1.0, 1.0], "High": [1.0, 1.0],
    ...                   "Low": [1.0, 1.0], "Close": [1.0, 1.0], "Volume": [0.0, 0.0]})
    >>> as_klines(k)["open_time"].dt.epoch("ms").to_list()
    [1700000000000, 1700000060000]
"""

from __future__ import annotations

from typing import Any

import numpy as np
import polars as pl

from svc_engine.data import arrays
from svc_engine.data.schema import COLUMNS, TIMEFRAMES, KlineValidationError
from svc_engine.data.times import TIME, as_time, time_series

#: Names a time column may have (any case), in the order they are looked for.
TIME_NAMES: tuple[str, ...] = ("open_time", "open time", "time", "timestamp", "datetime", "date")
_STEPS_MS = frozenset(TIMEFRAMES.values())
_BEFORE_1973_MS = 100_000_000_000  # 1973-03-03 in ms; in seconds the year 5138
_TOO_LARGE_MS = 100_000_000_000_000  # the year 5138 in ms: larger integers are micro- or nanoseconds
_EXPECTED = (
    "expected columns open_time (or a time, timestamp, date or datetime column, or a pandas "
    "DatetimeIndex), open, high, low, close, volume (any case)"
)


def is_frame(value: Any) -> bool:
    """Whether ``value`` is a frame :func:`as_klines` takes (polars, or pandas by its type's module).

    Example:
        >>> is_frame(pl.DataFrame()), is_frame("BTCUSDT")
        (True, False)
    """
    return isinstance(value, pl.DataFrame) or _is_pandas(value)


def as_klines(frame: Any, source: str = "klines") -> pl.DataFrame:
    """The engine's kline frame from a polars or pandas frame (see the module docstring).

    A frame already in the engine's form is returned as it is (the same object), so the arrays the
    engine keeps for it (`svc_engine.data.arrays`) serve every later call. A wrong schema is one
    `KlineValidationError` listing the columns expected and those found.

    Example:
        >>> as_klines(pl.DataFrame({"open_time": [0], "close": [1.0]}))  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        svc_engine.data.schema.KlineValidationError: klines: schema: klines lack columns ['open', ...
    """
    if _is_pandas(frame):
        frame = _from_pandas(frame)
    elif not isinstance(frame, pl.DataFrame):
        raise TypeError(f"{source} must be a polars or pandas DataFrame, got {type(frame).__name__}")
    if _engine_form(frame):
        return frame
    names = _sources(frame, source)
    # A polars frame already seen gives the same converted frame, whose arrays are kept (arrays.py).
    return arrays.derived(
        frame,
        ("klines", source, tuple(frame.columns)),
        tuple(names.values()),
        lambda: _converted(frame, names, source),
    )


def _converted(frame: pl.DataFrame, names: dict[str, str], source: str) -> pl.DataFrame:
    renamed = frame.rename({have: want for want, have in names.items() if have != want})
    return renamed.with_columns(_time_column(renamed["open_time"], source))


def as_frame(frame: Any, source: str = "signals") -> pl.DataFrame:
    """A polars frame of a polars or pandas one (columns as they are): signals, for instance.

    Example:
        >>> as_frame(pl.DataFrame({"a": [1]})).columns
        ['a']
    """
    if _is_pandas(frame):
        return _from_pandas(frame, index=False)
    if not isinstance(frame, pl.DataFrame):
        raise TypeError(f"{source} must be a polars or pandas DataFrame, got {type(frame).__name__}")
    return frame


def _engine_form(frame: pl.DataFrame) -> bool:
    schema = frame.schema
    return all(c in schema for c in COLUMNS) and schema["open_time"] == TIME


def _is_pandas(value: Any) -> bool:
    module = type(value).__module__
    return (module == "pandas" or module.startswith("pandas.")) and type(value).__name__ == "DataFrame"


def _from_pandas(frame: Any, *, index: bool = True) -> pl.DataFrame:
    """Columns as polars series over the frame's NumPy buffers; a ``DatetimeIndex`` (or an index
    named like a time) becomes a column when no column holds the time."""
    columns: dict[str, pl.Series] = {}
    for name in frame.columns:
        columns[str(name)] = pl.Series(str(name), _numpy(frame[name]), strict=False)
    idx = frame.index
    has_time = any(str(c).lower() in TIME_NAMES for c in frame.columns)
    named = str(idx.name).lower() in TIME_NAMES if idx.name is not None else False
    if index and not has_time and (str(idx.dtype).startswith("datetime64") or named):
        columns = {"open_time": pl.Series("open_time", _numpy(idx)), **columns}
    return pl.DataFrame(columns)


def _numpy(values: Any) -> np.ndarray:
    """A pandas column or index as NumPy; time-zone aware times as UTC wall times (naive = UTC here)."""
    if getattr(getattr(values, "dtype", None), "tz", None) is not None:
        if hasattr(values, "dt"):  # a column
            values = values.dt.tz_convert("UTC").dt.tz_localize(None)
        else:  # an index
            values = values.tz_convert("UTC").tz_localize(None)
    return values.to_numpy()


def _sources(frame: pl.DataFrame, source: str) -> dict[str, str]:
    """The frame's column for each of the engine's, whatever case or time name it came in."""
    lower: dict[str, str] = {}
    for name in frame.columns:
        lower.setdefault(name.lower(), name)
    found: dict[str, str] = {}
    for want in COLUMNS:
        if want in frame.columns:
            found[want] = want
        elif want == "open_time":
            have = next((lower[n] for n in TIME_NAMES if n in lower), None)
            if have is not None:
                found[want] = have
        elif want in lower:
            found[want] = lower[want]
    missing = [c for c in COLUMNS if c not in found]
    if missing:
        raise KlineValidationError(
            source, None, "schema", f"{source} lack columns {missing}: {_EXPECTED}; found {frame.columns}"
        )
    return found


def _time_column(column: pl.Series, source: str) -> pl.Series:
    dtype = column.dtype
    if dtype == pl.Date:
        return column.cast(pl.Datetime("ms")).dt.replace_time_zone("UTC").alias("open_time")
    if isinstance(dtype, pl.Datetime) or dtype == pl.Null:  # Null: an empty column, refused as empty later
        return as_time(column)
    if not dtype.is_integer():
        raise KlineValidationError(
            source, None, "schema", f"open_time must be integer ms or a datetime, got {dtype}"
        )
    if column.null_count():
        raise KlineValidationError(source, None, "schema", "open_time has nulls")
    # One copy of a many-chunk column (as read from Parquet), read for the unit and then the
    # column's single chunk: every later read of the times is a view of it, not a copy again.
    ms = np.ascontiguousarray(column.cast(pl.Int64).to_numpy())
    if integer_unit(ms, source) == "s":
        ms = ms * 1000
    return time_series("open_time", ms)


def integer_unit(t: np.ndarray, source: str = "klines") -> str:
    """``"ms"`` or ``"s"``: the unit of integer candle times, or a `KlineValidationError` saying why
    it cannot be told (see the module docstring).

    Example:
        >>> integer_unit(np.array([0, 60_000])), integer_unit(np.array([1_700_000_000, 1_700_003_600]))
        ('ms', 's')
        >>> integer_unit(np.array([1_700_000_000]))  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        svc_engine.data.schema.KlineValidationError: klines: schema: open_time is ambiguous: ...
    """
    if t.size == 0:
        return "ms"
    ends = np.abs(t[[0, -1]]).max()  # sorted series: the ends bound it (unsorted ones are refused later)
    if ends >= _TOO_LARGE_MS:
        raise KlineValidationError(
            source,
            None,
            "schema",
            f"open_time {int(t[0])} is too large for Unix milliseconds or seconds (microseconds or "
            "nanoseconds?): give the time as a datetime column",
        )
    if ends >= _BEFORE_1973_MS:
        return "ms"
    gaps = np.diff(t)
    gaps = gaps[gaps > 0]
    step = int(gaps.min()) if gaps.size else 0
    as_ms, as_s = step in _STEPS_MS, step * 1000 in _STEPS_MS
    if as_s and not as_ms:
        return "s"
    if as_ms or ends < 946_684_800:  # small test integers (from 0): milliseconds, as documented
        return "ms"
    raise KlineValidationError(
        source,
        None,
        "schema",
        f"open_time is ambiguous: {int(t[0])} is {_iso(int(t[0]) * 1000)} in Unix seconds and "
        f"{_iso(int(t[0]))} in milliseconds, and the spacing ({step}) is no timeframe in either; "
        "give the time as a datetime column",
    )


def _iso(ms: int) -> str:
    return str(np.datetime64(ms, "ms"))[:16]
