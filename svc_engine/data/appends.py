"""Appending closed candles to a stored series: validation, idempotence and conflicts, then the tail.

Called by :meth:`DataStore.append_klines <svc_engine.data.store.DataStore.append_klines>` under the
series lock. A live feed appends one candle per series and timeframe at a time, hundreds at each
close, so the path avoids polars: the candles go to NumPy once, are checked by
:func:`~svc_engine.data.schema.validate_arrays` (the import's rules), and the newest stored time of
the history is read from its Parquet footer once per file version.

Example:
    >>> import tempfile, polars as pl
    >>> from svc_engine.data.store import DataStore
    >>> store = DataStore(tempfile.mkdtemp())
    >>> one = pl.DataFrame({"open_time": [0], "open": [1.0], "high": [1.0], "low": [1.0],
    ...                     "close": [1.0], "volume": [1.0]})
    >>> _ = store.write_klines("crypto", "BTCUSDT", "1m", one)
    >>> store.append_klines("crypto", "BTCUSDT", "1m", one.with_columns(close=pl.lit(0.5), low=pl.lit(0.5)))
    Traceback (most recent call last):
    ...
    svc_engine.data.schema.KlineValidationError: ...: row 0: conflicting_candle: open_time 0 is stored as \
(1.0, 1.0, 1.0, 1.0, 1.0); the new candle is (1.0, 1.0, 0.5, 0.5, 1.0)
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import polars as pl
import pyarrow.parquet as pq

from svc_engine.data import tail
from svc_engine.data.schema import (
    COLUMNS,
    SCHEMA,
    STORED_SCHEMA,
    KlineValidationError,
    conform,
    validate_arrays,
)
from svc_engine.data.times import ms_array


class SeriesStore(Protocol):
    """What appending needs of a :class:`~svc_engine.data.store.DataStore` (its caller, which imports
    this module: naming the class here would close an import circle)."""

    root: Any
    remote: Any

    def tail_path(self, key: str) -> Path: ...
    def _stat(self, key: str) -> Any: ...
    def _read(self, key: str) -> pl.DataFrame: ...
    def _write(self, key: str, table: Any) -> Any: ...
    def _history(self, key: str) -> pl.LazyFrame: ...
    def _scan(self, key: str) -> pl.LazyFrame: ...


logger = logging.getLogger("svc_engine.data")
_TIMES = (SCHEMA["open_time"], STORED_SCHEMA["open_time"])
_NEWEST: dict[tuple[str, tuple[int, int]], int] = {}  # (history file, its stat) -> newest open_time


def candle_arrays(df: pl.DataFrame, source: str) -> tuple[np.ndarray, np.ndarray]:
    """``(open_time ms, (n, 5) OHLCV)`` of a kline frame, conformed only when its types differ.

    Example:
        >>> t, v = candle_arrays(pl.DataFrame({"open_time": [0], "open": [1], "high": [1], "low": [1],
        ...                                    "close": [1], "volume": [0]}), "<frame>")
        >>> t.tolist(), v.shape
        ([0], (1, 5))
    """
    if df.columns == list(COLUMNS):
        cols = df.get_columns()
        values = [c.to_numpy() for c in cols[1:]]
        if all(v.dtype == np.float64 for v in values) and cols[0].dtype in _TIMES:
            return ms_array(cols[0]), np.column_stack(values)
    cols = conform(df, source).get_columns()
    return ms_array(cols[0]), np.column_stack([c.to_numpy() for c in cols[1:]])


def append_series(store: SeriesStore, key: str, df: pl.DataFrame, *, source: str) -> int:
    """Append the candles of ``df`` newer than the series' newest; see ``DataStore.append_klines``."""
    t, values = candle_arrays(df, source)
    validate_arrays(t, *values.T, source=source)  # the same rules; the gap report is not needed here
    with tail.Appender(store.tail_path(key)) as out:
        end = out.last()
        newest = end if end is not None else _history_newest(store, key)
        old = t <= newest
        if old.any():
            _check_repeats(store, key, np.flatnonzero(old), t, values, source)
        new = ~old
        if new.any():
            out.write(t[new], values[new])
    return int(new.sum())


def compact_series(store: SeriesStore, key: str) -> int:
    """Merge a series' tail into its Parquet file (under the series lock); see ``DataStore.compact``.
    The history is replaced first, the tail emptied after: a crash between the two leaves candles
    in both, which readers count once (``tail.py``)."""
    path = store.tail_path(key)
    t, _ = tail.read(path)
    if t.size == 0:
        return 0
    store._write(key, store._read(key).to_arrow())
    tail.clear(path, upto_ms=int(t[-1]))
    return int(t.size)


def newest_open(store: SeriesStore, key: str) -> int:
    """The newest open time (ms) of a stored series: its tail's last candle, else its history's."""
    end = tail.last(store.tail_path(key))
    return end[0] if end is not None else _history_newest(store, key)


def _history_newest(store: SeriesStore, key: str) -> int:
    stat = store._stat(key)
    assert stat is not None  # the caller wrote the series when it did not exist
    cached = _NEWEST.get((key + str(store.root), stat))
    if cached is not None:
        return cached
    newest = _footer_max(store, key)
    _NEWEST[(key + str(store.root), stat)] = newest
    return newest


def _footer_max(store: SeriesStore, key: str) -> int:
    if store.remote is None:
        meta = pq.read_metadata(Path(store.root) / key)
        col = meta.schema.names.index("open_time")
        highs = [meta.row_group(i).column(col).statistics for i in range(meta.num_row_groups)]
        if highs and all(s is not None and s.has_min_max for s in highs):
            return max(int(s.max) for s in highs)
    return int(store._history(key).select(pl.col("open_time").max()).collect().item())


def _check_repeats(
    store: SeriesStore, key: str, rows: np.ndarray, t: np.ndarray, values: np.ndarray, source: str
) -> None:
    """A repeated candle must equal the stored one; a conflict is refused before anything is written."""
    held = store._scan(key).filter(pl.col("open_time").is_in(t[rows].tolist())).collect()
    held_t = held["open_time"].to_numpy()
    held_v = np.column_stack([held[c].to_numpy() for c in COLUMNS[1:]])
    at = np.searchsorted(held_t, t[rows])
    for k, row in enumerate(rows.tolist()):  # repeats: a handful of candles re-sent by a source
        i = int(at[k])
        if i >= held_t.size or held_t[i] != t[row]:
            continue  # an older candle the series does not hold: a gap stays a gap
        if not np.array_equal(held_v[i], values[row]):
            was, now = tuple(held_v[i].tolist()), tuple(values[row].tolist())
            logger.warning(
                "refused conflicting candle %s open_time %d: stored %s, new %s", key, int(t[row]), was, now
            )
            raise KlineValidationError(
                source,
                row,
                "conflicting_candle",
                f"open_time {int(t[row])} is stored as {was}; the new candle is {now}",
            )
