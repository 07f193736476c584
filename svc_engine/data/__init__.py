"""The kline data store: schema and validation, Parquet layout, catalog, loading, resampling, importers.

Example:
    >>> import tempfile, polars as pl
    >>> from svc_engine.data import DataStore, Catalog, load_klines
    >>> store = DataStore(tempfile.mkdtemp())
    >>> df = pl.DataFrame({"open_time": [0, 3_600_000], "open": [1.0, 1.1], "high": [1.2, 1.2],
    ...                    "low": [0.9, 1.0], "close": [1.1, 1.15], "volume": [5.0, 6.0]})
    >>> store.write_klines("crypto", "BTCUSDT", "1h", df)
    2
    >>> load_klines("BTCUSDT", "2h", store=store).row(0)[1:]  # open_time: Datetime("ms", "UTC")
    (1.0, 1.2, 0.9, 1.15, 11.0)
    >>> Catalog(store).data_range("BTCUSDT", "1h")["total_candles"]
    2
"""

from __future__ import annotations

from svc_engine.data.catalog import Catalog
from svc_engine.data.loader import load_klines, to_arrays
from svc_engine.data.resample import resample
from svc_engine.data.schema import (
    COLUMNS,
    SCHEMA,
    TIMEFRAMES,
    KlineValidationError,
    ValidationReport,
    timeframe_ms,
    validate_klines,
)
from svc_engine.data.store import DataNotFoundError, DataStore, default_data_dir

__all__ = [
    "COLUMNS",
    "SCHEMA",
    "TIMEFRAMES",
    "Catalog",
    "DataNotFoundError",
    "DataStore",
    "KlineValidationError",
    "ValidationReport",
    "default_data_dir",
    "load_klines",
    "resample",
    "timeframe_ms",
    "to_arrays",
    "validate_klines",
]
