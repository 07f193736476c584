"""What the store holds: markets, symbols, timeframes and their ranges, read by DuckDB from the files.

There is no index to keep in sync: DuckDB reads the Parquet footers of the series files
``<root>/<market>/<SYMBOL>/<tf>.parquet`` (row counts and ``open_time`` statistics, no data pages),
so the catalog costs milliseconds even for millions of candles, on disk or on S3, and the hot tails
of live series (:mod:`svc_engine.data.tail`) are added to them. Results are kept in memory until
:meth:`Catalog.refresh`; a refresh reads again only the footers of files that changed.

Example:
    >>> import tempfile, polars as pl
    >>> from svc_engine.data.store import DataStore
    >>> store = DataStore(tempfile.mkdtemp())
    >>> df = pl.DataFrame({"open_time": [1_700_000_000_000, 1_700_000_060_000], "open": [1.0, 1.1],
    ...                    "high": [1.2, 1.2], "low": [0.9, 1.0], "close": [1.1, 1.15], "volume": [5.0, 6.0]})
    >>> store.write_klines("crypto", "BTCUSDT", "1m", df)
    2
    >>> Catalog(store).entries().select("dataset_key", "first_date", "total_candles").row(0)
    ('crypto/BTCUSDT/1m.parquet', '2023-11-14', 2)
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import polars as pl

from svc_engine.data import tail
from svc_engine.data.derived import scan_series
from svc_engine.data.schema import TIMEFRAMES, timeframe_ms
from svc_engine.data.store import DataNotFoundError, DataStore, pick_market

_ENTRY_SCHEMA: dict[str, pl.DataType] = {
    "market": pl.String(),
    "symbol": pl.String(),
    "timeframe": pl.String(),
    "dataset_key": pl.String(),
    "first_ts": pl.Int64(),
    "last_ts": pl.Int64(),
    "first_date": pl.String(),
    "last_date": pl.String(),
    "total_candles": pl.Int64(),
}

# Footer statistics of every file at once; a file written without statistics is scanned instead.
_FOOTERS = """
SELECT file_name AS path, sum(row_group_num_rows)::BIGINT AS n,
       min(TRY_CAST(stats_min_value AS BIGINT)) AS lo, max(TRY_CAST(stats_max_value AS BIGINT)) AS hi,
       bool_or(stats_min_value IS NULL OR stats_max_value IS NULL) AS no_stats
FROM parquet_metadata(?) WHERE path_in_schema = 'open_time' GROUP BY file_name
"""
_SCAN = "SELECT count(*), min(open_time), max(open_time) FROM read_parquet(?)"


class Catalog:
    """Markets, symbols, timeframes and ranges of a :class:`DataStore`, straight from its files.

    Example:
        >>> Catalog(DataStore("/nonexistent")).markets()
        []
    """

    def __init__(self, store: DataStore | None = None) -> None:
        self.store = store if store is not None else DataStore()
        self._entries: pl.DataFrame | None = None
        self._seen: dict[str, tuple[tuple[int, int] | None, tuple[int, int, int]]] = {}

    def __repr__(self) -> str:
        return f"Catalog({self.store!r})"

    def refresh(self) -> None:
        """Forget what was read, so the next call sees writes made since.

        Example:
            >>> Catalog(DataStore("/nonexistent")).refresh()
        """
        self._entries = None

    def entries(self, market: str | None = None, symbol: str | None = None) -> pl.DataFrame:
        """One row per stored series: market, symbol, timeframe, dataset_key, first/last ts and date, total.

        Times are Unix seconds of the first and last candle's open; dates are ``YYYY-MM-DD`` UTC.

        Example:
            >>> Catalog(DataStore("/nonexistent")).entries().columns[:4]
            ['market', 'symbol', 'timeframe', 'dataset_key']
        """
        if self._entries is None:
            self._entries = self._read()
        out = self._entries
        if market is not None:
            out = out.filter(pl.col("market") == market)
        if symbol is not None:
            out = out.filter(pl.col("symbol") == symbol.upper())
        return out

    def markets(self) -> list[str]:
        """Markets with at least one series, sorted.

        Example:
            >>> Catalog(DataStore("/nonexistent")).markets()
            []
        """
        return sorted(set(self.entries()["market"].to_list()))

    def symbols(self, market: str) -> list[str]:
        """Data symbols of ``market`` that have candles, sorted.

        Example:
            >>> Catalog(DataStore("/nonexistent")).symbols("crypto")
            []
        """
        return sorted(set(self.entries(market=market)["symbol"].to_list()))

    def timeframes(self, symbol: str, market: str | None = None) -> list[str]:
        """Stored timeframes of one instrument, finest first (others load by resampling).

        Example:
            >>> Catalog(DataStore("/nonexistent")).timeframes("BTCUSDT", market="crypto")
            []
        """
        market = market if market is not None else self._market_of(symbol)
        stored = set(self.entries(market=market, symbol=symbol)["timeframe"].to_list())
        return [tf for tf in TIMEFRAMES if tf in stored]

    def data_range(self, symbol: str, timeframe: str, market: str | None = None) -> dict[str, Any]:
        """``first_ts``, ``last_ts`` (seconds), ``first_date``, ``last_date`` and ``total_candles``.

        A timeframe that is not stored is counted as :func:`load_klines` would resample it.
        Raises :class:`DataNotFoundError` when the series neither exists nor can be resampled.

        Example:
            >>> Catalog(DataStore("/nonexistent")).data_range("BTCUSDT", "1h", market="crypto")
            Traceback (most recent call last):
            ...
            svc_engine.data.store.DataNotFoundError: crypto/BTCUSDT has no 1h series and none finer \
