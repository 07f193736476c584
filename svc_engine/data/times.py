"""Times as users write them: Unix seconds, ``datetime``/``date`` objects and ISO strings.

Ranges go in as Unix seconds (``start_ts``/``end_ts``); every entry point also takes a
``datetime`` (naive = UTC), a ``date`` (its midnight UTC), a NumPy ``datetime64`` or an ISO 8601
string (``"2024-01-31"``, ``"2024-01-31T12:00"``, ``"2024-01-31T12:00:00+02:00"``).

Times come out with their unit in the dtype: every time column of a frame the engine hands back is
``Datetime("ms", "UTC")`` (``TIME``): the candles' ``open_time`` (``load_klines``, resampled and
synthetic series), the frames aligned candle by candle with them (strategy signals,
``break_events``), and the times of results (trades, positions, equity, walk-forward windows, the
trend detector's signals, scans and sentiment scores). A frame given to the engine may carry
``open_time`` as integer Unix milliseconds or as any datetime column (any unit; naive = UTC):
``as_time`` conforms it once at the boundary. Underneath, ``TIME`` is int64 Unix milliseconds, so
the kernels read it without a copy (``ms_array``). The Parquet store keeps ``Int64`` Unix
milliseconds on disk (``stored``), readable as they are by DuckDB and pyarrow. The API's JSON
shapes carry Unix milliseconds: ``ms_columns`` turns a frame back, ``epoch_ms`` one value.

Example:
    >>> to_seconds("2024-01-01"), to_seconds(1_704_067_200), to_seconds(None)
    (1704067200.0, 1704067200, None)
"""

from __future__ import annotations

import numbers
from datetime import UTC, date, datetime, timedelta
from typing import Any

import numpy as np
import polars as pl
import polars.selectors as cs

TIME = pl.Datetime("ms", "UTC")
"""The dtype of the times in results: milliseconds, UTC, shown as dates."""
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def to_seconds(value: Any) -> float | int | None:
    """Unix seconds from seconds, a ``datetime``, a ``date``, ``datetime64`` or an ISO string.

    A number is taken as seconds; one above 1e11 (a millisecond time, after the year 5138 in
    seconds) is refused with a hint rather than read as a date far in the future.

    Example:
        >>> to_seconds(datetime(2024, 1, 1, 1)), to_seconds("2024-01-01T00:00:00+01:00")
        (1704070800.0, 1704063600.0)
        >>> to_seconds(1_704_067_200_000)
        Traceback (most recent call last):
        ...
        ValueError: 1704067200000 looks like Unix milliseconds; ranges take seconds (1704067200.0)
    """
    if value is None:
        return None
    if isinstance(value, np.datetime64):
        return float(value.astype("datetime64[ms]").astype(np.int64)) / 1000.0
    if isinstance(value, datetime):
        when = value if value.tzinfo is not None else value.replace(tzinfo=UTC)
        return when.timestamp()
    if isinstance(value, date):
        return datetime(value.year, value.month, value.day, tzinfo=UTC).timestamp()
    if isinstance(value, str):
        text = value.strip()
        try:
            return to_seconds(datetime.fromisoformat(text.replace("Z", "+00:00")))
        except ValueError:
            pass
        try:
            return to_seconds(float(text))
        except ValueError:
            raise ValueError(f"{value!r} is neither Unix seconds nor an ISO 8601 date or time") from None
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"a time must be Unix seconds, a datetime or an ISO string, got {value!r}")
    if abs(value) > 1e11:
        raise ValueError(f"{value} looks like Unix milliseconds; ranges take seconds ({value / 1000})")
    return value


