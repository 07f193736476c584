"""One trend signal in full (the engine's ``trend_data`` and its chart), its list record, and a small
cache of recent details.

Example:
    >>> summary({"symbol": "ETHUSDT", "timeframe": "4h", "ts": 7200, "way": "SELL",
    ...          "is_return_to_trend": True})["klines_data"]
    []
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from typing import Any

import polars as pl

from svc_api.core.errors import NotFound

DETAIL_TTL = 60.0
"""Seconds a signal's detail is reused (lists ask for many)."""


def summary(row: Any) -> dict[str, Any]:
    """The list record of a stored signal: the engine's summary with an empty ``klines_data``.

    Example:
        >>> summary({"symbol": "ETHUSDT", "timeframe": "4h", "ts": 7200, "way": "SELL",
        ...          "is_return_to_trend": True})["timestamp"]
        '7200'
    """
    from svc_engine.trend import signal_summary

    m = row if isinstance(row, Mapping) else row._mapping
    record = {
        "symbol": m["symbol"],
        "timeframe": m["timeframe"],
        "open_time": int(m["ts"]) * 1000,
        "way": m["way"],
        "is_return_to_trend": m["is_return_to_trend"],
    }
    return {**signal_summary(record), "klines_data": []}


def detail(store: Any, symbol: str, timeframe: str, ts: int, way: str | None = None) -> dict[str, Any]:
    """The engine's Trend signal (``trend_data`` and the 200-candle ``klines_data``) of one candle.

    ``way`` picks that way's signal when the candle holds both; 404 when there is none.

    Example:
        >>> import tempfile
        >>> from svc_engine.data import DataStore
        >>> detail(DataStore(tempfile.mkdtemp()), "BTCUSDT", "1h", 3600)
        Traceback (most recent call last):
        ...
        svc_api.core.errors.NotFound: no trend signal of BTCUSDT 1h at timestamp 3600
    """
    from svc_engine.data import load_klines
    from svc_engine.trend import detect_trends, signal_to_api
    from svc_engine.trend.scan import WARMUP

    try:
        klines = load_klines(symbol, timeframe, start_ts=ts, end_ts=ts, warmup=WARMUP, store=store)
    except (LookupError, ValueError):
        klines = None
    found = pl.DataFrame()
    if klines is not None:
        found = detect_trends(klines, symbol=symbol, timeframe=timeframe)
        found = found.filter(pl.col("open_time").dt.epoch("ms") == ts * 1000)
        if way is not None:
            found = found.filter(pl.col("way") == way)
    if found.height == 0:
        what = f"{symbol} {timeframe}" + (f" {way}" if way else "")
        raise NotFound(f"no trend signal of {what} at timestamp {ts}")
    return signal_to_api(found.head(1), klines)


class RecentDetails:
    """The last ``size`` signal details, each for ``ttl`` seconds: new signals keep coming, so the
    cache of an app that runs for months must forget (the app's general cache never does).

    Example:
        >>> cache = RecentDetails(size=2, ttl=60)
        >>> [cache.get(k, lambda k=k: k * 10) for k in (1, 2, 1, 3)], sorted(cache._items)
        ([10, 20, 10, 30], [1, 3])
    """

    def __init__(self, size: int = 512, ttl: float = DETAIL_TTL) -> None:
        self.size, self.ttl = size, ttl
        self._items: OrderedDict[Any, tuple[float, Any]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Any, compute: Callable[[], Any]) -> Any:
        """The value of ``key``, computed when absent or older than ``ttl``."""
        now = time.monotonic()
        with self._lock:
            hit = self._items.get(key)
            if hit is not None and hit[0] > now:
                self._items.move_to_end(key)
                return hit[1]
        value = compute()
        with self._lock:
            self._items[key] = (now + self.ttl, value)
            self._items.move_to_end(key)
            while len(self._items) > self.size:
                self._items.popitem(last=False)
        return value
