"""Times as users write them: Unix seconds, ``datetime``/``date`` objects and ISO strings.

Ranges go in as Unix seconds (``start_ts``/``end_ts``); every entry point also takes a
``datetime`` (naive = UTC), a ``date`` (its midnight UTC), a NumPy ``datetime64`` or an ISO 8601
string (``"2024-01-31"``, ``"2024-01-31T12:00"``, ``"2024-01-31T12:00:00+02:00"``).

Times come out with their unit in the dtype: the times of a run's results (trades, positions,
equity, walk-forward windows; the trend detector's signals, scans and sentiment scores) are
``Datetime("ms", "UTC")`` columns (``TIME``). Frames aligned candle by candle with the candles keep
the candles' own ``open_time``, ``Int64`` Unix milliseconds as the data store holds them (klines,
signal frames, ``break_events``), so that they line up with the arrays the kernels read. The API's
JSON shapes carry Unix milliseconds: ``ms_columns`` turns a result frame back, ``epoch_ms`` one value.

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
