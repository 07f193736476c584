"""What the store holds: markets, symbols, timeframes and their ranges, read by DuckDB from the files.

There is no index to keep in sync: DuckDB reads the Parquet footers of the series files
``<root>/<market>/<SYMBOL>/<tf>.parquet`` (row counts and ``open_time`` statistics, no data pages),
so the catalog costs milliseconds even for millions of candles, on disk or on S3. Results are kept
in memory until :meth:`Catalog.refresh`.

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

from svc_engine.data.derived import source_timeframe
from svc_engine.data.schema import TIMEFRAMES, grid_offset_ms, timeframe_ms
from svc_engine.data.store import DataStore, pick_market

_ENTRY_SCHEMA: dict[str, pl.DataType] = {
    "market": pl.String(), "symbol": pl.String(), "timeframe": pl.String(), "dataset_key": pl.String(),
    "first_ts": pl.Int64(), "last_ts": pl.Int64(), "first_date": pl.String(), "last_date": pl.String(),
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
_BUCKETS = """
SELECT count(DISTINCT b), min(b), max(b)
FROM (SELECT open_time - (((open_time - $1) % $2) + $2) % $2 AS b FROM read_parquet($3))
"""


class Catalog:
    """Markets, symbols, timeframes and ranges of a :class:`DataStore`, straight from its files.

    Example:
        >>> Catalog(DataStore("/nonexistent")).markets()
        []
    """

    def __init__(self, store: DataStore | None = None) -> None:
        self.store = store if store is not None else DataStore()
        self._entries: pl.DataFrame | None = None

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
                0, named=True)
        src = self.store.path(market, symbol, source_timeframe(self.store, market, symbol, timeframe))
        params = [grid_offset_ms(timeframe), timeframe_ms(timeframe), str(src)]
        n, lo, hi = self._query(_BUCKETS, params)[0]
        return _range_dict(int(n), int(lo), int(hi))

    def _market_of(self, symbol: str) -> str:
        found = sorted(set(self.entries(symbol=symbol)["market"].to_list()))
        return pick_market(symbol, found, self.markets, self.store.root)

    def _query(self, sql: str, params: list[Any]) -> list[tuple[Any, ...]]:
        with self.store._duckdb() as con:
            return con.execute(sql, params).fetchall()

    def _read(self) -> pl.DataFrame:
        keys = {str(self.store.location(k)): k for k in self.store.series_keys()}
        if not keys:
            return pl.DataFrame(schema=_ENTRY_SCHEMA)
        rows = []
        for path, n, lo, hi, no_stats in self._query(_FOOTERS, [list(keys)]):
            if no_stats:
                n, lo, hi = self._query(_SCAN, [path])[0]
            if not n:
                continue
            rel = keys[path]
            market, symbol, name = rel.split("/")
            rows.append({"market": market, "symbol": symbol, "timeframe": name.removesuffix(".parquet"),
                         "dataset_key": rel, **_range_dict(int(n), int(lo), int(hi))})
        order = {tf: i for i, tf in enumerate(TIMEFRAMES)}
        out = pl.DataFrame(rows, schema=_ENTRY_SCHEMA)
        return out.sort("market", "symbol", pl.col("timeframe").replace_strict(order, return_dtype=pl.Int64))


def _range_dict(n: int, lo_ms: int, hi_ms: int) -> dict[str, Any]:
    def day(ms: int) -> str:
        return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%d")

    return {"first_ts": lo_ms // 1000, "last_ts": hi_ms // 1000, "first_date": day(lo_ms),
            "last_date": day(hi_ms), "total_candles": n}

