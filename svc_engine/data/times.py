"""Times as users write them: Unix seconds, ``datetime``/``date`` objects and ISO strings.

Ranges go in as Unix seconds (``start_ts``/``end_ts``); every entry point also takes a
``datetime`` (naive = UTC), a ``date`` (its midnight UTC), a NumPy ``datetime64`` or an ISO 8601
string (``"2024-01-31"``, ``"2024-01-31T12:00"``, ``"2024-01-31T12:00:00+02:00"``). Times come out
as Unix milliseconds in ``Int64`` columns whose names end in ``_time``, or as ``Datetime("ms",
"UTC")`` columns.

Example:
    >>> to_seconds("2024-01-01"), to_seconds(1_704_067_200), to_seconds(None)
    (1704067200.0, 1704067200, None)
"""

from __future__ import annotations

import numbers
from datetime import UTC, date, datetime
from typing import Any

import numpy as np


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