that divides it (stored: none)
        """
        timeframe_ms(timeframe)
        market = market if market is not None else self._market_of(symbol)
        rows = self.entries(market=market, symbol=symbol).filter(pl.col("timeframe") == timeframe)
        if rows.height:
            return rows.select("first_ts", "last_ts", "first_date", "last_date", "total_candles").row(
                0, named=True
            )
        lf, _ = scan_series(self.store, market, symbol, timeframe)  # the complete buckets, as loaded
        t = pl.col("open_time")
        n, lo, hi = lf.select(pl.len(), t.min().alias("lo"), t.max().alias("hi")).collect().row(0)
        if not n:
            raise DataNotFoundError(f"{market}/{symbol.upper()} has no complete {timeframe} candle yet")
        return _range_dict(int(n), int(lo), int(hi))

    def _market_of(self, symbol: str) -> str:
        found = sorted(set(self.entries(symbol=symbol)["market"].to_list()))
        return pick_market(symbol, found, self.markets, self.store.root)

    def _query(self, sql: str, params: list[Any]) -> list[tuple[Any, ...]]:
        with self.store._duckdb() as con:
            return con.execute(sql, params).fetchall()

    def _read(self) -> pl.DataFrame:
        keys = self.store.series_keys()
        if not keys:
            return pl.DataFrame(schema=_ENTRY_SCHEMA)
        rows = []
        for key, (n, lo, hi) in self._footers(keys).items():
            n, lo, hi = self._with_tail(key, n, lo, hi)
            if not n:
                continue
            market, symbol, name = key.split("/")
            rows.append(
                {
                    "market": market,
                    "symbol": symbol,
                    "timeframe": name.removesuffix(".parquet"),
                    "dataset_key": key,
                    **_range_dict(int(n), int(lo), int(hi)),
                }
            )
        order = {tf: i for i, tf in enumerate(TIMEFRAMES)}
        out = pl.DataFrame(rows, schema=_ENTRY_SCHEMA)
        return out.sort("market", "symbol", pl.col("timeframe").replace_strict(order, return_dtype=pl.Int64))

    def _footers(self, keys: list[str]) -> dict[str, tuple[int, int, int]]:
        """``(count, first, last)`` of each history file; a file read before is read again only once
        it changed, so refreshing a catalog every second costs a ``stat`` per series."""
        stats = {k: self.store._stat(k) for k in keys}
        stale = [k for k in keys if stats[k] is not None and self._seen.get(k, (None,))[0] != stats[k]]
        if stale:
            where = {str(self.store.location(k)): k for k in stale}
            for path, n, lo, hi, no_stats in self._query(_FOOTERS, [list(where)]):
                if no_stats:
                    n, lo, hi = self._query(_SCAN, [path])[0]
                self._seen[where[path]] = (stats[where[path]], (int(n or 0), lo, hi))
        return {k: self._seen[k][1] for k in keys if k in self._seen and stats[k] is not None}

    def _with_tail(self, key: str, n: int, lo: int, hi: int) -> tuple[int, int, int]:
        t, _ = tail.read(self.store.tail_path(key))
        if t.size == 0:
            return n, lo, hi
        first = int(t[0])
        if n and first <= hi:  # a compaction stopped before it emptied the tail: count each candle once
            before = self.store._history(key).filter(pl.col("open_time") < first)
            n = int(before.select(pl.len()).collect().item())
        return n + int(t.size), (lo if n else first), int(t[-1])


def _range_dict(n: int, lo_ms: int, hi_ms: int) -> dict[str, Any]:
    def day(ms: int) -> str:
        return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%d")

    return {
        "first_ts": lo_ms // 1000,
        "last_ts": hi_ms // 1000,
        "first_date": day(lo_ms),
        "last_date": day(hi_ms),
        "total_candles": n,
    }
