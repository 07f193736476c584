"""The Parquet kline store: where a series lives on disk and how it is written safely.

Layout: ``<root>/<market>/<SYMBOL>/<timeframe>.parquet``, one file per instrument and timeframe,
readable by polars, pyarrow and DuckDB alike. Writes are atomic (temporary file + rename) and
serialised per file, so a crash or a concurrent import never leaves a half-written series.

Example:
    >>> import tempfile, polars as pl
    >>> store = DataStore(tempfile.mkdtemp())
    >>> df = pl.DataFrame({"open_time": [0, 60_000], "open": [1.0, 1.1], "high": [1.2, 1.2],
    ...                    "low": [0.9, 1.0], "close": [1.1, 1.15], "volume": [5.0, 6.0]})
    >>> store.write_klines("crypto", "BTCUSDT", "1m", df)
    2
    >>> store.write_klines("crypto", "BTCUSDT", "1m", df)  # importing twice changes nothing
    0
"""

from __future__ import annotations

import fcntl
import os
import re
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import polars as pl

from svc_engine.data.schema import TIMEFRAMES, conform, validate_klines

_NAME = re.compile(r"^[A-Za-z0-9_.\-]{1,64}$")
_ROW_GROUP = 65_536  # ~45 days of 1m candles: a range read skips the row groups it does not need


class DataNotFoundError(LookupError):
    """No stored series matches a request; the message names what exists instead.

    Example:
        >>> isinstance(DataNotFoundError("no market holds symbol 'XYZ'"), LookupError)
        True
    """


def default_data_dir() -> Path:
    """The data directory: ``$DATA_DIR``, else ``var/data`` of a source checkout, else ``~/.svc/data``.

    Example:
        >>> isinstance(default_data_dir(), Path)
        True
    """
    env = os.environ.get("DATA_DIR")
    if env:
        return Path(env)
    checkout = Path(__file__).resolve().parents[2]
    if (checkout / "pyproject.toml").exists():
        return checkout / "var" / "data"
    return Path.home() / ".svc" / "data"


def _check_name(kind: str, value: str) -> str:
    if not _NAME.match(value):
        raise ValueError(f"invalid {kind} {value!r}: use letters, digits, '_', '-' or '.'")
    return value


class DataStore:
    """A kline store rooted at one directory.

    Example:
        >>> DataStore("/tmp/x").path("crypto", "btcusdt", "1h").as_posix()
        '/tmp/x/crypto/BTCUSDT/1h.parquet'
    """

    def __init__(self, root: str | os.PathLike[str] | None = None) -> None:
        self.root = Path(root) if root is not None else default_data_dir()

    def __repr__(self) -> str:
        return f"DataStore({str(self.root)!r})"

    def path(self, market: str, symbol: str, timeframe: str) -> Path:
        """Where the series of one instrument and timeframe lives (whether it exists or not)."""
        if timeframe not in TIMEFRAMES:
            raise ValueError(f"unknown timeframe {timeframe!r}; supported: {', '.join(TIMEFRAMES)}")
        return (self.root / _check_name("market", market) / _check_name("symbol", symbol.upper())
                / f"{timeframe}.parquet")

    def markets(self) -> list[str]:
        """Markets that hold at least one stored series, sorted.

        Example:
            >>> DataStore("/nonexistent").markets()
            []
        """
        return sorted({p.parent.parent.name for p in self._series_files()})

    def markets_of(self, symbol: str) -> list[str]:
        """Markets that hold a stored series of ``symbol`` (any timeframe), sorted.

        Example:
            >>> DataStore("/nonexistent").markets_of("BTCUSDT")
            []
        """
        sym = symbol.upper()
        return sorted({p.parent.parent.name for p in self._series_files() if p.parent.name == sym})

    def timeframes(self, market: str, symbol: str) -> list[str]:
        """Stored timeframes of one instrument, finest first.

        Example:
            >>> DataStore("/nonexistent").timeframes("crypto", "BTCUSDT")
            []
        """
        folder = self.root / _check_name("market", market) / _check_name("symbol", symbol.upper())
        return [tf for tf in TIMEFRAMES if (folder / f"{tf}.parquet").is_file()]

    def find_market(self, symbol: str) -> str:
        """The one market that holds ``symbol``; :class:`DataNotFoundError` if none or several do.

        Example:
            >>> DataStore("/nonexistent").find_market("BTCUSDT")  # doctest: +ELLIPSIS
            Traceback (most recent call last):
            ...
            svc_engine.data.store.DataNotFoundError: no market holds symbol 'BTCUSDT' in ... (markets: none)
        """
        found = self.markets_of(symbol)
        if len(found) == 1:
            return found[0]
        if not found:
            known = ", ".join(self.markets()) or "none"
            raise DataNotFoundError(
                f"no market holds symbol {symbol.upper()!r} in {self.root} (markets: {known})")
        raise DataNotFoundError(f"symbol {symbol.upper()!r} is in several markets ({', '.join(found)}); "
                                "pass market=")

    def _series_files(self) -> list[Path]:
        if not self.root.is_dir():
            return []
        return [p for p in self.root.glob("*/*/*.parquet") if p.stem in TIMEFRAMES and p.is_file()]

    @contextmanager
    def _locked(self, path: Path) -> Iterator[None]:
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path.parent / f".{path.name}.lock", "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

    def write_klines(
        self, market: str, symbol: str, timeframe: str, df: pl.DataFrame, *, replace: bool = False,
        source: str | None = None,
    ) -> int:
        """Validate ``df`` and merge it into the stored series; return how many candles were added.

        ``df`` itself must be a valid series (errors name ``source``, default the target file): it
        is refused, never repaired. Rows whose ``open_time`` is already stored are taken from ``df``
        (the newer import wins); the merged series is validated before it replaces the file.
        ``replace=True`` drops what was stored first.
        """
        path = self.path(market, symbol, timeframe)
        new = conform(df, source or str(path))
        validate_klines(new, source=source or str(path), timeframe=timeframe)
        with self._locked(path):
            old = None if replace or not path.exists() else pl.read_parquet(path)
            merged = new if old is None else (
                pl.concat([new, old]).unique("open_time", keep="first", maintain_order=True).sort("open_time")
            )
            validate_klines(merged, source=str(path), timeframe=timeframe)
            if old is not None and old.height == merged.height and old.equals(merged):
                return 0
            _atomic_write(merged, path)
        return merged.height - (0 if old is None else old.height)


def _atomic_write(df: pl.DataFrame, path: Path) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.stem}.", suffix=".tmp")
    os.close(fd)
    try:
        df.write_parquet(tmp, compression="zstd", statistics=True, row_group_size=_ROW_GROUP)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
