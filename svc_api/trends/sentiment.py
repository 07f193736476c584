"""The sentiment indicator of a series: its ``<SYMBOL>#<timeframe>`` key and the engine's scores.

Example:
    >>> DEFAULT_MARKET_KEY
    'BTCUSDT#1h'
"""

from __future__ import annotations

from typing import Any

import polars as pl

from svc_api.core.errors import Invalid
from svc_api.market.service import find_series, freshest

SENTIMENT_WARMUP = 1000
"""Candles loaded before a sentiment page so that its EMAs, RSI and ATR have settled."""
DEFAULT_MARKET_KEY = "BTCUSDT#1h"


def parse_market_key(catalog: Any, value: object) -> tuple[str, str, str, str]:
    """``(market_key, market, symbol, timeframe)`` of a ``<SYMBOL>#<timeframe>`` key (default
    ``BTCUSDT#1h``): 400 when malformed, 404 when the store has no such series.

    Example:
        >>> import tempfile
        >>> from svc_engine.data import Catalog, DataStore
        >>> parse_market_key(Catalog(DataStore(tempfile.mkdtemp())), "BTCUSDT-1h")
        Traceback (most recent call last):
        ...
        svc_api.core.errors.Invalid: market_key must look like BTCUSDT#1h (<SYMBOL>#<timeframe>), \
got 'BTCUSDT-1h'
    """
    from svc_engine.data import timeframe_ms
    from svc_engine.trend import market_key

    text = DEFAULT_MARKET_KEY if value is None or value == "" else str(value)
    symbol, sep, timeframe = text.partition("#")
    if not sep:
        raise Invalid(f"market_key must look like BTCUSDT#1h (<SYMBOL>#<timeframe>), got {text!r}")
    try:
        timeframe_ms(timeframe)
        market_key(symbol, timeframe)
    except ValueError as exc:
        raise Invalid(str(exc)) from None
    market, data_symbol = find_series(catalog, symbol)
    return market_key(data_symbol, timeframe), market, data_symbol, timeframe


def sentiment_scores(
    catalog: Any, market: str, symbol: str, timeframe: str, *, count: int, before: int | None
) -> pl.DataFrame:
    """The engine's scores of the last ``count`` candles opening before ``before`` (seconds), each
    computed with ``SENTIMENT_WARMUP`` earlier candles; the warm-up rows are kept (older history).

    Example:
        >>> import tempfile
        >>> from svc_engine.data import Catalog, DataStore
        >>> store = DataStore(tempfile.mkdtemp())
        >>> df = pl.DataFrame({"open_time": [0, 3_600_000], "open": [1.0, 1.0], "high": [1.0, 1.0],
        ...                    "low": [1.0, 1.0], "close": [1.0, 1.0], "volume": [1.0, 1.0]})
        >>> _ = store.write_klines("crypto", "BTCUSDT", "1h", df)
        >>> scores = sentiment_scores(Catalog(store), "crypto", "BTCUSDT", "1h", count=1, before=None)
        >>> scores["score"].to_list()
        [0, 0]
    """
    from svc_engine.data import load_klines, timeframe_ms
    from svc_engine.trend import trend_indicator
    from svc_engine.trend.sentiment import SCORE_SCHEMA

    step = timeframe_ms(timeframe)
    newest = freshest(catalog, market, symbol)[1]
    hi = newest if before is None else min(newest, before * 1000 - 1)
    lo = max(0, hi - (count + SENTIMENT_WARMUP) * step)
    empty = pl.DataFrame(schema=SCORE_SCHEMA)
    if hi < lo:
        return empty
    try:
        klines = load_klines(
            symbol, timeframe, start_ts=lo / 1000, end_ts=hi / 1000, market=market, store=catalog.store
        )
    except ValueError as exc:
        if "selects no candle" in str(exc):
            return empty
        raise Invalid(str(exc)) from None
    return trend_indicator(klines)