def as_time(column: pl.Series) -> pl.Series:
    """``column`` as ``TIME``: integer Unix milliseconds or any datetime (any unit; naive = UTC).

    Anything else (floats, strings, dates) raises ``TypeError``; nulls stay nulls. A ``TIME``
    column is returned as it is, and integers become ``TIME`` without a copy.

    Example:
        >>> as_time(pl.Series("t", [3_600_000])).dtype
        Datetime(time_unit='ms', time_zone='UTC')
        >>> naive_us = pl.Series("t", [3_600_000_000], dtype=pl.Datetime("us"))
        >>> as_time(naive_us).equals(as_time(pl.Series("t", [3_600_000])))
        True
        >>> as_time(pl.Series("t", [1.5]))
        Traceback (most recent call last):
        ...
        TypeError: t must be integer Unix milliseconds or a datetime, got Float64
    """
    dtype = column.dtype
    if dtype == TIME:
        return column
    if isinstance(dtype, pl.Datetime):
        if dtype.time_zone is None:
            column = column.dt.replace_time_zone("UTC")
        elif dtype.time_zone != "UTC":
            column = column.dt.convert_time_zone("UTC")
        return column.dt.cast_time_unit("ms")
    if dtype.is_integer() or dtype == pl.Null:
        return column.cast(pl.Int64).cast(TIME)
    raise TypeError(f"{column.name} must be integer Unix milliseconds or a datetime, got {dtype}")


def with_time(frame: pl.DataFrame, column: str = "open_time") -> pl.DataFrame:
    """``frame`` with ``column`` as ``TIME`` when it holds integer Unix ms or datetimes (:func:`as_time`).

    Meant for the entry points that take a user's frame: the frame itself is returned when the
    column already is ``TIME``, and also when it is missing or holds something else (floats,
    strings), for the validation that follows to refuse it with its own message.

    Example:
        >>> with_time(pl.DataFrame({"open_time": [0]})).schema["open_time"]
        Datetime(time_unit='ms', time_zone='UTC')
        >>> with_time(pl.DataFrame({"open_time": [0.5]})).schema["open_time"]
        Float64
    """
    dtype = frame.schema.get(column)
    if dtype is None or dtype == TIME or not (dtype.is_integer() or isinstance(dtype, pl.Datetime)):
        return frame
    return frame.with_columns(as_time(frame[column]))


def ms_array(column: pl.Series) -> np.ndarray:
    """Contiguous int64 Unix milliseconds of an integer or datetime column (:func:`as_time`).

    A single-chunk ``TIME`` or ``Int64`` column without nulls gives a read-only view of its buffer,
    no copy. Nulls must have been refused before.

    Example:
        >>> ms_array(time_series("t", np.array([5, 7]))).tolist()
        [5, 7]
    """
    if column.dtype != pl.Int64:
        column = as_time(column).to_physical()
    return np.ascontiguousarray(column.to_numpy(), dtype=np.int64)


def stored(frame: pl.DataFrame, column: str = "open_time") -> pl.DataFrame:
    """``frame`` with its ``TIME`` column as ``Int64`` Unix milliseconds, the Parquet store's form.

    Example:
        >>> stored(pl.DataFrame({"open_time": time_series("open_time", np.array([5]))})).dtypes
        [Int64]
    """
    return frame.with_columns(as_time(frame[column]).to_physical())


def time_series(name: str, ms: np.ndarray) -> pl.Series:
    """A ``TIME`` column from Unix milliseconds.

    Example:
        >>> time_series("fill_time", np.array([3_600_000])).to_list()[0].isoformat()
        '1970-01-01T01:00:00+00:00'
    """
    return pl.Series(name, ms, dtype=pl.Int64).cast(TIME)


def ms_columns(frame: pl.DataFrame) -> pl.DataFrame:
    """``frame`` with every datetime column as ``Int64`` Unix milliseconds (the API's JSON shapes).

    Example:
        >>> ms_columns(pl.DataFrame({"t": time_series("t", np.array([5]))})).to_dicts()
        [{'t': 5}]
    """
    return frame.with_columns(cs.datetime().dt.epoch("ms"))


def epoch_ms(value: datetime | int) -> int:
    """Unix milliseconds of one time read from a frame: a ``TIME`` value (naive = UTC) or ``Int64`` ms.

    Example:
        >>> epoch_ms(datetime(1970, 1, 1, 1, tzinfo=UTC)), epoch_ms(3_600_000)
        (3600000, 3600000)
    """
    if isinstance(value, datetime):
        when = value if value.tzinfo is not None else value.replace(tzinfo=UTC)
        return (when - _EPOCH) // timedelta(milliseconds=1)
    return int(value)
