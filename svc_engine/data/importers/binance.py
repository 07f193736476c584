"""Binance kline dumps (data.binance.vision): the 12-column CSV, alone or in monthly/daily ZIPs.

Files may have a header row (dumps since 2022 have none, some tools add one); open times are in
milliseconds, or in microseconds as in the 2025+ spot dumps, told apart row by row by magnitude.

Example:
    >>> import io
    >>> rows = b"1704067200000000,1.0,2.0,0.5,1.5,10.0,1704067259999999,15.0,3,5.0,7.5,0\\n"
    >>> k = parse_kline_csv(rows, "BTCUSDT-1m-2024-01-01.csv")
    >>> k["open_time"].dt.epoch("ms").item(), k.row(0)[1:]
    (1704067200000, (1.0, 2.0, 0.5, 1.5, 10.0))
"""

from __future__ import annotations

import io
import re
import zipfile
from pathlib import Path

import polars as pl

from svc_engine.data.schema import COLUMNS, KlineValidationError, conform

_NAME = re.compile(r"^(?P<symbol>[A-Za-z0-9]+)-(?P<timeframe>\d+[mhdw])-\d{4}-\d{2}(?:-\d{2})?$")
_MICROSECONDS = 10**14  # ms timestamps stay below this until the year 5138; µs ones are far above
_WIDTH = 12


def dump_name(path: str | Path) -> tuple[str, str] | None:
    """``(SYMBOL, timeframe)`` from a dump's file name such as ``BTCUSDT-1m-2024-01.zip``, else None.

    Example:
        >>> dump_name("BTCUSDT-1h-2024-01-31.csv"), dump_name("prices.csv")
        (('BTCUSDT', '1h'), None)
    """
    match = _NAME.match(Path(path).name.split(".")[0])
    return (match["symbol"].upper(), match["timeframe"]) if match else None


def looks_like_dump(first_line: str) -> bool:
    """Whether a CSV's first line is a Binance kline row or the header of one.

    Example:
        >>> looks_like_dump("1502942400000,4261.48,4261.48,4261.48,4261.48,1.775,1502942459999,1,3,1,1,0")
        True
        >>> looks_like_dump("Date,Open,High,Low,Close")
        False
    """
    fields = first_line.strip().split(",")
    return len(fields) == _WIDTH and (fields[0].strip().isdigit() or fields[0].strip() == "open_time")


def parse_kline_csv(data: bytes, source: str) -> pl.DataFrame:
    """A kline frame from the bytes of one dump CSV; refuses anything but 12 columns.

    Example:
        >>> parse_kline_csv(b"a,b\\n", "x.csv")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        svc_engine.data.schema.KlineValidationError: x.csv: format: expected the 12 columns of a Binance ...
    """
    first = data.split(b"\n", 1)[0].decode("utf-8", "replace").strip()
    header = bool(first) and not first.split(",")[0].strip().isdigit()
    try:
        raw = pl.read_csv(io.BytesIO(data), has_header=header, infer_schema_length=0)
    except pl.exceptions.PolarsError as exc:
        raise KlineValidationError(source, None, "format", f"unreadable CSV: {exc}") from None
    if raw.width != _WIDTH:
        raise KlineValidationError(
            source, None, "format", f"expected the 12 columns of a Binance kline dump, found {raw.width}"
        )
    raw = raw.select(pl.all().str.strip_chars()).rename(dict(zip(raw.columns[:6], COLUMNS, strict=True)))
    try:
        t = raw["open_time"].cast(pl.Int64)
        df = raw.with_columns(open_time=pl.when(t >= _MICROSECONDS).then(t // 1000).otherwise(t))
        return conform(df.select(COLUMNS), source)
    except pl.exceptions.PolarsError as exc:
        raise KlineValidationError(source, None, "format", f"a column is not numeric: {exc}") from None


def read_dump(path: str | Path) -> list[tuple[str, pl.DataFrame]]:
    """``(source, frame)`` for a dump CSV, or for each CSV inside a dump ZIP.

    Example:
        >>> import tempfile, pathlib
        >>> p = pathlib.Path(tempfile.mkdtemp()) / "BTCUSDT-1m-2024-01-01.csv"
        >>> _ = p.write_text("1704067200000,1,2,0.5,1.5,10,1704067259999,15,3,5,7.5,0\\n")
        >>> [(s.rsplit("/", 1)[-1], f.height) for s, f in read_dump(p)]
        [('BTCUSDT-1m-2024-01-01.csv', 1)]
    """
    path = Path(path)
    if path.suffix.lower() != ".zip":
        return [(str(path), parse_kline_csv(path.read_bytes(), str(path)))]
    try:
        with zipfile.ZipFile(path) as archive:
            members = sorted(n for n in archive.namelist() if n.lower().endswith(".csv"))
            if not members:
                raise KlineValidationError(str(path), None, "format", "the ZIP holds no .csv file")
            return [(f"{path}:{n}", parse_kline_csv(archive.read(n), f"{path}:{n}")) for n in members]
    except zipfile.BadZipFile as exc:
        raise KlineValidationError(str(path), None, "format", f"not a ZIP file: {exc}") from None
