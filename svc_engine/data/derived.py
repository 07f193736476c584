"""Series that are not stored: resampled from the finest stored timeframe that divides them, cached.

The cache lives beside the series, ``<root>/<market>/<SYMBOL>/.cache/<timeframe>.parquet``, and
records the source's timeframe, modification time and size (and its hot tail's) in its Parquet
metadata; a source that changed makes the cached file stale and it is rebuilt (on S3 too, under the
same key). A bucket appears once it is complete: the source's newest candle closes where the
bucket closes (or later), so a live 4h candle shows once its fourth 1h candle has closed, exactly
as resampling the finer series then gives it. A store
that cannot be written (read-only mount) still serves the resampled series, only uncached.

Example:
    >>> import tempfile, polars as pl
    >>> from svc_engine.data.store import DataStore
    >>> store = DataStore(tempfile.mkdtemp())
    >>> m = pl.DataFrame({"open_time": [k * 60_000 for k in range(7)], "open": [1.0] * 7,
    ...                   "high": [1.2] * 7, "low": [0.9] * 7, "close": [1.1] * 7, "volume": [5.0] * 7})
    >>> store.write_klines("crypto", "BTCUSDT", "1m", m)
    7
    >>> lf, where = scan_series(store, "crypto", "BTCUSDT", "5m")  # 5:00-7:00 is not complete yet
    >>> lf.collect().rows(), where.endswith(".cache/5m.parquet")
    ([(0, 1.0, 1.2, 0.9, 1.1, 25.0)], True)
"""

from __future__ import annotations

import json

import polars as pl
import pyarrow as pa

from svc_engine.data.resample import resample
from svc_engine.data.schema import TIMEFRAMES, timeframe_ms
from svc_engine.data.store import DataNotFoundError, DataStore
from svc_engine.data.times import stored

_META_KEY = b"svc.derived_from"


def source_timeframe(store: DataStore, market: str, symbol: str, timeframe: str) -> str:
    """The stored timeframe a series is read from: itself, else the stored one dividing it that
    reaches furthest back (the finest of those on a tie).

    Example:
        >>> source_timeframe(DataStore("/nonexistent"), "crypto", "BTCUSDT", "4h")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        svc_engine.data.store.DataNotFoundError: crypto/BTCUSDT has no 4h series ... (stored: none)
    """
    length = timeframe_ms(timeframe)
    stored = store.timeframes(market, symbol)
    if timeframe in stored:
        return timeframe
    finer = [tf for tf in stored if TIMEFRAMES[tf] < length and length % TIMEFRAMES[tf] == 0]
    if not finer:
        raise DataNotFoundError(
            f"{market}/{symbol.upper()} has no {timeframe} series and none finer that divides it "
            f"(stored: {', '.join(stored) or 'none'})"
        )
    if len(finer) == 1:
        return finer[0]
    # A finer series often covers only recent history (e.g. 30 days of 1m beside years of 1h):
    # prefer the one reaching furthest back, then the finest.
    first = {tf: _first_open_time(store, market, symbol, tf) for tf in finer}
    return min(finer, key=lambda tf: (first[tf], TIMEFRAMES[tf]))


def _first_open_time(store: DataStore, market: str, symbol: str, timeframe: str) -> int:
    key = store.key(market, symbol, timeframe)
    return int(store._scan(key).select(pl.col("open_time").first()).collect().item())


def scan_series(store: DataStore, market: str, symbol: str, timeframe: str) -> tuple[pl.LazyFrame, str]:
    """A lazy scan of the series and the file it reads: the stored file or a fresh cached resample.

    The scan has the store's columns (``open_time`` as ``Int64`` Unix milliseconds, as on disk).

    Raises :class:`DataNotFoundError` when neither the timeframe nor a finer divisor is stored.
    Where the cache cannot be written (read-only store), the resample is served from memory.
    """
    src_tf = source_timeframe(store, market, symbol, timeframe)
    source = store.key(market, symbol, src_tf)
    if src_tf == timeframe:
        return store._scan(source), str(store.location(source))
    cache = f"{source.rsplit('/', 1)[0]}/.cache/{timeframe}.parquet"
    stamp = _stamp(store, source, src_tf)
    if not _is_fresh(store, cache, stamp):
        try:
            with store._locked(cache):
                if not _is_fresh(store, cache, stamp):
                    store._write(cache, _stamped(_resampled(store, source, src_tf, timeframe), stamp))
        except PermissionError:
            where = f"{store.location(source)} resampled to {timeframe}"
            return _resampled(store, source, src_tf, timeframe).lazy(), where
    return store._scan(cache), str(store.location(cache))


def _resampled(store: DataStore, source: str, src_tf: str, timeframe: str) -> pl.DataFrame:
    """The complete buckets of the source resampled, in the store's columns."""
    src = store._read(source)
    out = stored(resample(src, timeframe))
    if out.height and src.height:
        closes = int(src["open_time"][-1]) + timeframe_ms(src_tf)
        if int(out["open_time"][-1]) + timeframe_ms(timeframe) > closes:
            out = out.head(out.height - 1)  # its last source candle has not closed yet
    return out


def _stamp(store: DataStore, source: str, src_tf: str) -> bytes:
    stat = store._stat(source)
    if stat is None:
        raise DataNotFoundError(f"{store.location(source)} disappeared while it was being read")
    tail = store._tail_stat(source)
    return json.dumps(
        {"timeframe": src_tf, "mtime_ns": stat[0], "size": stat[1], "tail": [tail[0], tail[1]]}
    ).encode()


def _is_fresh(store: DataStore, cache: str, stamp: bytes) -> bool:
    if store._stat(cache) is None:
        return False
    try:
        meta = store._schema_metadata(cache)
    except (OSError, ValueError):
        return False  # a damaged cache file is simply rebuilt
    return meta.get(_META_KEY) == stamp


def _stamped(df: pl.DataFrame, stamp: bytes) -> pa.Table:
    table = df.to_arrow()
    return table.replace_schema_metadata({**(table.schema.metadata or {}), _META_KEY: stamp})
