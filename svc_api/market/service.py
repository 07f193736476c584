"""Market data from the kline store: ticker, quote, candles, symbol info, available coins, favorites.

The public face of the market domain: the use cases the routes call (with the app's caches and
transactions) and what other domains use (``catalog_of``, ``find_series``, ``freshest``,
``crypto_series``). The work is done by one module per concern: :mod:`~svc_api.market.series`,
:mod:`~svc_api.market.ticker`, :mod:`~svc_api.market.quotes`, :mod:`~svc_api.market.klines`.

Every number comes from the data store's candles through the engine (``svc_engine.data``,
``svc_engine.instruments``); nothing here is a live exchange feed. Prices are strings with the
instrument's precision.

Example:
    >>> from pathlib import Path
    >>> from svc_api.core.services import Services
    >>> from svc_api.settings import Settings
    >>> services = Services(Settings(database_url="sqlite:///:memory:", secret_key=b"k" * 32,
    ...                              data_dir=Path("/nonexistent")))
    >>> coins(services)
    {'coins': [], 'count': 0}
"""

from __future__ import annotations

import math
import time
from typing import Any

from sqlalchemy.engine import Connection

from svc_api.core.errors import ApiError, Invalid, NotFound
from svc_api.core.store import Store
from svc_api.market import queries
from svc_api.market.clock import MarketClock, horizon, last_closed_open, market_clock_of, newest_close
from svc_api.market.contract import DataRange as DataRangeReply  # for replies of other domains
from svc_api.market.contract import row_schema  # the kline-like rows of trend replies
from svc_api.market.feed import feed_health, run_feed
from svc_api.market.klines import KLINES_DEFAULT, KLINES_MAX, klines
from svc_api.market.quotes import quote, spread_pct
from svc_api.market.series import (
    available_coins,
    catalog_of,
    crypto_series,
    display_of,
    find_series,
    fixed,
    freshest,
    rules,
    rules_market,
    serves_timeframe,
    symbol_info,
)
from svc_api.market.ticker import for_market_type, ticker_page, ticker_rows

MAX_FAVORITES = 100
TICKER_TTL = 5.0
"""Seconds the ticker rows (and the last prices of quotes) are reused."""
STALE_MAX = 300.0
"""Seconds the last ticker rows may still be served (``_cache.stale``) while the data store fails."""
SPREAD_TTL = 300.0
COINS_TTL = 60.0


def _data_store_unavailable(message: str) -> ApiError:
    return ApiError(
        503, "service_unavailable", reason="data_store_unavailable", retry_after=5, extra={"message": message}
    )


def current_rows(services: Any) -> tuple[list[dict[str, Any]], float | None]:
    """The ticker rows of every crypto series, computed at most every ``TICKER_TTL`` seconds, and
    None; or, while the data store cannot be read, the last rows computed within ``STALE_MAX``
    seconds and their age (a 503 when there are none).

    Example:
        >>> from pathlib import Path
        >>> from svc_api.core.services import Services
        >>> from svc_api.settings import Settings
        >>> services = Services(Settings(database_url="sqlite:///:memory:", secret_key=b"k" * 32,
        ...                              data_dir=Path("/nonexistent")))
        >>> current_rows(services)
        ([], None)
    """
    last: dict[str, Any] = services.cached("market:ticker:last", math.inf, dict)

    def compute() -> list[dict[str, Any]]:
        # Looked up here at each call, so that a replaced ticker_rows (tests) is the one used.
        rows = ticker_rows(catalog_of(services))
        last.update(rows=rows, at=time.monotonic())
        return rows

    try:
        return services.cached("market:ticker", TICKER_TTL, compute), None
    except OSError as exc:
        age = time.monotonic() - last.get("at", -math.inf)
        if age > STALE_MAX:
            raise _data_store_unavailable(f"the data store cannot be read: {exc}") from None
        return last["rows"], age


