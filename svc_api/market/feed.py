"""The market feed: a worker that keeps every listed series up to its newest closed candle.

One code path for every source. Each pass asks the market clock where the market is
(:meth:`~svc_api.market.clock.MarketClock.target`: the wall clock, or the replay time), and for each
series whose next candle has closed since the newest stored one asks the source for the closed
candles from there and appends them to the store's hot tail
(:meth:`~svc_engine.data.store.DataStore.append_klines`: validated like an import, idempotent, a
conflicting candle refused and logged). After downtime the first pass backfills the whole gap from
the newest stored candle, then the feed is live again; a gap the source truly has stays a gap.
Tails longer than ``COMPACT_AT`` candles are merged into the Parquet history.

Sources (``MARKET_FEED``): ``embedded`` continues the synthetic embedded market
(:class:`~svc_engine.data.synthetic_live.SyntheticContinuation`); ``binance`` fetches closed
candles from Binance's public REST klines, spot for ``crypto`` and USDT-M futures for
``crypto_futures`` (:class:`~svc_engine.data.sources.BinanceMarkets`, paced by the documented
request weights, ``BINANCE_API_URL`` / ``BINANCE_FUTURES_URL``); ``off`` stops the feed. The listed
series are those the source lists from ``datasets/universe.toml`` and the store (a new series is
backfilled ``MARKET_FEED_BACKFILL_DAYS``), narrowed by ``MARKET_FEED_SYMBOLS``.

Example:
    >>> from types import SimpleNamespace
    >>> feed_worker(SimpleNamespace(settings=SimpleNamespace(market_feed="off"))) is None
    True
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass
from typing import Any, Protocol

import polars as pl

from svc_api.core.workers import Periodic
from svc_api.market.clock import market_clock_of, newest_close
from svc_api.market.series import catalog_of

logger = logging.getLogger("svc_api.market.feed")

COMPACT_AT = 2_000
"""Tail length (candles) at which a series' tail is merged into its Parquet file."""
LAG_CANDLES = 2
"""A series more than this many candles behind the market clock makes ``/healthz`` degraded (plus the
market time two feed passes take: at a replay of 600x a pass a second is ten minutes of market)."""


class KlineSource(Protocol):
    """Where a feed's candles come from."""

    def serves(self, market: str, symbol: str, timeframe: str) -> bool: ...

    def listed(self, stored: list[tuple[str, str, str]]) -> list[tuple[str, str, str]]: ...

    def closed_klines(
        self, market: str, symbol: str, timeframe: str, start_ms: int, until_ms: int
    ) -> pl.DataFrame: ...


@dataclass
class SeriesState:
    """What the feed last saw of one series (for ``/healthz``)."""

    newest_ms: int | None = None
    error: str | None = None


def source_of(services: Any) -> KlineSource | None:
    """The feed's source for ``settings.market_feed`` (None when ``off``); made once per app.

    Example:
        >>> from types import SimpleNamespace
        >>> source_of(SimpleNamespace(settings=SimpleNamespace(market_feed="off"))) is None
        True
    """
    kind = services.settings.market_feed
    if kind == "off":
        return None
    made = getattr(services, "market_source", None)
    if made is None:
        made = services.market_source = _make_source(services, kind)
    return made


def _make_source(services: Any, kind: str) -> KlineSource:
    store = catalog_of(services).store
    if kind == "embedded":
        from svc_engine.data.synthetic_live import SyntheticContinuation

        return SyntheticContinuation(store)
    if kind == "binance":
        from svc_engine.data.sources import BinanceMarkets

        settings = services.settings
        return BinanceMarkets.default(settings.binance_api_url, settings.binance_futures_url)
    raise ValueError(f"MARKET_FEED must be embedded, binance or off, got {kind!r}")


def listed_series(services: Any, source: KlineSource) -> list[tuple[str, str, str]]:
    """``(market, symbol, timeframe)`` of every series the feed keeps up to date: those the source
    lists (from the stored ones and ``datasets/universe.toml``), narrowed by ``MARKET_FEED_SYMBOLS``."""
    wanted = set(services.settings.market_feed_symbols)
    stored = catalog_of(services).entries().select("market", "symbol", "timeframe").rows()
    return [(m, s, tf) for m, s, tf in source.listed(stored) if not wanted or s in wanted]


