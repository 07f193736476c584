"""Scan a universe: the trend signals of many coins and timeframes, newest first.

Each (coin, timeframe) pair is one task: load its candles, run the detector, keep the signals at or
after ``since``. Tasks run on any executor with ``.map(fn, items) -> list`` (``LocalExecutor`` runs
them on threads, which the nogil kernel uses in parallel; ``RayExecutor`` on a cluster), or one
after the other. With ``since``, ``WARMUP`` earlier candles are loaded too so that lines and the
ATR have their history: signals after ``since`` then match those of the full history (the ATR's
influence of older candles decays as (13/14)^1000, far below any price tick).

Example:
    >>> import numpy as np, polars as pl
    >>> high = np.r_[np.linspace(20, 10, 40), [30.0]]
    >>> high[[12, 25]] += 5
    >>> k = pl.DataFrame({"open_time": np.arange(41) * 60_000, "high": high, "low": high - 1,
    ...                   "close": high - 0.5})
    >>> scan_trends(["BTCUSDT", "ETHUSDT"], ["1m"], loader=lambda s, tf: k)["symbol"].to_list()
    ['BTCUSDT', 'ETHUSDT']
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Protocol

import polars as pl

from svc_engine.data.schema import timeframe_ms
from svc_engine.data.times import TIME, to_seconds
from svc_engine.trend.params import TrendParams
from svc_engine.trend.payloads import signal_to_api
from svc_engine.trend.signals import SIGNAL_SCHEMA, detect_trends

WARMUP = 1000
"""Candles loaded before ``since`` so that the detector starts from a settled state."""

Loader = Callable[[str, str], pl.DataFrame]
"""``loader(symbol, timeframe) -> klines``."""


class MapExecutor(Protocol):
    """Anything that maps a function over items in order (``LocalExecutor``, ``RayExecutor``)."""

    def map(self, fn: Callable[..., Any], items: Any, /) -> list[Any]: ...  # pragma: no cover


SCAN_SCHEMA: dict[str, pl.DataType] = {"market": pl.Utf8(), **SIGNAL_SCHEMA}
"""Columns of ``scan_trends``: the market, then those of ``detect_trends``."""


@dataclass(frozen=True, slots=True)
class StoreLoader:
    """Loads from a ``DataStore`` with ``svc_engine.data.load_klines`` (picklable, for Ray workers).

    Example:
        >>> StoreLoader(market="crypto", since=None).warmup
        1000
    """

    market: str | None
    since: float | None
    store: Any = None
    warmup: int = WARMUP
    until: int | None = None

    def __call__(self, symbol: str, timeframe: str) -> pl.DataFrame:
        from svc_engine.data import load_klines

        try:
            return load_klines(
                symbol,
                timeframe,
                start_ts=self.since,
                end_ts=self.until,
                market=self.market,
                warmup=self.warmup if self.since is not None else 0,
                store=self.store,
            )
        except ValueError as exc:
            # A ``since`` after the last candle selects nothing: no candle, so no signal.
            if "selects no candle" in str(exc):
                return pl.DataFrame(
                    schema={
                        "open_time": TIME,
                        "high": pl.Float64(),
                        "low": pl.Float64(),
                        "close": pl.Float64(),
                    }
                )
            raise


def scan_trends(
    coins: Iterable[str],
    timeframes: Iterable[str],
    *,
    since: Any = None,
    executor: MapExecutor | None = None,
    store: Any = None,
    market: str | None = "crypto",
    loader: Loader | None = None,
    **params: object,
) -> pl.DataFrame:
    """The signals of every coin and timeframe at or after ``since``, newest first.

    ``since`` is Unix seconds, a ``datetime``/``date`` or an ISO string (``to_seconds``); the times
    of the result are ``Datetime("ms", "UTC")`` columns, as those of ``detect_trends``.

    ``loader(symbol, timeframe)`` replaces loading from ``store`` (a ``DataStore``, default the
    project's) in ``market``; a pair whose series does not exist (``LookupError``) is skipped.
    ``params`` go to ``detect_trends``. Ties on time are ordered by symbol, timeframe, then way.
    The ``*index`` columns count from the first candle loaded (warm-up included); the ``*_time``
    columns locate candles for good, and ``signal_to_api`` uses those.

    Example:
        >>> scan_trends([], ["1h"]).columns[:3]
        ['market', 'symbol', 'timeframe']
    """
    TrendParams.from_kwargs(**params)
    since = to_seconds(since)
    frames = [str(tf) for tf in timeframes]
    for tf in frames:
        timeframe_ms(tf)
    items = [(str(coin).upper(), tf) for coin in coins for tf in frames]
    load = loader if loader is not None else StoreLoader(market=market, since=since, store=store)
    task = functools.partial(scan_one, loader=load, since=since, market=market or "", params=params)
    parts = executor.map(task, items) if executor is not None else [task(item) for item in items]
    found = [p for p in parts if p is not None and p.height]
    if not found:
        return pl.DataFrame(schema=SCAN_SCHEMA)
    return pl.concat(found).sort(
        ["open_time", "symbol", "timeframe", "is_return_to_trend", "way"],
        descending=[True, False, False, False, False],
    )


def scan_one(
    item: tuple[str, str], *, loader: Loader, since: float | None, market: str, params: dict[str, object]
) -> pl.DataFrame | None:
    """The signals of one ``(symbol, timeframe)`` at or after ``since`` (Unix seconds); None without data.

    Example:
        >>> scan_one(("BTCUSDT", "1h"), loader=lambda s, tf: pl.DataFrame(
        ...     {"open_time": [0], "high": [1.0], "low": [1.0], "close": [1.0]}), since=None,
        ...     market="crypto", params={}).height
        0
    """
    symbol, timeframe = item
    try:
        klines = loader(symbol, timeframe)
    except LookupError:
        return None
    out = detect_trends(klines, symbol=symbol, timeframe=timeframe, **params)
    if since is not None:
        out = out.filter(pl.col("open_time").dt.epoch("ms") >= math.ceil(since * 1000))
    return out.select(pl.lit(market, dtype=pl.Utf8()).alias("market"), pl.all())


def signal_detail(
    coin_name: str,
    graph_type: str,
    timestamp: int | str,
    *,
    store: Any = None,
    market: str | None = None,
    loader: Loader | None = None,
    **params: object,
) -> dict[str, Any]:
    """The Trend signal object (with ``trend_data`` and ``klines_data``) of the signal at ``timestamp``.

    ``timestamp`` is the signal candle's open time in Unix seconds (the list's ``timestamp``). The
    candles up to it are loaded with ``WARMUP`` before, the detector is run, and the first signal
    of that candle is returned (one candle rarely holds two: then breaks before returns, BUY before
    SELL). Raises ``LookupError`` when that candle has no signal or the series does not exist.

    Example:
        >>> import numpy as np
        >>> high = np.r_[np.linspace(20, 10, 40), [30.0]]
        >>> high[[12, 25]] += 5
        >>> k = pl.DataFrame({"open_time": np.arange(41) * 60_000, "open": high, "high": high,
        ...                   "low": high - 1, "close": high - 0.5, "volume": np.ones(41)})
        >>> signal_detail("BTCUSDT", "1m", "2400", loader=lambda s, tf: k)["way"]
        'BUY'
    """
    ts = int(timestamp)
    if loader is None:
        klines = StoreLoader(market=market, since=ts, store=store, until=ts)(coin_name, graph_type)
    else:
        klines = loader(coin_name, graph_type)
    found = detect_trends(klines, symbol=coin_name.upper(), timeframe=graph_type, **params)
    found = found.filter(pl.col("open_time").dt.epoch("ms") == ts * 1000)
    if found.height == 0:
        raise LookupError(f"no trend signal of {coin_name.upper()} {graph_type} at timestamp {ts}")
    return signal_to_api(found.head(1), klines)
