"""The kline schema, the timeframes, and the validation rules of a candle series.

A series is refused, never repaired: every rule of `../shared/design/engine-semantics.md` section 1 names the
first offending row. Gaps and candles off the timeframe grid are allowed and reported.
``open_time`` is ``Datetime("ms", "UTC")`` (``times.TIME``) in every frame; :func:`conform` takes
integer Unix milliseconds or any datetime column. The Parquet store keeps ``Int64`` Unix
milliseconds on disk (``STORED_SCHEMA``).

Example:
    >>> import polars as pl
    >>> df = pl.DataFrame({"open_time": [0, 60_000], "open": [1.0, 1.1], "high": [1.2, 1.2],
    ...                    "low": [0.9, 1.0], "close": [1.1, 1.15], "volume": [5.0, 6.0]})
    >>> validate_klines(df, timeframe="1m").gaps
    0
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import polars as pl
from numba import njit

from svc_engine.data.times import TIME, as_time, ms_array

PRICE_COLUMNS: tuple[str, ...] = ("open", "high", "low", "close")
COLUMNS: tuple[str, ...] = ("open_time", *PRICE_COLUMNS, "volume")
SCHEMA: dict[str, pl.DataType] = {
    "open_time": TIME,
    **{c: pl.Float64() for c in PRICE_COLUMNS},
    "volume": pl.Float64(),
}
"""The kline frame: ``open_time`` as ``Datetime("ms", "UTC")``, prices and volume as ``Float64``."""
STORED_SCHEMA: dict[str, pl.DataType] = {**SCHEMA, "open_time": pl.Int64()}
"""The kline columns on disk: ``open_time`` as ``Int64`` Unix milliseconds, UTC."""

_MINUTE = 60_000
TIMEFRAMES: dict[str, int] = {
    "1m": _MINUTE,
    "3m": 3 * _MINUTE,
    "5m": 5 * _MINUTE,
    "15m": 15 * _MINUTE,
    "30m": 30 * _MINUTE,
    "1h": 60 * _MINUTE,
    "2h": 120 * _MINUTE,
    "4h": 240 * _MINUTE,
    "6h": 360 * _MINUTE,
    "8h": 480 * _MINUTE,
    "12h": 720 * _MINUTE,
    "1d": 1440 * _MINUTE,
    "3d": 3 * 1440 * _MINUTE,
    "1w": 7 * 1440 * _MINUTE,
}
"""Supported timeframes and their length in milliseconds, finest first."""

_MONDAY_MS = 4 * 1440 * _MINUTE  # 1970-01-01 was a Thursday; Binance weeks open on Monday 00:00 UTC


def grid_offset_ms(timeframe: str) -> int:
    """Where the UTC grid of a timeframe starts, in ms after the epoch (buckets open at offset + k * length).

    Weeks open on Monday 00:00 UTC as on Binance; every other timeframe, ``3d`` included, is
    aligned to the epoch.

    Example:
        >>> grid_offset_ms("1w"), grid_offset_ms("3d")
        (345600000, 0)
    """
    timeframe_ms(timeframe)
    return _MONDAY_MS if timeframe == "1w" else 0


class KlineValidationError(ValueError):
    """A candle series breaks a rule of the schema; names the source, the row and the rule.

    Example:
        >>> err = KlineValidationError("a.parquet", 3, "high_below_open_close", "high < max(open, close)")
        >>> str(err)
        'a.parquet: row 3: high_below_open_close: high < max(open, close)'
    """

    def __init__(self, source: str, row: int | None, rule: str, detail: str) -> None:
        # One line: library messages (polars hints) add lines that bury the rule in a terminal.
        detail = (str(detail).strip().splitlines() or [""])[0]
        self.source, self.row, self.rule, self.detail = source, row, rule, detail
        where = f"row {row}: " if row is not None else ""
        super().__init__(f"{source}: {where}{rule}: {detail}")


@dataclass(frozen=True, slots=True)
class ValidationReport:
    """What a valid series looks like: its size and the gaps it is allowed to have.

    ``gaps`` counts places where two candles are more than one timeframe apart, ``missing_candles``
    the whole candles absent there, ``off_grid`` candles not on the timeframe's UTC grid, and
    ``max_gap_ms`` the largest such distance (without a timeframe: the largest step).
    """

    rows: int
    gaps: int
    missing_candles: int
    off_grid: int
    max_gap_ms: int


def timeframe_ms(timeframe: str) -> int:
    """Length of a timeframe in milliseconds.

    Example:
        >>> timeframe_ms("4h")
        14400000
    """
    try:
        return TIMEFRAMES[timeframe]
    except KeyError:
        known = ", ".join(TIMEFRAMES)
        raise ValueError(f"unknown timeframe {timeframe!r}; supported: {known}") from None


def conform(df: pl.DataFrame, source: str = "<frame>") -> pl.DataFrame:
    """Select the schema's columns in order with the schema's types, or refuse the frame.

    ``open_time`` may be integer Unix milliseconds or any datetime column (naive = UTC); it
    becomes ``Datetime("ms", "UTC")``. Floats, strings and other types are refused.

    Example:
        >>> df = conform(pl.DataFrame({"open_time": [0], "open": [1], "high": [1], "low": [1],
        ...                            "close": [1], "volume": [0]}))
        >>> df.dtypes[:2]
        [Datetime(time_unit='ms', time_zone='UTC'), Float64]
    """
    missing = [c for c in COLUMNS if c not in df.columns]
    if missing:
        raise KlineValidationError(source, None, "schema", f"missing columns {missing}")
    try:
        rest = [pl.col(c).cast(t, strict=True) for c, t in SCHEMA.items() if c != "open_time"]
        return df.select(as_time(df["open_time"]), *rest)
    except (pl.exceptions.PolarsError, TypeError) as exc:
        detail = f"columns do not cast to the schema: {exc}"
        raise KlineValidationError(source, None, "schema", detail) from None


def _first(mask: np.ndarray) -> int | None:
    hits = np.flatnonzero(mask)
    return int(hits[0]) if hits.size else None


PRICE_RULES: tuple[tuple[str, str], ...] = (
    ("nonfinite_price", "a price is NaN, infinite or missing"),
    ("nonpositive_price", "a price is zero or negative"),
    ("high_below_open_close", "high < max(open, close)"),
    ("low_above_open_close", "low > min(open, close)"),
    ("nonfinite_volume", "volume is NaN, infinite or missing"),
    ("negative_volume", "volume is negative"),
)
"""The rules of a candle's prices and volume, in the order a row is checked (``_first_bad_nb``)."""