def run_feed(services: Any) -> dict[str, int]:
    """One pass: every listed series brought up to the market clock's target.

    Returns ``{"series", "appended", "compacted", "failed"}``.
    """
    from svc_engine.data import timeframe_ms

    source = source_of(services)
    if source is None:
        return {"series": 0, "appended": 0, "compacted": 0, "failed": 0}
    catalog = catalog_of(services)
    store = catalog.store
    until_ms = market_clock_of(services, newest_close(catalog)).target() * 1000
    states = _states(services)
    series = listed_series(services, source)
    backfill_ms = int(services.settings.market_feed_backfill_days * 86_400_000)  # a series not stored yet
    appended = compacted = failed = 0
    for market, symbol, tf in series:
        state = states.setdefault((market, symbol, tf), SeriesState())
        step = timeframe_ms(tf)
        try:
            newest = store.newest_open(market, symbol, tf)
            start = newest + step if newest is not None else until_ms - backfill_ms
            if start + step <= until_ms:
                got = source.closed_klines(market, symbol, tf, start, until_ms)
                if got.height:
                    appended += store.append_klines(
                        market, symbol, tf, got, source=f"feed {market}/{symbol} {tf}"
                    )
                    newest = store.newest_open(market, symbol, tf)
            if _tail_length(store, market, symbol, tf) >= COMPACT_AT:
                compacted += store.compact(market, symbol, tf)
            state.newest_ms, state.error = newest, None
        except Exception as exc:  # one series' failure must not stop the others
            failed += 1
            state.error = f"{type(exc).__name__}: {exc}"
            logger.warning("market feed: %s/%s %s: %s", market, symbol, tf, state.error)
    if appended:
        catalog.refresh()
    return {"series": len(series), "appended": appended, "compacted": compacted, "failed": failed}


def _tail_length(store: Any, market: str, symbol: str, tf: str) -> int:
    from svc_engine.data.tail import RECORD

    size = store._tail_stat(store.key(market, symbol, tf))[1]
    return size // RECORD


def _states(services: Any) -> dict[tuple[str, str, str], SeriesState]:
    lock: threading.Lock = services.cached("market:feed:lock", float("inf"), threading.Lock)
    with lock:
        return services.cached("market:feed:states", float("inf"), dict)


def feed_health(services: Any) -> dict[str, Any]:
    """The market's clock, newest candle and the series that lag, read from the store (so it holds
    whichever process runs the feed): ``status`` is ``degraded`` when a listed series is more than
    ``LAG_CANDLES`` candles behind the clock or its last fetch failed, else ``ok``.

    Example:
        >>> from types import SimpleNamespace
        >>> feed_health(SimpleNamespace(settings=SimpleNamespace(market_feed="off")))
        {'status': 'ok', 'feed': 'off'}
    """
    from svc_engine.data import timeframe_ms

    source = source_of(services)
    if source is None:
        return {"status": "ok", "feed": "off"}
    catalog = catalog_of(services)
    clock_ms = market_clock_of(services, newest_close(catalog)).target() * 1000
    states = _states(services)
    settings = services.settings
    per_pass = 2_000 * settings.market_feed_seconds * max(settings.market_replay_speed, 1.0)
    lagging, lags, newest_all = [], {}, None
    for market, symbol, tf in listed_series(services, source):
        step = timeframe_ms(tf)
        newest = catalog.store.newest_open(market, symbol, tf)
        error = states.get((market, symbol, tf), SeriesState()).error
        if newest is not None:
            newest_all = max(newest_all or newest, newest + step)
        lag = None if newest is None else max(0, clock_ms - (newest + step))
        lags[f"{market}/{symbol} {tf}"] = lag
        if lag is None or lag > LAG_CANDLES * step + per_pass or error:
            lagging.append({"series": f"{market}/{symbol} {tf}", "lag_ms": lag, "error": error})
    return {
        "status": "degraded" if lagging else "ok",
        "feed": services.settings.market_feed,
        "clock_ms": clock_ms,
        "newest_close_ms": newest_all,
        "lagging": lagging[:50],
        "lagging_count": len(lagging),
        "lag_ms": lags,
    }


def feed_worker(services: Any) -> Periodic | None:
    """Runs :func:`run_feed` every ``MARKET_FEED_SECONDS`` (off with ``MARKET_FEED=off`` or 0 s)."""
    settings = services.settings
    if settings.market_feed == "off" or settings.market_feed_seconds <= 0:
        return None
    return Periodic("market_feed", settings.market_feed_seconds, lambda: run_feed(services))
