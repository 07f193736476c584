"""One detected signal in the API's "Trend signal" shape, with its 200-candle chart snapshot.

The snapshot is the ``SNAPSHOT`` candles ending at the signal candle (fewer at the start of a
series). Rows of ``klines_data`` are ``[open_time_ms, open, high, low, close, volume]``; anchors are
``[timestamp_ms, candle_index, price]`` with ``candle_index`` counted from the snapshot's first candle.

Example:
    >>> SNAPSHOT
    200
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import polars as pl

from svc_engine.data.times import epoch_ms
from svc_engine.trend.signals import kline_arrays

SNAPSHOT = 200
"""Candles in a signal's chart: the signal candle and the 199 before it."""

KLINE_FIELDS: tuple[str, ...] = ("open_time", "open", "high", "low", "close", "volume")
"""The order of the values in each row of ``klines_data``."""


def signal_to_api(
    row: Mapping[str, Any] | pl.DataFrame, klines: pl.DataFrame, *, with_klines: bool = True
) -> dict[str, Any]:
    """The API Trend signal object of one ``detect_trends`` row (a dict or a one-row frame).

    ``klines`` is the series the row was found on (any frame holding the snapshot's candles works,
    since candles are matched by ``open_time``). ``with_klines=False`` leaves ``klines_data`` empty,
    as list responses do. The row's times may be datetimes (as ``detect_trends`` gives them) or
    Unix milliseconds; the object carries Unix milliseconds (``timestamp``: seconds, as a string).

    Example:
        >>> import numpy as np
        >>> from svc_engine.trend import detect_trends
        >>> high = np.r_[np.linspace(20, 10, 40), [30.0]]
        >>> high[[12, 25]] += 5
        >>> k = pl.DataFrame({"open_time": np.arange(41) * 60_000, "open": high - 0.5, "high": high,
        ...                   "low": high - 1, "close": high - 0.5, "volume": np.ones(41)})
        >>> api = signal_to_api(detect_trends(k, symbol="BTCUSDT", timeframe="1m"), k)
        >>> api["timestamp"], api["way"], api["trend_data"]["high_trend"][1], len(api["klines_data"])
        ('2400', 'BUY', [1500000, 25, 18.58974358974359], 41)
    """
    if isinstance(row, pl.DataFrame):
        if row.height != 1:
            raise ValueError(f"signal_to_api takes one signal row, got a frame of {row.height} rows")
        row = row.row(0, named=True)
    arr = kline_arrays(klines, ("open", "volume") if with_klines else ())
    times = arr["open_time"]
    end = _locate(times, epoch_ms(row["open_time"]), "signal candle")
    start = max(0, end - SNAPSHOT + 1)
    trend_data: dict[str, list[list[float | int]]] = {}
    for side in ("high", "low"):
        if row.get(f"{side}_p1_time") is None:
            continue
        anchors = [
            (epoch_ms(row[f"{a}_time"]), float(row[f"{a}_price"])) for a in (f"{side}_p1", f"{side}_p2")
        ]
        trend_data[f"{side}_trend"] = [
            [ms, _locate(times, ms, "anchor") - start, price] for ms, price in anchors
        ]
    return {
        **signal_summary(row),
        "trend_data": trend_data,
        "klines_data": _snapshot(arr, start, end) if with_klines else [],
    }


def signal_summary(row: Mapping[str, Any]) -> dict[str, Any]:
    """The list record of a signal (``trend_signals``): no lines, no candles, so no klines needed.

    ``open_time`` is a datetime (a ``detect_trends`` row) or Unix milliseconds.

    Example:
        >>> item = signal_summary({"symbol": "ETHUSDT", "timeframe": "1h", "open_time": 1_700_000_000_000,
        ...                        "way": "SELL", "is_return_to_trend": True})
        >>> item["coin_name"], item["timestamp"], item["way"], sorted(item)[2]
        ('ETHUSDT', '1700000000', 'SELL', 'is_return_to_trend')
    """
    return {
        "coin_name": row.get("symbol", ""),
        "graph_type": row.get("timeframe", ""),
        "timestamp": str(epoch_ms(row["open_time"]) // 1000),
        "way": row["way"],
        "is_return_to_trend": bool(row["is_return_to_trend"]),
    }


def _locate(times: np.ndarray, ms: int, what: str) -> int:
    at = int(np.searchsorted(times, ms))
    if at >= times.size or times[at] != ms:
        raise ValueError(f"the {what} at open_time {ms} is not in the klines given")
    return at


def _snapshot(arr: dict[str, np.ndarray], start: int, end: int) -> list[list[float | int]]:
    cols = [arr[f][start : end + 1].tolist() for f in KLINE_FIELDS]
    return [list(r) for r in zip(*cols, strict=True)]
