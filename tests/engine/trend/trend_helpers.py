"""Builders of hand-made candle series for the trend tests."""

from __future__ import annotations

import numpy as np
import polars as pl

MINUTE = 60_000


def flat(n: int) -> dict[str, np.ndarray]:
    """A calm series: highs 10, lows 9, closes 9.5, no pivots at all (flat extremes never pivot)."""
    return {"high": np.full(n, 10.0), "low": np.full(n, 9.0), "close": np.full(n, 9.5)}


def frame(cols: dict[str, np.ndarray]) -> pl.DataFrame:
    n = cols["close"].size
    return pl.DataFrame(
        {
            "open_time": np.arange(n, dtype=np.int64) * MINUTE,
            "open": cols["close"].copy(),
            "high": cols["high"],
            "low": cols["low"],
            "close": cols["close"],
            "volume": np.ones(n),
        }
    )


def candle(cols: dict[str, np.ndarray], i: int, high: float, low: float, close: float) -> None:
    cols["high"][i], cols["low"][i], cols["close"][i] = high, low, close


def falling_resistance(n: int = 60) -> dict[str, np.ndarray]:
    """Pivot highs 15 at candle 15 and 13 at candle 30: line(t) = 15 - 2 (t - 15) / 15, built at 35."""
    cols = flat(n)
    cols["high"][15] = 15.0
    cols["high"][30] = 13.0
    return cols


def line(t: int) -> float:
    return 15.0 - 2.0 * (t - 15) / 15.0


def mirror(k: pl.DataFrame) -> pl.DataFrame:
    """Prices negated: highs become lows, so resistance becomes support, exactly (negation is exact)."""
    return k.select(
        "open_time",
        (-pl.col("open")).alias("open"),
        (-pl.col("low")).alias("high"),
        (-pl.col("high")).alias("low"),
        (-pl.col("close")).alias("close"),
        "volume",
    )


def random_walk(seed: int, n: int, tick: float) -> pl.DataFrame:
    """Candles of a random walk rounded to ``tick``, so equal highs and lows (ties) are common."""
    rng = np.random.default_rng(seed)
    close = 100.0 + np.cumsum(rng.normal(0.0, 1.0, n))
    open_ = np.r_[100.0, close[:-1]]
    high = np.maximum(open_, close) + np.abs(rng.normal(0.0, 0.6, n))
    low = np.minimum(open_, close) - np.abs(rng.normal(0.0, 0.6, n))
    snap = [np.round(x / tick) * tick for x in (open_, high, low, close)]
    return pl.DataFrame(
        {
            "open_time": np.arange(n, dtype=np.int64) * 60_000,
            "open": snap[0],
            "high": snap[1],
            "low": snap[2],
            "close": snap[3],
            "volume": np.ones(n),
        }
    )
