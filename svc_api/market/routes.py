"""Market data over HTTP: ``/tradingdata`` ``market_ticker``, ``market_quote``, ``get_klines``,
``market_symbol_info`` (guest-accessible) and ``/user`` ``available_coins`` and ``favorite_coin``.

Parameter names and reply shapes are listed in ``docs/market-api.md``.

Example:
    >>> sorted(TRADINGDATA)
    ['get_klines', 'market_quote', 'market_symbol_info', 'market_ticker']
    >>> sorted(USER)
    ['available_coins', 'favorite_coin']
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Any

from svc_api.core.dispatch import Call, Operation, lookups_as_404
from svc_api.core.errors import ApiError, Invalid, NotFound
from svc_api.core.fields import check_name, page_number
from svc_api.market import service as market

TICKER_TTL = 5.0
"""Seconds the ticker rows (and the last prices of quotes) are reused."""
STALE_MAX = 300.0
"""Seconds the last ticker rows may still be served (``_cache.stale``) while the data store fails."""
SPREAD_TTL = 300.0
COINS_TTL = 60.0

clock: Callable[[], float] = time.time
"""The wall clock of quotes (replaceable in tests)."""


def ticker_rows(services: Any) -> tuple[list[dict[str, Any]], float | None]:
    """The ticker rows of every crypto series, computed at most every ``TICKER_TTL`` seconds, and
    None; or, while the data store cannot be read, the last rows computed within ``STALE_MAX``
    seconds and their age (a 503 when there are none)."""
    last: dict[str, Any] = services.cached("market:ticker:last", math.inf, dict)

    def compute() -> list[dict[str, Any]]:
        rows = market.ticker_rows(market.catalog_of(services))
        last.update(rows=rows, at=time.monotonic())
        return rows

    try:
        return services.cached("market:ticker", TICKER_TTL, compute), None
    except OSError as exc:
        age = time.monotonic() - last.get("at", -math.inf)
        if age > STALE_MAX:
            raise ApiError(503, "service_unavailable", reason="data_store_unavailable", retry_after=5,
                           extra={"message": f"the data store cannot be read: {exc}"}) from None
        return last["rows"], age


def _favorites(call: Call) -> list[str]:
    if not call.principal.identified:
        return []
    with call.store.read() as conn:
        return market.favorites(conn, call.svc_id)


def _market_ticker(call: Call) -> dict[str, Any]:
    p = call.params
    kind = market.market_type(p.get("market"))
    search = check_name(p.get("search"), "search", required=False)
    priority = market.parse_priority(p.get("priority"))
    page = page_number(p.get("page"))
    limit = call.page(500, 1, 1000, clamp=True)
    rows, stale_for = ticker_rows(call.services)
    reply = market.ticker_page(rows, kind=kind, search=search, priority=priority, favorites=_favorites(call),
                               page=page, limit=limit)
    if stale_for is not None:
        reply["_cache"] = {"stale": True, "age_seconds": round(stale_for, 1)}
    return reply


def _market_quote(call: Call) -> dict[str, Any]:
    from svc_engine.sim import Settings as SimSettings

    p = call.params
    symbol = check_name(p.get("symbol"), "symbol") or ""
    if not symbol.endswith("USDT") or symbol == "USDT":
        raise Invalid(f"symbol must be a USDT pair such as BTCUSDT, got {symbol!r}")
    kind = market.market_type(p.get("market"))
    rows, stale_for = ticker_rows(call.services)
    if stale_for is not None:  # a quote is a price to act on: never an old one
        raise ApiError(503, "service_unavailable", reason="data_store_unavailable", retry_after=5,
                       extra={"message": "the data store cannot be read; no fresh price"})
    row = next((r for r in market.for_market_type(rows, kind) if r["symbol"] == symbol), None)
    if row is None:
        raise NotFound(f"no market data for {symbol}")
    catalog = market.catalog_of(call.services)
    spread = call.services.cached(f"market:spread:{row['market']}:{symbol}", SPREAD_TTL,
                                  lambda: market.spread_pct(catalog, row["market"], symbol))
    return market.quote(row["market"], symbol, kind=kind, last=float(row["last_price"]), spread=spread,
                        commission_pct=SimSettings().commission_pct, now_ms=int(clock() * 1000))


def _series(call: Call) -> tuple[Any, str, str]:
    catalog = market.catalog_of(call.services)
    name = check_name(call.params.get("symbol"), "symbol") or ""
    found_market, symbol = market.find_series(catalog, name)
    return catalog, found_market, symbol


def _get_klines(call: Call) -> dict[str, Any]:
    p = call.params
    catalog, found_market, symbol = _series(call)
    interval = p.get("interval") or "1h"
    if not isinstance(interval, str):
        raise Invalid("interval must be a timeframe such as 1h")
    return market.klines(catalog, found_market, symbol, interval,
                         start_ms=market.parse_ms(p.get("start_time"), "start_time"),
                         end_ms=market.parse_ms(p.get("end_time"), "end_time"),
                         limit=call.page(market.KLINES_DEFAULT, 1, market.KLINES_MAX, clamp=True))


def _market_symbol_info(call: Call) -> dict[str, Any]:
    catalog, found_market, symbol = _series(call)
    return market.symbol_info(catalog, found_market, symbol)


def _available_coins(call: Call) -> dict[str, Any]:
    services = call.services
    return services.cached(
        "market:coins", COINS_TTL, lambda: market.available_coins(market.catalog_of(services))
    )


def _favorite_coin(call: Call) -> dict[str, Any]:
    p = call.params
    with call.store.write() as conn:
        return market.set_favorite(conn, call.svc_id, p.get("symbol"), p.get("action"), now=int(clock()))


TRADINGDATA: dict[str, Operation] = {
    "market_ticker": Operation(lookups_as_404(_market_ticker), access="public"),
    "market_quote": Operation(lookups_as_404(_market_quote), access="public"),
    "get_klines": Operation(lookups_as_404(_get_klines), access="public"),
    "market_symbol_info": Operation(lookups_as_404(_market_symbol_info), access="public"),
}

USER: dict[str, Operation] = {
    "available_coins": Operation(lookups_as_404(_available_coins)),
    "favorite_coin": Operation(_favorite_coin),
}
