"""Resampling a kline series to a coarser timeframe on the UTC grid.

Buckets open at ``offset + k * length`` (weeks on Monday 00:00 UTC like Binance, every other
timeframe, ``3d`` included, aligned to the epoch); a bucket without candles yields no row. The
aggregation is the usual one (first open, max high, min low, last close, summed volume) with one
refinement taken from Binance's native klines: candles with zero volume do not set a bucket's open,
high or low when the bucket has a traded candle. Exchange dumps hold idle minutes that repeat the
previous close; Binance's own hourly and 4-hourly candles ignore them, and so does this.

Example:
    >>> import polars as pl
    >>> m = pl.DataFrame({"open_time": [0, 60_000, 120_000], "open": [1.0, 2.0, 3.0],
    ...                   "high": [2.0, 4.0, 3.5], "low": [0.5, 1.5, 2.5],
    ...                   "close": [2.0, 3.0, 3.2], "volume": [1.0, 2.0, 3.0]})
    >>> resample(m, "3m").row(0)
    (0, 1.0, 4.0, 0.5, 3.2, 6.0)
"""

from __future__ import annotations

import polars as pl

from svc_engine.data.schema import COLUMNS, conform, grid_offset_ms, timeframe_ms


def bucket_start(timeframe: str, column: str = "open_time") -> pl.Expr:
    """Expression giving the open time (ms) of the ``timeframe`` bucket that holds each candle.

    Example:
        >>> import polars as pl
        >>> monday = 1_704_067_200_000  # 2024-01-01 00:00 UTC, a Monday
        >>> pl.DataFrame({"t": [monday + 86_400_000]}).select(bucket_start("1w", "t"))["t"][0] == monday
        True
    """
    length, offset = timeframe_ms(timeframe), grid_offset_ms(timeframe)
    t = pl.col(column)
    return t - (t - offset) % length


def resample(df: pl.DataFrame, timeframe: str, *, skip_idle: bool = True) -> pl.DataFrame:
    """Aggregate a sorted kline frame into ``timeframe`` candles on the UTC grid.

    ``skip_idle=False`` gives the plain first/max/min/last/sum aggregation. With the default, a
    bucket's open, high and low come from its candles with volume > 0 when it has any; the high
    and low still bound the open and close, so every output candle is valid.

    Example:
        >>> import polars as pl
        >>> h = pl.DataFrame({"open_time": [0, 3_600_000], "open": [10.0, 11.0], "high": [12.0, 13.0],
        ...                   "low": [9.0, 10.5], "close": [11.0, 12.0], "volume": [0.0, 4.0]})
        >>> resample(h, "2h").row(0)
        (0, 11.0, 13.0, 10.5, 12.0, 4.0)
        >>> resample(h, "2h", skip_idle=False).row(0)
        (0, 10.0, 13.0, 9.0, 12.0, 4.0)
    """
    df = conform(df)
    traded = pl.col("volume") > 0 if skip_idle else pl.lit(True)

    def pick(col: str, how: str) -> pl.Expr:
        everything = getattr(pl.col(col), how)()
        return getattr(pl.col(col).filter(traded), how)().fill_null(everything) if skip_idle else everything

    out = (
        df.lazy()
        .with_columns(bucket_start(timeframe).alias("_bucket"))
        .group_by("_bucket", maintain_order=True)
        .agg(pick("open", "first"), pick("high", "max"), pick("low", "min"),
             pl.col("close").last(), pl.col("volume").sum())
        .with_columns(
            pl.max_horizontal("high", "open", "close").alias("high"),
            pl.min_horizontal("low", "open", "close").alias("low"),
        )
        .rename({"_bucket": "open_time"})
        .select(COLUMNS)
        .sort("open_time")
        .collect()
    )
    return out
