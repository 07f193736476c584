"""Importing candles into a :class:`~svc_engine.data.store.DataStore` from dumps, CSV and Parquet.

Every file is validated on its own (errors name it), the files of one series are merged (a later
file wins on a shared ``open_time``) and written once through ``DataStore.write_klines``, so
importing the same files twice changes nothing.

Example:
    >>> import tempfile, pathlib
    >>> from svc_engine.data.store import DataStore
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "BTCUSDT-1m-2024-01-01.csv").write_text(
    ...     "1704067200000,1,2,0.5,1.5,10,1704067259999,15,3,5,7.5,0\\n")
    >>> [r.rows_added for r in import_paths([d], store=DataStore(d / "store"))]
    [1]
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from svc_engine.data.importers.binance import dump_name, looks_like_dump, read_dump
from svc_engine.data.importers.generic_csv import TIME_UNITS, read_csv_klines
from svc_engine.data.importers.parquet import parquet_name, read_parquet_klines
from svc_engine.data.schema import TIMEFRAMES, validate_klines
from svc_engine.data.store import DataStore

FORMATS: tuple[str, ...] = ("auto", "binance", "csv", "parquet")
_SUFFIXES = (".csv", ".zip", ".parquet")
Progress = Callable[[int, int, str], None]

__all__ = [
    "FORMATS",
    "TIME_UNITS",
    "ImportResult",
    "MissingPathsError",
    "import_paths",
    "parquet_name",
    "read_csv_klines",
    "read_dump",
    "read_parquet_klines",
    "read_path",
]


@dataclass(frozen=True, slots=True)
class ImportResult:
    """What one series received from an import."""

    market: str
    symbol: str
    timeframe: str
    files: int
    rows_read: int
    rows_added: int


@dataclass(frozen=True, slots=True)
class _Piece:
    key: tuple[str, str, str]
    source: str
    frame: pl.DataFrame


def import_paths(
    paths: Iterable[str | Path],
    *,
    store: DataStore | None = None,
    format: str = "auto",
    market: str | None = None,
    symbol: str | None = None,
    timeframe: str | None = None,
    mapping: Mapping[str, str] | None = None,
    time_unit: str = "auto",
    progress: Progress | None = None,
) -> list[ImportResult]:
    """Import files (directories are searched for .csv, .zip and .parquet) and report each series.

    ``format="auto"`` picks by suffix and content: ZIPs and 12-column kline CSVs are Binance
    dumps, other CSVs generic, ``.parquet`` the schema. ``market``, ``symbol`` and ``timeframe``
    override what the file names say; Binance dumps default to market ``crypto``.
    ``progress(done, total, source)`` is called after each file is read and each series written.
    Paths that do not exist do not stop the others: those are imported, then
    :class:`MissingPathsError` names the missing ones (and what was imported).

    Example:
        >>> import_paths(["/nonexistent.csv"])
        Traceback (most recent call last):
        ...
        FileNotFoundError: no such file or directory: /nonexistent.csv
    """
    if format not in FORMATS:
        raise ValueError(f"unknown format {format!r}; use one of {', '.join(FORMATS)}")
    if timeframe is not None and timeframe not in TIMEFRAMES:
        raise ValueError(f"unknown timeframe {timeframe!r}; supported: {', '.join(TIMEFRAMES)}")
    store = store if store is not None else DataStore()
    paths = list(paths)
    missing = [Path(p) for p in paths if not Path(p).exists()]
    files = _expand([p for p in paths if Path(p).exists()] if missing else paths, missing)
    opts = {"market": market, "symbol": symbol, "timeframe": timeframe}
    pieces: list[_Piece] = []
    for i, path in enumerate(files, 1):
        pieces += _read(path, format, opts, mapping, time_unit)
        if progress:
            progress(i, len(files) + 1, str(path))
    results = [
        _write(store, key, [p for p in pieces if p.key == key])
        for key in dict.fromkeys(p.key for p in pieces)
    ]
    if progress:
        progress(len(files) + 1, len(files) + 1, "written")
    if missing:
        raise MissingPathsError(missing, results)
    return results


class MissingPathsError(FileNotFoundError):
    """Some paths of an import do not exist: the others were imported (``results``), the missing
    ones are listed (``missing``), and the import as a whole fails.

    Example:
        >>> str(MissingPathsError([Path("a.csv")], []))
        'no such file or directory: a.csv'
    """

    def __init__(self, missing: list[Path], results: list[ImportResult]) -> None:
        self.missing, self.results = missing, results
        text = f"no such file or directory: {', '.join(map(str, missing))}"
        if results:
            done = "; ".join(f"{r.market}/{r.symbol} {r.timeframe} {r.rows_added} added" for r in results)
            text += f" (the other paths were imported: {done})"
        super().__init__(text)


def read_path(
    path: str | Path,
    *,
    format: str = "auto",
    mapping: Mapping[str, str] | None = None,
    time_unit: str = "auto",
) -> list[tuple[str, pl.DataFrame, str | None]]:
    """Read one file as an import would, writing nothing: ``(source, frame, timeframe or None)``.

    Example:
        >>> read_path("/nonexistent.zip")
        Traceback (most recent call last):
        ...
        FileNotFoundError: no such file or directory: /nonexistent.zip
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no such file or directory: {path}")
    kind = _kind(path, format)
    if kind == "binance":
        tf = (dump_name(path) or (None, None))[1]
        return [(src, df, tf) for src, df in read_dump(path)]
    if kind == "parquet":
        return [(str(path), read_parquet_klines(path), parquet_name(path)[2])]
    tf = parquet_name(path.with_suffix(".parquet"))[2]
    return [(str(path), read_csv_klines(path, mapping=mapping, time_unit=time_unit), tf)]


