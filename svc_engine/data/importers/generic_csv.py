"""Any CSV of candles, given which column is which and how its times are written.

Columns are found by name (case-insensitive, with common aliases such as ``timestamp`` or
``date``) unless ``mapping`` names them (``{"open_time": "Date", "volume": "Vol."}``). Times are
ISO dates or date-times (naive ones are UTC), or numbers in ``s``, ``ms``, ``us`` or ``ns``;
``auto`` tells numbers apart by magnitude. A file without a volume column gets volume 0.0, as
quote-only sources (FX, CFDs) have none.

Example:
    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "eurusd.csv"
    >>> _ = p.write_text("Date,Open,High,Low,Close\\n2024-01-02,1.10,1.11,1.09,1.105\\n")
    >>> read_csv_klines(p).row(0)
    (datetime.datetime(2024, 1, 2, 0, 0, tzinfo=zoneinfo.ZoneInfo(key='UTC')), 1.1, 1.11, 1.09, 1.105, 0.0)
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import polars as pl

from svc_engine.data.schema import COLUMNS, KlineValidationError, conform

TIME_UNITS: tuple[str, ...] = ("auto", "s", "ms", "us", "ns", "iso")
_ALIASES: dict[str, tuple[str, ...]] = {
    "open_time": ("open_time", "opentime", "open time", "timestamp", "time", "datetime", "date", "ts"),
    "open": ("open", "o"),
    "high": ("high", "h"),
    "low": ("low", "l"),
    "close": ("close", "c"),
    "volume": ("volume", "vol", "v"),
}
_TO_MS: dict[str, tuple[str, float]] = {
    "s": ("mul", 1000),
    "ms": ("mul", 1),
    "us": ("div", 1000),
    "ns": ("div", 1_000_000),
}


def read_csv_klines(
    path: str | Path,
    *,
    mapping: Mapping[str, str] | None = None,
    time_unit: str = "auto",
    separator: str = ",",
) -> pl.DataFrame:
    """A kline frame (sorted as in the file, not repaired) from a CSV with a column mapping.

    Example:
        >>> import tempfile, pathlib
        >>> p = pathlib.Path(tempfile.mkdtemp()) / "x.csv"
        >>> _ = p.write_text("t;o;h;l;c;v\\n1704067200;1;2;0.5;1.5;3\\n")
        >>> read_csv_klines(p, mapping={"open_time": "t"}, time_unit="s", separator=";")["open_time"][0]
        datetime.datetime(2024, 1, 1, 0, 0, tzinfo=zoneinfo.ZoneInfo(key='UTC'))
    """
    if time_unit not in TIME_UNITS:
        raise ValueError(f"unknown time unit {time_unit!r}; use one of {', '.join(TIME_UNITS)}")
    source = str(path)
    try:
        raw = pl.read_csv(path, separator=separator, infer_schema_length=10_000)
    except pl.exceptions.PolarsError as exc:
        raise KlineValidationError(source, None, "format", f"unreadable CSV: {exc}") from None
    names = _resolve(raw.columns, dict(mapping or {}), source)
    cols = [raw[names["open_time"]].alias("open_time")]
    cols += [raw[names[c]].alias(c) for c in COLUMNS[1:] if c in names]
    df = pl.DataFrame(cols)
    if "volume" not in names:
        df = df.with_columns(volume=pl.lit(0.0))
    try:
        df = df.with_columns(_open_time_ms(df["open_time"], time_unit))
    except (pl.exceptions.PolarsError, ValueError) as exc:
        detail = f"column {names['open_time']!r} is not a time in {time_unit}: {exc}"
        raise KlineValidationError(source, None, "format", detail) from None
    return conform(df.select(COLUMNS), source)


def _resolve(columns: list[str], mapping: dict[str, str], source: str) -> dict[str, str]:
    unknown = sorted(set(mapping) - set(COLUMNS))
    if unknown:
        raise ValueError(f"cannot map {unknown}: targets are {', '.join(COLUMNS)}")
    lowered = {c.strip().lower(): c for c in columns}
    names: dict[str, str] = {}
    for target in COLUMNS:
        if target in mapping:
            if mapping[target] not in columns:
                raise KlineValidationError(
                    source,
                    None,
                    "schema",
                    f"no column {mapping[target]!r} for {target}; the file has {columns}",
                )
            names[target] = mapping[target]
            continue
        found = next((lowered[a] for a in _ALIASES[target] if a in lowered), None)
        if found is not None:
            names[target] = found
        elif target != "volume":
            raise KlineValidationError(
                source,
                None,
                "schema",
                f"no column for {target}; the file has {columns} (map one with {target}=<column>)",
            )
    return names


def _open_time_ms(t: pl.Series, unit: str) -> pl.Series:
    if t.dtype == pl.String or unit == "iso":
        parsed = t.cast(pl.String).str.strip_chars().str.to_datetime(time_unit="ms", strict=True)
        if parsed.dtype.time_zone is None:  # type: ignore[union-attr]
            parsed = parsed.dt.replace_time_zone("UTC")
        return parsed.dt.convert_time_zone("UTC").dt.epoch("ms").alias("open_time")
    x = t.cast(pl.Float64)
    if unit == "auto":
        factor = (
            pl.when(x.abs() < 1e11)
            .then(1000.0)
            .when(x.abs() < 1e14)
            .then(1.0)
            .when(x.abs() < 1e17)
            .then(1e-3)
            .otherwise(1e-6)
        )
        return pl.select((x * factor).round().cast(pl.Int64).alias("open_time")).to_series()
    how, k = _TO_MS[unit]
    return ((x * k) if how == "mul" else (x / k)).round().cast(pl.Int64).alias("open_time")
