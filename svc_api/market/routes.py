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

import time
from collections.abc import Callable
from typing import Any

from svc_api.core.contract import NoFields
from svc_api.core.dispatch import Call, Operation, lookups_as_404
from svc_api.market import contract as c
from svc_api.market import service as market

clock: Callable[[], float] = time.time
"""The wall clock of quotes and favorites (replaceable in tests)."""


def _market_ticker(call: Call, req: c.MarketTickerRequest) -> dict[str, Any]:
    return market.market_ticker(
        call.services,
        call.principal.svc_id if call.principal.identified else None,
        kind=req.market,
        search=req.search,
        priority=req.priority,
        page=req.page,
        limit=req.limit,
    )


def _market_quote(call: Call, req: c.MarketQuoteRequest) -> dict[str, Any]:
    return market.market_quote(call.services, req.symbol, kind=req.market, now_ms=int(clock() * 1000))


def _get_klines(call: Call, req: c.KlinesRequest) -> dict[str, Any]:
    return market.series_klines(
        call.services,
        req.symbol,
        req.interval,
        start_ms=req.start_time,
        end_ms=req.end_time,
        limit=req.limit,
    )


def _market_symbol_info(call: Call, req: c.SymbolInfoRequest) -> dict[str, Any]:
    return market.series_info(call.services, req.symbol)


def _available_coins(call: Call, req: NoFields) -> dict[str, Any]:
    return market.coins(call.services)


def _favorite_coin(call: Call, req: c.FavoriteCoinRequest) -> dict[str, Any]:
    return market.favorite(call.store, call.svc_id, req.symbol, req.action, now=int(clock()))


TRADINGDATA: dict[str, Operation] = {
    "market_ticker": Operation(
        lookups_as_404(_market_ticker),
        access="public",
        request=c.MarketTickerRequest,
        reply=c.MarketTicker,
        summary="One page of the ticker (favorites flagged for identified callers).",
    ),
    "market_quote": Operation(
        lookups_as_404(_market_quote),
        access="public",
        request=c.MarketQuoteRequest,
        reply=c.MarketQuote,
        summary="The quote of a USDT pair, with the default commission.",
        errors=c.QUOTE_ERRORS,
    ),
    "get_klines": Operation(
        lookups_as_404(_get_klines),
        access="public",
        request=c.KlinesRequest,
        reply=c.Klines,
        summary="Candles of a stored series, in Binance's klines shape.",
        errors=c.KLINES_ERRORS,
    ),
    "market_symbol_info": Operation(
        lookups_as_404(_market_symbol_info),
        access="public",
        request=c.SymbolInfoRequest,
        reply=c.SymbolInfo,
        summary="A stored series: its instrument, precision and data ranges.",
        errors=(c.NOT_STORED,),
    ),
}

USER: dict[str, Operation] = {
    "available_coins": Operation(
        lookups_as_404(_available_coins),
        request=NoFields,
        reply=c.AvailableCoins,
        summary="The coins with stored candles.",
    ),
    "favorite_coin": Operation(
        _favorite_coin,
        request=c.FavoriteCoinRequest,
        reply=c.FavoriteCoins,
        summary="Add (default) or remove one favorite coin.",
        errors=c.FAVORITE_ERRORS,
    ),
}
