"""Tiny series builders and converters shared by the simulation tests."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

H = 3_600_000
DATASETS = Path(__file__).resolve().parents[3].parent / "shared" / "datasets"


def bars(rows: list[tuple[float, float, float, float]], step: int = H, start: int = 0) -> pl.DataFrame:
    """A kline frame from (open, high, low, close) rows, one candle per ``step`` ms."""
    return pl.DataFrame(
        {
            "open_time": [start + n * step for n in range(len(rows))],
            "open": [float(r[0]) for r in rows],
            "high": [float(r[1]) for r in rows],
            "low": [float(r[2]) for r in rows],
            "close": [float(r[3]) for r in rows],
            "volume": [1.0] * len(rows),
        }
    )


def sigs(rows: list[tuple[int, str, float | None, float | None, float | None]]) -> pl.DataFrame:
    """A signals frame from (open_time, side, limit, tp, sl) rows."""
    return pl.DataFrame(
        {
            "open_time": [r[0] for r in rows],
            "side": [r[1] for r in rows],
            "limit_price": [r[2] for r in rows],
            "tp_price": [r[3] for r in rows],
            "sl_price": [r[4] for r in rows],
        },
        schema={
            "open_time": pl.Int64,
            "side": pl.Utf8,
            "limit_price": pl.Float64,
            "tp_price": pl.Float64,
            "sl_price": pl.Float64,
        },
    )


def candle_tuples(k: pl.DataFrame) -> list[tuple]:
    """Candles as (open_time, open, high, low, close) tuples for the reference."""
    return list(k.select("open_time", "open", "high", "low", "close").iter_rows())


def signal_dicts(s: pl.DataFrame) -> list[dict[str, Any]]:
    """Signals as dicts for the reference, in input order."""
    return s.to_dicts()


@cache
def real(name: str) -> pl.DataFrame:
    """A real series of ``../shared/datasets`` (``crypto/BTCUSDT-1m`` is read in part only)."""
    if name == "synthetic/gappy-1h":
        return gappy_walk()
    if name == "synthetic/pump-1h":  # doubles in about 70 candles: 1x shorts reach their 2E level
        return gappy_walk(seed=11, drift=0.01)
    path = DATASETS / f"{name}.parquet"
    if name == "crypto/BTCUSDT-1m":
        return pl.scan_parquet(path).slice(176_500, 2_000).collect()
    return pl.read_parquet(path)


def gappy_walk(n: int = 2_000, seed: int = 7, drift: float = 0.0) -> pl.DataFrame:
    """An hourly random walk whose candles open away from the previous close (gaps over levels),
    with a log ``drift`` per candle."""
    rng = np.random.default_rng(seed)
    close = 100 * np.exp(np.cumsum(rng.normal(drift, 0.01, n)))
    open_ = np.concatenate([[100.0], close[:-1]]) * np.exp(rng.normal(0, 0.006, n))
    high = np.maximum(open_, close) * np.exp(np.abs(rng.normal(0, 0.004, n)))
    low = np.minimum(open_, close) * np.exp(-np.abs(rng.normal(0, 0.004, n)))
    return pl.DataFrame(
        {
            "open_time": np.arange(n, dtype=np.int64) * H,
            "open": open_,
            "high": high,
            "low": low,
            "close": close,
            "volume": np.ones(n),
        }
    )


def aggregate(k: pl.DataFrame, step_ms: int) -> pl.DataFrame:
    """Coarser candles from a series (a bucket of missing candles is missing too)."""
    return (
        k.with_columns(open_time=pl.col("open_time") // step_ms * step_ms)
        .group_by("open_time", maintain_order=True)
        .agg(
            pl.col("open").first(),
            pl.col("high").max(),
            pl.col("low").min(),
            pl.col("close").last(),
            pl.col("volume").sum(),
        )
    )
