"""The Parquet kline store: where a series lives on disk and how it is written safely.

Layout: ``<root>/<market>/<SYMBOL>/<timeframe>.parquet``, one file per instrument and timeframe,
readable by polars, pyarrow and DuckDB alike, on disk or under ``s3://bucket/prefix``. Writes are
atomic (temporary file + rename, or one PUT) and serialised per file on disk, so a crash or a
concurrent import never leaves a half-written series. Files hold ``open_time`` as ``Int64`` Unix
milliseconds, UTC (``schema.STORED_SCHEMA``); frames in memory carry ``Datetime("ms", "UTC")``.
Live candles are appended to a series' hot tail (:mod:`svc_engine.data.tail`) with
:meth:`DataStore.append_klines`, read together with the history by every reader at once, and merged
into the Parquet file by :meth:`DataStore.compact`.

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
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

from svc_engine.data import tail
from svc_engine.data.files import ROW_GROUP, is_series_key, write_atomically
from svc_engine.data.remote import S3Location
from svc_engine.data.schema import TIMEFRAMES, conform, validate_klines
from svc_engine.data.times import stored

_NAME = re.compile(r"^[A-Za-z0-9_.\-]{1,64}$")


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
    """A kline store rooted at a directory, or at ``s3://bucket/prefix`` on S3-compatible storage.

    Series are addressed by their key, ``<market>/<SYMBOL>/<timeframe>.parquet`` relative to the
    root (the catalog's ``dataset_key``). ``$DATA_DIR`` may be an ``s3://`` URL as well.

    Example:
        >>> DataStore("/tmp/x").path("crypto", "btcusdt", "1h").as_posix()
        '/tmp/x/crypto/BTCUSDT/1h.parquet'
        >>> DataStore("s3://klines/prod").path("crypto", "btcusdt", "1h")
        's3://klines/prod/crypto/BTCUSDT/1h.parquet'
    """

    def __init__(
        self, root: str | os.PathLike[str] | None = None, *, tail_dir: str | os.PathLike[str] | None = None
    ) -> None:
        raw = root if root is not None else os.environ.get("DATA_DIR") or None
        self.remote: S3Location | None = None
        self.root: Path | str
        if isinstance(raw, str) and raw.startswith("s3://"):
            self.remote = S3Location.from_url(raw)
            self.root = self.remote.url()
        else:
            self.root = Path(raw) if raw is not None else default_data_dir()
        # An S3 store keeps its tails on local disk (one writer host per series, as for its history).
        chosen = tail_dir if tail_dir is not None else os.environ.get("SVC_TAIL_DIR") or None
        if chosen is not None or self.remote is None:
            self.tail_root = Path(chosen if chosen is not None else self.root)
        else:
            self.tail_root = default_data_dir() / "s3-tails" / self.remote.bucket / self.remote.prefix
        self._tail_text = str(self.tail_root)

    def __repr__(self) -> str:
        return f"DataStore({str(self.root)!r})"

    def key(self, market: str, symbol: str, timeframe: str) -> str:
        """The key of a series relative to the root (its catalog ``dataset_key``).

        Example:
            >>> DataStore("/tmp/x").key("crypto", "ethusdt", "4h")
            'crypto/ETHUSDT/4h.parquet'
        """
        if timeframe not in TIMEFRAMES:
            raise ValueError(f"unknown timeframe {timeframe!r}; supported: {', '.join(TIMEFRAMES)}")
        return f"{_check_name('market', market)}/{_check_name('symbol', symbol.upper())}/{timeframe}.parquet"

    def path(self, market: str, symbol: str, timeframe: str) -> Path | str:
        """Where a series lives, whether it exists or not: a ``Path``, or an ``s3://`` URL on S3."""
        return self.location(self.key(market, symbol, timeframe))

    def location(self, key: str) -> Path | str:
        """The file (``Path``) or ``s3://`` URL of a key.

        Example:
            >>> DataStore("/tmp/x").location("crypto/BTCUSDT/1m.parquet").as_posix()
            '/tmp/x/crypto/BTCUSDT/1m.parquet'
        """
        return self.remote.url(key) if self.remote else Path(self.root) / key

    def markets(self) -> list[str]:
        """Markets that hold at least one stored series, sorted.

        Example:
            >>> DataStore("/nonexistent").markets()
            []
        """
        return sorted({k.split("/")[0] for k in self.series_keys()})

    def markets_of(self, symbol: str) -> list[str]:
        """Markets that hold a stored series of ``symbol`` (any timeframe), sorted.

        Example:
            >>> DataStore("/nonexistent").markets_of("BTCUSDT")
            []
        """
        sym = symbol.upper()
        return sorted({k.split("/")[0] for k in self.series_keys() if k.split("/")[1] == sym})

    def timeframes(self, market: str, symbol: str) -> list[str]:
        """Stored timeframes of one instrument, finest first.

        Example:
            >>> DataStore("/nonexistent").timeframes("crypto", "BTCUSDT")
            []
        """
        if self.remote:
            folder = self.key(market, symbol, "1m").rsplit("/", 1)[0] + "/"
            held = {
                k[len(folder) :].removesuffix(".parquet") for k in self.series_keys() if k.startswith(folder)
            }
            return [tf for tf in TIMEFRAMES if tf in held]
        return [tf for tf in TIMEFRAMES if Path(self.path(market, symbol, tf)).is_file()]

    def find_market(self, symbol: str) -> str:
        """The one market that holds ``symbol``; :class:`DataNotFoundError` if none or several do.

        Example:
            >>> DataStore("/nonexistent").find_market("BTCUSDT")  # doctest: +ELLIPSIS
            Traceback (most recent call last):
            ...
            svc_engine.data.store.DataNotFoundError: no market holds symbol 'BTCUSDT' in ... (markets: none)
        """
        return pick_market(symbol, self.markets_of(symbol), self.markets, self.root)

    def series_keys(self) -> list[str]:
        """Keys of every stored series (``<market>/<SYMBOL>/<tf>.parquet``), sorted.

        Example:
            >>> DataStore("/nonexistent").series_keys()
            []
        """
        if self.remote:
            return [k for k in self.remote.list_keys() if is_series_key(k)]
        root = Path(self.root)
        if not root.is_dir():
            return []
        return sorted(
            p.relative_to(root).as_posix()
            for p in root.glob("*/*/*.parquet")
            if p.stem in TIMEFRAMES and p.is_file()
        )

    # I/O by key, shared by the loader, the resample cache and the catalog (local or S3).

    def _exists(self, key: str) -> bool:
        return self._stat(key) is not None if self.remote else os.path.isfile(f"{self.root}/{key}")

    def _stat(self, key: str) -> tuple[int, int] | None:
        if self.remote:
            return self.remote.stat(key)
        path = Path(self.root) / key
        if not path.is_file():
            return None
        st = path.stat()
        return st.st_mtime_ns, st.st_size

    def tail_path(self, key: str) -> Path:
        """The hot tail file of a series key (:mod:`svc_engine.data.tail`), local even on S3.

        Example:
            >>> DataStore("/tmp/x").tail_path("crypto/BTCUSDT/1m.parquet").as_posix()
            '/tmp/x/crypto/BTCUSDT/.tail/1m.bin'
        """
        folder, name = key.rsplit("/", 1)
        return Path(f"{self._tail_text}/{folder}/.tail/{name.removesuffix('.parquet')}.bin")

    def _history(self, key: str) -> pl.LazyFrame:
        return self.remote.scan(key) if self.remote else pl.scan_parquet(Path(self.root) / key)

    def _scan(self, key: str) -> pl.LazyFrame:
        # The tail is read first, the history when the scan runs: a compaction in between moved the
        # tail's candles into the history, and taking the history only before the tail's first candle
        # counts each candle once whichever file the reader saw (tail.py).
        history = self._history(key)
        return tail.after(history, self.tail_path(key)) if is_series_key(key) else history

    def _read(self, key: str) -> pl.DataFrame:
        return self._scan(key).collect()

    def _tail_stat(self, key: str) -> tuple[int, int]:
        """``(mtime_ns, size)`` of a series' tail, zeros without one: part of what a cache is made from."""
        return tail.stat(self.tail_path(key))

    def _schema_metadata(self, key: str) -> dict[bytes, bytes]:
        if self.remote:
            return self.remote.schema_metadata(key)
        return dict(pq.read_schema(Path(self.root) / key).metadata or {})

    def _write(self, key: str, table: pa.Table) -> None:
        if self.remote:
            self.remote.write(key, table, ROW_GROUP)
        else:
            write_atomically(table, Path(self.root) / key)

    @contextmanager
    def _locked(self, key: str) -> Iterator[None]:
        if self.remote:  # S3 has no locks: one writer per series at a time (see remote.py)
            yield
            return
        folder, name = os.path.split(os.path.join(self.root, key))
        lock = os.path.join(folder, f".{name}.lock")
        try:
            fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
        except FileNotFoundError:
            os.makedirs(folder, exist_ok=True)
            fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)  # released by the close, also when the process dies
            yield
        finally:
            os.close(fd)

    def _duckdb(self) -> Any:
        if self.remote:
            return self.remote.duckdb()
        import duckdb  # imported here: loading candles must not pay for DuckDB

        return duckdb.connect()

    def write_klines(
        self,
        market: str,
        symbol: str,
        timeframe: str,
        df: pl.DataFrame,
        *,
        replace: bool = False,
        source: str | None = None,
    ) -> int:
        """Validate ``df`` and merge it into the stored series; return how many candles were added.

        ``df`` itself must be a valid series (errors name ``source``, default the target file): it
        is refused, never repaired. Rows whose ``open_time`` is already stored are taken from ``df``
        (the newer import wins); the merged series is validated before it replaces the file.
        ``replace=True`` drops what was stored first.
        """
        key = self.key(market, symbol, timeframe)
        where = str(self.location(key))
        new = conform(df, source or where)
        validate_klines(new, source=source or where, timeframe=timeframe)
        with self._locked(key):
            old = None if replace or self._stat(key) is None else conform(self._read(key), where)
            merged = (
                new
                if old is None
                else (
                    pl.concat([new, old])
                    .unique("open_time", keep="first", maintain_order=True)
                    .sort("open_time")
                )
            )
            validate_klines(merged, source=where, timeframe=timeframe)
            if old is not None and old.height == merged.height and old.equals(merged):
                return 0
            self._write(key, stored(merged).to_arrow())
            tail.clear(self.tail_path(key), upto_ms=2**63 - 1)  # the history holds the tail's candles now
        return merged.height - (0 if old is None else old.height)

    def append_klines(
        self, market: str, symbol: str, timeframe: str, df: pl.DataFrame, *, source: str | None = None
    ) -> int:
        """Append closed candles to a series' hot tail; return how many were new.

        The candles pass the rules of :meth:`write_klines`. A candle already stored with the same
        values changes nothing (appends are idempotent); one stored with other values is refused
        with :class:`~svc_engine.data.schema.KlineValidationError` (rule ``conflicting_candle``,
        both values named, and logged) before anything is written. Only candles newer than the
        newest stored one are appended: an older missing candle is a gap, filled only by an import.
        A series that does not exist yet is written as a Parquet file. Readers in this and other
        processes see the candles as soon as this returns.

        Example:
            >>> import tempfile
            >>> store = DataStore(tempfile.mkdtemp())
            >>> one = pl.DataFrame({"open_time": [0], "open": [1.0], "high": [1.0], "low": [1.0],
            ...                     "close": [1.0], "volume": [1.0]})
            >>> store.write_klines("crypto", "BTCUSDT", "1m", one)
            1
            >>> nxt = one.with_columns(open_time=pl.lit(60_000))
            >>> store.append_klines("crypto", "BTCUSDT", "1m", nxt)
            1
            >>> store.append_klines("crypto", "BTCUSDT", "1m", nxt)  # a repeat changes nothing
            0
            >>> store.compact("crypto", "BTCUSDT", "1m"), store._read("crypto/BTCUSDT/1m.parquet").height
            (1, 2)
        """
        from svc_engine.data.appends import append_series

        key = self.key(market, symbol, timeframe)
        with self._locked(key):
            if not self._exists(key):
                return self.write_klines(market, symbol, timeframe, df, source=source)
            return append_series(self, key, df, source=source or str(self.tail_path(key)))

    def compact(self, market: str, symbol: str, timeframe: str) -> int:
        """Merge a series' hot tail into its Parquet file; return how many candles moved.

        Readers are never blocked and never see a candle twice or not at all (see
        :mod:`svc_engine.data.tail`); a crash at any point loses nothing that was appended.

        Example (and :meth:`append_klines`'s):
            >>> import tempfile
            >>> DataStore(tempfile.mkdtemp()).compact("crypto", "BTCUSDT", "1m")  # no tail: nothing moves
            0
        """
        from svc_engine.data.appends import compact_series

        key = self.key(market, symbol, timeframe)
        with self._locked(key):
            return compact_series(self, key)

    def newest_open(self, market: str, symbol: str, timeframe: str) -> int | None:
        """The open time (Unix ms) of a stored series' newest candle, tail included; None when the
        series is not stored. Costs a ``stat`` and a small read (the footer is read once per file).

        Example:
            >>> DataStore("/nonexistent").newest_open("crypto", "BTCUSDT", "1m") is None
            True
        """
        from svc_engine.data.appends import newest_open

        key = self.key(market, symbol, timeframe)
        return newest_open(self, key) if self._stat(key) is not None else None


def pick_market(symbol: str, found: list[str], known: Callable[[], list[str]], root: object) -> str:
    """The one market in ``found``; otherwise :class:`DataNotFoundError` naming the options.

    Example:
        >>> pick_market("ETHUSDT", ["crypto", "crypto_futures"], list, "/data")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        svc_engine.data.store.DataNotFoundError: symbol 'ETHUSDT' is in several markets ...; pass market=
    """
    if len(found) == 1:
        return found[0]
    if not found:
        raise DataNotFoundError(
            f"no market holds symbol {symbol.upper()!r} in {root} (markets: {', '.join(known()) or 'none'})"
        )
    raise DataNotFoundError(
        f"symbol {symbol.upper()!r} is in several markets ({', '.join(found)}); pass market="
    )