def _expand(paths: Iterable[str | Path], missing: list[Path] | None = None) -> list[Path]:
    out: list[Path] = []
    paths = list(paths)
    for raw in paths:
        p = Path(raw)
        if p.is_dir():
            out += sorted(f for f in p.rglob("*") if f.suffix.lower() in _SUFFIXES and f.is_file())
        elif p.is_file():
            out.append(p)
        else:
            raise FileNotFoundError(f"no such file or directory: {p}")
    if not out:
        if missing:
            raise FileNotFoundError(f"no such file or directory: {', '.join(map(str, missing))}")
        raise FileNotFoundError(f"no .csv, .zip or .parquet file in {', '.join(map(str, paths))}")
    return out


def _kind(path: Path, format: str) -> str:
    if format != "auto":
        return format
    suffix = path.suffix.lower()
    if suffix == ".parquet":
        return "parquet"
    if suffix == ".zip":
        return "binance"
    with open(path, encoding="utf-8", errors="replace") as fh:
        return "binance" if looks_like_dump(fh.readline()) else "csv"


def _read(
    path: Path, format: str, opts: dict[str, str | None], mapping: Mapping[str, str] | None, time_unit: str
) -> list[_Piece]:
    kind = _kind(path, format)
    market: str | None = None
    if kind == "binance":
        market, (sym, tf) = "crypto", dump_name(path) or (None, None)
    elif kind == "parquet":
        market, sym, tf = parquet_name(path)
    else:
        _, sym, tf = parquet_name(path.with_suffix(".parquet"))
        sym = sym if tf else None
    key = _key(path, opts, market, sym, tf)
    return [
        _Piece(key, src, df)
        for src, df, _ in read_path(path, format=kind, mapping=mapping, time_unit=time_unit)
    ]


def _key(
    path: Path, opts: dict[str, str | None], market: str | None, symbol: str | None, timeframe: str | None
) -> tuple[str, str, str]:
    chosen = {
        "market": opts["market"] or market,
        "symbol": opts["symbol"] or symbol,
        "timeframe": opts["timeframe"] or timeframe,
    }
    missing = [k for k, v in chosen.items() if not v]
    if missing:
        raise ValueError(
            f"{path}: cannot tell the {' and '.join(missing)} from the file name; "
            f"give {' '.join('--' + m for m in missing)}"
        )
    return chosen["market"], chosen["symbol"].upper(), chosen["timeframe"]  # type: ignore[union-attr,return-value]


def _write(store: DataStore, key: tuple[str, str, str], pieces: list[_Piece]) -> ImportResult:
    market, symbol, timeframe = key
    for piece in pieces:
        validate_klines(piece.frame, source=piece.source, timeframe=timeframe)
    merged = (
        pl.concat([p.frame for p in pieces])
        .reverse()
        .unique("open_time", keep="first", maintain_order=True)
        .sort("open_time")
    )
    source = pieces[0].source if len(pieces) == 1 else f"{len(pieces)} files of {market}/{symbol} {timeframe}"
    added = store.write_klines(market, symbol, timeframe, merged, source=source)
    return ImportResult(market, symbol, timeframe, len(pieces), sum(p.frame.height for p in pieces), added)