def market_ticker(
    services: Any,
    svc_id: str | None,
    *,
    kind: str,
    search: str | None,
    priority: list[str],
    page: int,
    limit: int,
) -> dict[str, Any]:
    """One page of the ticker, the favorites of ``svc_id`` (None: a guest) flagged; rows served stale
    while the data store fails carry ``_cache``.

    Example:
        >>> from pathlib import Path
        >>> from svc_api.core.services import Services
        >>> from svc_api.settings import Settings
        >>> services = Services(Settings(database_url="sqlite:///:memory:", secret_key=b"k" * 32,
        ...                              data_dir=Path("/nonexistent")))
        >>> market_ticker(services, None, kind="spot", search=None, priority=[], page=0, limit=5)
        {'items': [], 'page': 0, 'count': 0, 'total': 0, 'last_page': 0}
    """
    rows, stale_for = current_rows(services)
    held = [] if svc_id is None else favorites_of(services.store, svc_id)
    reply = ticker_page(
        rows, kind=kind, search=search, priority=priority, favorites=held, page=page, limit=limit
    )
    if stale_for is not None:
        reply["_cache"] = {"stale": True, "age_seconds": round(stale_for, 1)}
    return reply


def market_quote(services: Any, symbol: str, *, kind: str, now_ms: int) -> dict[str, Any]:
    """The quote of a USDT pair from the fresh ticker (never from stale rows: a quote is a price to
    act on), with the engine's default commission.

    Example:
        >>> market_quote(None, "BTCEUR", kind="spot", now_ms=0)
        Traceback (most recent call last):
        ...
        svc_api.core.errors.Invalid: symbol must be a USDT pair such as BTCUSDT, got 'BTCEUR'
    """
    from svc_engine.sim import Settings as SimSettings

    if not symbol.endswith("USDT") or symbol == "USDT":
        raise Invalid(f"symbol must be a USDT pair such as BTCUSDT, got {symbol!r}")
    rows, stale_for = current_rows(services)
    if stale_for is not None:
        raise _data_store_unavailable("the data store cannot be read; no fresh price")
    row = next((r for r in for_market_type(rows, kind) if r["symbol"] == symbol), None)
    if row is None:
        raise NotFound(f"no market data for {symbol}")
    spread = coin_spread(services, row["market"], symbol)
    return quote(
        row["market"],
        symbol,
        kind=kind,
        last=float(row["last_price"]),
        spread=spread,
        commission_pct=SimSettings().commission_pct,
        now_ms=now_ms,
    )


def coin_spread(services: Any, market: str, symbol: str) -> float:
    """A coin's full spread in percent (its volume tier over the last days), reused ``SPREAD_TTL`` s:
    quotes and live signals execute at it.

    Example:
        >>> from pathlib import Path
        >>> from svc_api.core.services import Services
        >>> from svc_api.settings import Settings
        >>> s = Services(Settings(database_url="sqlite://", secret_key=b"k" * 32, data_dir=Path("/none")))
        >>> coin_spread(s, "crypto", "BTCUSDT")
        Traceback (most recent call last):
        ...
        svc_api.core.errors.NotFound: no candles are stored for BTCUSDT (crypto)
    """
    catalog = catalog_of(services)
    return float(
        services.cached(
            f"market:spread:{market}:{symbol}", SPREAD_TTL, lambda: spread_pct(catalog, market, symbol)
        )
    )


def series_klines(
    services: Any, name: str, interval: str, *, start_ms: int | None, end_ms: int | None, limit: int
) -> dict[str, Any]:
    """:func:`~svc_api.market.klines.klines` of the series named ``name`` (data or display symbol).

    Example:
        >>> from pathlib import Path
        >>> from svc_api.core.services import Services
        >>> from svc_api.settings import Settings
        >>> services = Services(Settings(database_url="sqlite:///:memory:", secret_key=b"k" * 32,
        ...                              data_dir=Path("/nonexistent")))
        >>> series_klines(services, "BTC", "1h", start_ms=None, end_ms=None, limit=5)
        Traceback (most recent call last):
        ...
        svc_api.core.errors.NotFound: no candles are stored for BTCUSDT (crypto)
    """
    catalog = catalog_of(services)
    market, symbol = find_series(catalog, name)
    return klines(catalog, market, symbol, interval, start_ms=start_ms, end_ms=end_ms, limit=limit)


