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

from svc_api.core.dispatch import Call, Operation, lookups_as_404
from svc_api.core.errors import Invalid
from svc_api.core.fields import check_name, market_type, page_number, symbol_list, unix_ms
from svc_api.market import service as market

clock: Callable[[], float] = time.time
"""The wall clock of quotes and favorites (replaceable in tests)."""


def _market_ticker(call: Call) -> dict[str, Any]:
    p = call.params
    return market.market_ticker(
        call.services,
        call.principal.svc_id if call.principal.identified else None,
        kind=market_type(p.get("market")),
        search=check_name(p.get("search"), "search", required=False),
        priority=symbol_list(p.get("priority"), "priority"),
        page=page_number(p.get("page")),
        limit=call.page(500, 1, 1000, clamp=True),
    )


def _market_quote(call: Call) -> dict[str, Any]:
    p = call.params
    symbol = check_name(p.get("symbol"), "symbol") or ""
    kind = market_type(p.get("market"))
    return market.market_quote(call.services, symbol, kind=kind, now_ms=int(clock() * 1000))


def _get_klines(call: Call) -> dict[str, Any]:
    p = call.params
    name = check_name(p.get("symbol"), "symbol") or ""
    interval = p.get("interval") or "1h"
    if not isinstance(interval, str):
        raise Invalid("interval must be a timeframe such as 1h")
    return market.series_klines(
        call.services,
        name,
        interval,
        start_ms=unix_ms(p.get("start_time"), "start_time"),
        end_ms=unix_ms(p.get("end_time"), "end_time"),
        limit=call.page(market.KLINES_DEFAULT, 1, market.KLINES_MAX, clamp=True),
    )


def _market_symbol_info(call: Call) -> dict[str, Any]:
    return market.series_info(call.services, check_name(call.params.get("symbol"), "symbol") or "")


def _available_coins(call: Call) -> dict[str, Any]:
    return market.coins(call.services)


def _favorite_coin(call: Call) -> dict[str, Any]:
    p = call.params
    return market.favorite(call.store, call.svc_id, p.get("symbol"), p.get("action"), now=int(clock()))


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
