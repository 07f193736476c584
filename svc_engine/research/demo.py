"""A small random-walk kline frame for examples and tests (no data store needed).

Example:
    >>> k = random_walk(3, seed=1)
    >>> k.columns, k.height, k.schema["open_time"]
    (['open_time', 'open', 'high', 'low', 'close', 'volume'], 3, Datetime(time_unit='ms', time_zone='UTC'))
"""

from __future__ import annotations

import numpy as np
import polars as pl

from svc_engine.data.schema import SCHEMA, timeframe_ms

#: 2024-01-01 00:00 UTC in Unix milliseconds, where demo series start by default.
START_MS = 1_704_067_200_000


def random_walk(
    n: int = 2_000, *, seed: int = 0, timeframe: str = "1h", start_ms: int = START_MS, vol: float = 0.01
) -> pl.DataFrame:
    """``n`` candles of a geometric random walk starting at 100, one per ``timeframe``; each candle
    opens off the previous close and its high and low reach beyond open and close. ``open_time``
    is ``Datetime("ms", "UTC")`` as in every kline frame; ``start_ms`` is Unix milliseconds.

    Example:
        >>> random_walk(2, seed=3)["open_time"].dt.epoch("ms").to_list()
        [1704067200000, 1704070800000]
    """
    rng = np.random.default_rng(seed)
    close = 100 * np.exp(np.cumsum(rng.normal(0, vol, n)))
    open_ = np.concatenate([[100.0], close[:-1]]) * np.exp(rng.normal(0, vol * 0.3, n))
    high = np.maximum(open_, close) * np.exp(np.abs(rng.normal(0, vol * 0.4, n)))
    low = np.minimum(open_, close) * np.exp(-np.abs(rng.normal(0, vol * 0.4, n)))
    return pl.DataFrame(
        {
            "open_time": start_ms + np.arange(n, dtype=np.int64) * timeframe_ms(timeframe),
            "open": open_,
            "high": high,
            "low": low,
            "close": close,
            "volume": rng.uniform(10, 1000, n),
        },
        schema=SCHEMA,
    )