@njit(cache=True, nogil=True)
def _first_bad_nb(
    o: np.ndarray, h: np.ndarray, lo: np.ndarray, c: np.ndarray, v: np.ndarray
) -> tuple[int, int]:
    """The earliest row that breaks a rule of ``PRICE_RULES`` and the first rule it breaks there;
    ``(-1, -1)`` when every row holds. One pass, no temporary arrays: a live append of one candle
    costs a call, and an import of millions a loop at memory speed."""
    for i in range(o.size):
        a, b, x, y = o[i], h[i], lo[i], c[i]
        if not (np.isfinite(a) and np.isfinite(b) and np.isfinite(x) and np.isfinite(y)):
            return i, 0
        if a <= 0 or b <= 0 or x <= 0 or y <= 0:
            return i, 1
        if b < max(a, y):
            return i, 2
        if x > min(a, y):
            return i, 3
        if not np.isfinite(v[i]):
            return i, 4
        if v[i] < 0:
            return i, 5
    return -1, -1


def validate_klines(
    df: pl.DataFrame, *, source: str = "<frame>", timeframe: str | None = None
) -> ValidationReport:
    """Check every rule of a candle series and report its gaps; raise on the first broken rule.

    Rules, in order: schema, empty, missing, unsorted or duplicated times; then, on the earliest
    row that breaks any of them, the first of: non-finite or non-positive price,
    ``high < max(open, close)``, ``low > min(open, close)``, non-finite or negative volume.
    With ``timeframe`` the report counts gaps, missing candles and candles off the UTC grid.

    Example:
        >>> bad = pl.DataFrame({"open_time": [0, 0], "open": [1.0] * 2, "high": [1.0] * 2,
        ...                     "low": [1.0] * 2, "close": [1.0] * 2, "volume": [0.0] * 2})
        >>> validate_klines(bad)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        svc_engine.data.schema.KlineValidationError: <frame>: row 1: duplicate_time: ...
    """
    df = conform(df, source)
    if df.height == 0:
        raise KlineValidationError(source, None, "empty", "the series has no candles")
    if df["open_time"].null_count():
        raise KlineValidationError(
            source, _first(df["open_time"].is_null().to_numpy()), "null_time", "open_time is missing"
        )
    t = ms_array(df["open_time"])
    o, h, lo, c, v = (df[col].to_numpy(allow_copy=True) for col in (*PRICE_COLUMNS, "volume"))
    return validate_arrays(t, o, h, lo, c, v, source=source, timeframe=timeframe)


def validate_arrays(
    t: np.ndarray,
    o: np.ndarray,
    h: np.ndarray,
    lo: np.ndarray,
    c: np.ndarray,
    v: np.ndarray,
    *,
    source: str = "<arrays>",
    timeframe: str | None = None,
) -> ValidationReport:
    """:func:`validate_klines` on columns already in NumPy (int64 ms times, float64 values), without
    the cost of a frame: the same rules in the same order (live appends of one candle use it).

    Example:
        >>> one = np.array([1.0])
        >>> validate_arrays(np.array([0]), one, one, one, one, -one)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        svc_engine.data.schema.KlineValidationError: <arrays>: row 0: negative_volume: volume is negative
    """
    if t.size == 0:
        raise KlineValidationError(source, None, "empty", "the series has no candles")
    step = np.diff(t)
    if step.size and not (step > 0).all():
        for rule, detail, bad in (
            ("unsorted_time", "open_time is before the previous row", step < 0),
            ("duplicate_time", "open_time equals the previous row", step == 0),
        ):
            row = _first(bad)
            if row is not None:
                raise KlineValidationError(source, row + 1, rule, detail)
    # The earliest bad row is reported, and on it the first rule it breaks, so a fix can go row by row.
    row, rule = _first_bad_nb(*(np.ascontiguousarray(a, dtype=np.float64) for a in (o, h, lo, c, v)))
    if row >= 0:
        raise KlineValidationError(source, row, *PRICE_RULES[rule])
    return _spacing(t, step, timeframe)


def _spacing(t: np.ndarray, step: np.ndarray, timeframe: str | None) -> ValidationReport:
    if timeframe is None or timeframe not in TIMEFRAMES:
        return ValidationReport(len(t), 0, 0, 0, int(step.max()) if step.size else 0)
    tf = TIMEFRAMES[timeframe]
    gap = step > tf
    missing = int(((step[gap] // tf) - 1).sum()) if gap.any() else 0
    return ValidationReport(
        rows=len(t),
        gaps=int(gap.sum()),
        missing_candles=missing,
        off_grid=int(((t - grid_offset_ms(timeframe)) % tf != 0).sum()),
        max_gap_ms=int(step[gap].max()) if gap.any() else 0,
    )
