"""Parquet files already in the kline schema, such as the shared datasets or another store.

Market, symbol and timeframe come from the path when not given: ``<market>/<SYMBOL>-<tf>.parquet``
(the datasets layout) or ``<market>/<SYMBOL>/<tf>.parquet`` (the store's own layout).

Example:
    >>> parquet_name("/data/crypto/BTCUSDT-1h.parquet"), parquet_name("/s/forex/EURUSD/1d.parquet")
    (('crypto', 'BTCUSDT', '1h'), ('forex', 'EURUSD', '1d'))
"""

from __future__ import annotations

from pathlib import Path

import polars as pl

from svc_engine.data.schema import TIMEFRAMES, KlineValidationError, conform


def parquet_name(path: str | Path) -> tuple[str, str, str | None]:
    """``(market, SYMBOL, timeframe)`` read from a Parquet path; timeframe None when unrecognised.

    Example:
        >>> parquet_name("crypto_futures/XRPUSDT-8h-funding_rate.parquet")
        ('crypto_futures', 'XRPUSDT-8H-FUNDING_RATE', None)
    """
    p = Path(path)
    if p.stem in TIMEFRAMES:
        return p.parent.parent.name, p.parent.name.upper(), p.stem
    symbol, _, tf = p.stem.rpartition("-")
    if symbol and tf in TIMEFRAMES:
        return p.parent.name, symbol.upper(), tf
    return p.parent.name, p.stem.upper(), None


def read_parquet_klines(path: str | Path) -> pl.DataFrame:
    """The kline columns of a Parquet file, cast to the schema (extra columns are ignored).

    Example:
        >>> import tempfile, pathlib
        >>> p = pathlib.Path(tempfile.mkdtemp()) / "X-1m.parquet"
        >>> pl.DataFrame({"open_time": [0], "open": [1], "high": [1], "low": [1], "close": [1],
        ...               "volume": [0]}).write_parquet(p)
        >>> read_parquet_klines(p).dtypes[1]
        Float64
    """
    try:
        df = pl.read_parquet(path)
    except (pl.exceptions.PolarsError, OSError) as exc:
        raise KlineValidationError(str(path), None, "format", f"unreadable Parquet: {exc}") from None
    return conform(df, str(path))