def series_info(services: Any, name: str) -> dict[str, Any]:
    """:func:`~svc_api.market.series.symbol_info` of the series named ``name``.

    Example:
        >>> from pathlib import Path
        >>> from svc_api.core.services import Services
        >>> from svc_api.settings import Settings
        >>> services = Services(Settings(database_url="sqlite:///:memory:", secret_key=b"k" * 32,
        ...                              data_dir=Path("/nonexistent")))
        >>> series_info(services, "ETHUSDT")
        Traceback (most recent call last):
        ...
        svc_api.core.errors.NotFound: no candles are stored for ETHUSDT (crypto)
    """
    catalog = catalog_of(services)
    return symbol_info(catalog, *find_series(catalog, name))


def coins(services: Any) -> dict[str, Any]:
    """:func:`~svc_api.market.series.available_coins`, reused for ``COINS_TTL`` seconds (see the
    module example)."""
    return services.cached("market:coins", COINS_TTL, lambda: available_coins(catalog_of(services)))


# ---- favorites ------------------------------------------------------------------------------------


def favorites(conn: Connection, svc_id: str) -> list[str]:
    """The caller's favorite symbols, oldest first.

    Example:
        >>> with store.read() as conn:
        ...     favorites(conn, "AB12CD")
        []
    """
    return queries.favorite_symbols(conn, svc_id)


def set_favorite(conn: Connection, svc_id: str, name: str, verb: str, *, now: int) -> dict[str, Any]:
    """Add or remove one favorite (``name`` a checked symbol, ``verb`` ``add`` or ``remove``); both
    are idempotent. The 101st favorite is a 400.

    Example:
        >>> with store.write() as conn:
        ...     set_favorite(conn, "AB12CD", "BTCUSDT", "remove", now=0)
        {'symbol': 'BTCUSDT', 'action': 'remove', 'favorites': []}
    """
    # Lock the account row: two concurrent adds must not both pass the limit check.
    queries.lock_account(conn, svc_id)
    held = favorites(conn, svc_id)
    if verb == "add" and name not in held:
        if len(held) >= MAX_FAVORITES:
            raise Invalid(f"at most {MAX_FAVORITES} favorites; remove one before adding {name}")
        queries.insert_favorite(conn, svc_id, name, now=now)
        held.append(name)
    elif verb == "remove" and name in held:
        queries.delete_favorite(conn, svc_id, name)
        held.remove(name)
    return {"symbol": name, "action": verb, "favorites": held}


def favorites_of(store: Store, svc_id: str) -> list[str]:
    """:func:`favorites` in a read transaction.

    Example:
        >>> favorites_of(store, "AB12CD")
        []
    """
    with store.read() as conn:
        return favorites(conn, svc_id)


def favorite(store: Store, svc_id: str, name: str, verb: str, *, now: int) -> dict[str, Any]:
    """:func:`set_favorite` in a write transaction.

    Example:
        >>> favorite(store, "AB12CD", "BTCUSDT", "remove", now=0)["favorites"]
        []
    """
    with store.write() as conn:
        return set_favorite(conn, svc_id, name, verb, now=now)


__all__ = [
    "KLINES_DEFAULT",
    "KLINES_MAX",
    "DataRangeReply",
    "MarketClock",
    "available_coins",
    "catalog_of",
    "coin_spread",
    "coins",
    "crypto_series",
    "current_rows",
    "display_of",
    "favorite",
    "favorites",
    "favorites_of",
    "feed_health",
    "find_series",
    "fixed",
    "freshest",
    "horizon",
    "last_closed_open",
    "market_clock_of",
    "market_quote",
    "market_ticker",
    "newest_close",
    "row_schema",
    "rules",
    "rules_market",
    "run_feed",
    "series_info",
    "series_klines",
    "serves_timeframe",
    "set_favorite",
    "ticker_rows",
]
