"""Trend-break signals kept in the store, their tracking, and the sentiment indicator.

The engine finds the signals (``svc_engine.trend``); the refresh job (:mod:`svc_api.trends.refresh`)
stores them here. Signals age in **market time**: ``now`` is the close of the newest candle in the
data store (never later than the wall clock), so a store that is not being fed keeps showing its
latest signals instead of expiring all of them. A signal expires ``SIGNAL_TTL`` seconds after its
candle; while at least one user tracks it, it has no expiry; the last untrack gives it back.

This module is the domain's public face: the use cases the routes call (with the app's caches and
transactions), the store side of the refresh job, and the names other modules use. The work is done
by one module per concern: :mod:`~svc_api.trends.signals` (the stored signals and their tracking,
in the caller's transaction), :mod:`~svc_api.trends.detail` (one signal in full) and
:mod:`~svc_api.trends.sentiment` (the sentiment indicator).

Example:
    >>> SIGNAL_TTL // 86_400, WAYS
    (7, ('BUY', 'SELL'))
"""

from __future__ import annotations

import math
from typing import Any

from svc_api.core.errors import Forbidden, NotFound
from svc_api.core.fields import last_page
from svc_api.core.store import Store
from svc_api.market.service import catalog_of
from svc_api.trends.detail import RecentDetails, detail, summary
from svc_api.trends.sentiment import parse_market_key, sentiment_scores
from svc_api.trends.signals import (
    SIGNAL_TTL,
    SignalKey,
    list_signals,
    market_now,
    remove_expired,
    signal_rows,
    track,
    tracked_page,
    untrack,
    upsert_signals,
)

WAYS = ("BUY", "SELL")
FREE_PLANS = ("guest", "free")
LIST_TTL = 5.0
"""Seconds the first page of ``trend_signals`` (the one every guest asks for) is reused."""
SENTIMENT_TTL = 30.0


class LicenseRequired(Forbidden):
    """A page of ``trend_signals`` after the first without a paid plan (403)."""

    code = "license_required"


def store_scan(
    store: Store, rows: list[dict[str, Any]], *, now: int, ttl: int = SIGNAL_TTL
) -> tuple[int, int]:
    """The refresh job's write: delete the expired signals and insert the new ``rows``, in one
    transaction; returns ``(added, removed)``.

    Example:
        >>> store_scan(store, [], now=0)
        (0, 0)
    """
    with store.write() as conn:
        removed = remove_expired(conn, now=now)
        added = upsert_signals(conn, rows, now=now, ttl=ttl)
    return added, removed


# ---- use cases of the routes (with the app's caches; one transaction each) ------------------------


def signals_page(services: Any, *, plan: str, page: int, limit: int, wall_now: int) -> dict[str, Any]:
    """One page of the live signals, newest first; pages after the first need a paid plan. The
    first page, the one every guest asks for, is reused for ``LIST_TTL`` seconds.

    Example:
        >>> from svc_api.core.services import Services
        >>> from svc_api.migrations import migrate
        >>> from svc_api.settings import Settings
        >>> services = Services(Settings(database_url="sqlite://", secret_key=b"k" * 32,
        ...                              data_dir="/nonexistent"), migrate=migrate)
        >>> signals_page(services, plan="free", page=0, limit=50, wall_now=0)
        {'items': [], 'page': 0, 'count': 0, 'last_page': 0}
        >>> signals_page(services, plan="free", page=1, limit=50, wall_now=0)
        Traceback (most recent call last):
        ...
        svc_api.trends.service.LicenseRequired: pages of trend_signals after page 0 need a license \
(a paid plan)
    """
    if page > 0 and plan in FREE_PLANS:
        raise LicenseRequired("pages of trend_signals after page 0 need a license (a paid plan)")

    def compute() -> dict[str, Any]:
        now = market_now(catalog_of(services), wall_now)
        with services.store.read() as conn:
            items, total = list_signals(conn, page=page, limit=limit, now=now)
        return {"items": items, "page": page, "count": len(items), "last_page": last_page(total, limit)}

    if page == 0:
        return services.cached(f"trends:list:{limit}", LIST_TTL, compute)
    return compute()


def signal_detail(
    services: Any, symbol: str, timeframe: str, ts: int, way: str | None = None
) -> dict[str, Any]:
    """The engine's detail of one signal (``way`` None: either way), reused for a while (lists ask
    for many; see :class:`~svc_api.trends.detail.RecentDetails`).

    Example:
        >>> from svc_api.core.services import Services
        >>> from svc_api.migrations import migrate
        >>> from svc_api.settings import Settings
        >>> services = Services(Settings(database_url="sqlite://", secret_key=b"k" * 32,
        ...                              data_dir="/nonexistent"), migrate=migrate)
        >>> signal_detail(services, "BTCUSDT", "1h", 3600)
        Traceback (most recent call last):
        ...
        svc_api.core.errors.NotFound: no trend signal of BTCUSDT 1h at timestamp 3600
    """
    store = catalog_of(services).store
    cache: RecentDetails = services.cached("trends:details", math.inf, RecentDetails)
    return cache.get((symbol, timeframe, ts, way), lambda: detail(store, symbol, timeframe, ts, way))


def indicator(services: Any, market_key: str | None) -> dict[str, Any]:
    """The latest sentiment of the series of ``market_key``, reused for ``SENTIMENT_TTL`` seconds.

    Example:
        >>> from svc_api.core.services import Services
        >>> from svc_api.migrations import migrate
        >>> from svc_api.settings import Settings
        >>> services = Services(Settings(database_url="sqlite://", secret_key=b"k" * 32,
        ...                              data_dir="/nonexistent"), migrate=migrate)
        >>> indicator(services, "BTCUSDT#1h")
        Traceback (most recent call last):
        ...
        svc_api.core.errors.NotFound: no candles are stored for BTCUSDT (crypto)
    """
    from svc_engine.trend import sentiment_item

    catalog = catalog_of(services)
    key, market, symbol, timeframe = parse_market_key(catalog, market_key)

    def compute() -> dict[str, Any]:
        scores = sentiment_scores(catalog, market, symbol, timeframe, count=1, before=None)
        item = sentiment_item(key, scores.row(-1, named=True)) if scores.height else None
        return {"market_key": key, "item": item, "count": int(item is not None)}

    return services.cached(f"trends:indicator:{key}", SENTIMENT_TTL, compute)


def indicator_history(
    services: Any, market_key: str | None, *, limit: int, before: int | None
) -> dict[str, Any]:
    """The sentiment of the last ``limit`` candles of the series opening before ``before`` (seconds).

    Example:
        >>> from svc_api.core.services import Services
        >>> from svc_api.migrations import migrate
        >>> from svc_api.settings import Settings
        >>> services = Services(Settings(database_url="sqlite://", secret_key=b"k" * 32,
        ...                              data_dir="/nonexistent"), migrate=migrate)
        >>> indicator_history(services, "BTCUSDT", limit=5, before=None)
        Traceback (most recent call last):
        ...
        svc_api.core.errors.Invalid: market_key must look like BTCUSDT#1h (<SYMBOL>#<timeframe>), \
got 'BTCUSDT'
    """
    from svc_engine.trend import sentiment_history

    catalog = catalog_of(services)
    key, market, symbol, timeframe = parse_market_key(catalog, market_key)
    scores = sentiment_scores(catalog, market, symbol, timeframe, count=limit, before=before)
    return sentiment_history(key, scores, limit=limit, before=before)


def track_signal(services: Any, svc_id: str, key: SignalKey, *, wall_now: int) -> dict[str, bool]:
    """:func:`track` in a write transaction, at the market time of ``wall_now``.

    Example:
        >>> from svc_api.core.services import Services
        >>> from svc_api.migrations import migrate
        >>> from svc_api.settings import Settings
        >>> services = Services(Settings(database_url="sqlite://", secret_key=b"k" * 32,
        ...                              data_dir="/nonexistent"), migrate=migrate)
        >>> track_signal(services, "AB12CD", SignalKey("BTCUSDT", "1h", 3600, "BUY"), wall_now=0)
        Traceback (most recent call last):
        ...
        svc_api.core.errors.NotFound: no live trend signal BTCUSDT 1h BUY at 3600 (unknown or expired)
    """
    now = market_now(catalog_of(services), wall_now)
    with services.store.write() as conn:
        return track(conn, svc_id, key, now=now)


def untrack_signal(store: Store, svc_id: str, key: SignalKey) -> dict[str, bool]:
    """:func:`untrack` in a write transaction.

    Example:
        >>> from svc_api.core.services import Services
        >>> from svc_api.migrations import migrate
        >>> from svc_api.settings import Settings
        >>> services = Services(Settings(database_url="sqlite://", secret_key=b"k" * 32,
        ...                              data_dir="/nonexistent"), migrate=migrate)
        >>> untrack_signal(services.store, "AB12CD", SignalKey("BTCUSDT", "1h", 3600, "BUY"))
        {'tracked': False}
    """
    with store.write() as conn:
        return untrack(conn, svc_id, key)


def tracked_signals(
    services: Any, svc_id: str, *, limit: int, after: SignalKey | None
) -> tuple[list[dict[str, Any]], SignalKey | None]:
    """The caller's tracked signals in full, and the key to continue after (None on the last page).
    A signal whose candles left the data store is shown as its record without chart.

    Example:
        >>> from svc_api.core.services import Services
        >>> from svc_api.migrations import migrate
        >>> from svc_api.settings import Settings
        >>> services = Services(Settings(database_url="sqlite://", secret_key=b"k" * 32,
        ...                              data_dir="/nonexistent"), migrate=migrate)
        >>> tracked_signals(services, "AB12CD", limit=20, after=None)
        ([], None)
    """
    with services.store.read() as conn:
        page, more = tracked_page(conn, svc_id, limit=limit, after=after)
    items = []
    for key, is_return in page:
        try:
            items.append(signal_detail(services, key.symbol, key.timeframe, key.ts, key.way))
        except NotFound:
            row = {
                "symbol": key.symbol,
                "timeframe": key.timeframe,
                "ts": key.ts,
                "way": key.way,
                "is_return_to_trend": is_return,
            }
            items.append({**summary(row), "trend_data": {}})
    return items, page[-1][0] if more else None


__all__ = [
    "FREE_PLANS",
    "LIST_TTL",
    "SIGNAL_TTL",
    "WAYS",
    "LicenseRequired",
    "SignalKey",
    "indicator",
    "indicator_history",
    "list_signals",
    "market_now",
    "remove_expired",
    "signal_detail",
    "signal_rows",
    "signals_page",
    "store_scan",
    "summary",
    "track",
    "track_signal",
    "tracked_page",
    "tracked_signals",
    "untrack",
    "untrack_signal",
    "upsert_signals",
]
