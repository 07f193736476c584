"""The request and reply models of the market operations: ``/tradingdata`` ``market_ticker``,
``market_quote``, ``get_klines``, ``market_symbol_info`` and ``/user`` ``available_coins``,
``favorite_coin``.

Example:
    >>> request = {"market": "futures", "priority": "btcusdt,", "limit": "5000"}
    >>> MarketTickerRequest.model_validate(request).limit
    1000
    >>> FavoriteCoinRequest.model_validate({"symbol": "btc"}).action
    'add'
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, WithJsonSchema

from svc_api.core.contract import Check, ErrorDoc, Fields, Shape
from svc_api.core.errors import Invalid
from svc_api.core.fields import check_name, market_type, page_number, symbol_list, unix_ms
from svc_api.core.params import Limit
from svc_api.market.klines import KLINES_DEFAULT, KLINES_MAX

Count = Annotated[int, Field(ge=0)]
SYMBOL_SCHEMA = {"type": "string", "pattern": "^[A-Za-z0-9]{1,32}$", "description": "A symbol (upper-cased)."}


def _symbol(value: object, name: str) -> str:
    return check_name(value, name) or ""


def _search(value: object, name: str) -> str | None:
    return check_name(value, name, required=False)


def _page(value: object, name: str) -> int:
    return page_number(value)


def _market(value: object, name: str) -> str:
    return market_type(value)


def _interval(value: object, name: str) -> str:
    # Checked against the stored timeframes by the service, after the series is found (404 first).
    interval = value or "1h"
    if not isinstance(interval, str):
        raise Invalid("interval must be a timeframe such as 1h")
    return interval


def _action(value: object, name: str) -> str:
    verb = "add" if value is None or value == "" else value
    if verb not in ("add", "remove"):
        raise Invalid(f"action must be add or remove, got {value!r}")
    return str(verb)


Symbol = Annotated[str, Check(_symbol, SYMBOL_SCHEMA, required=True)]
MarketKind = Annotated[
    Literal["spot", "futures"],
    Check(_market, {"enum": ["spot", "futures"], "default": "spot", "description": "The market type."}),
]
UnixMs = Annotated[
    int | None, Check(unix_ms, {"type": "integer", "minimum": 0, "description": "Unix milliseconds."})
]


class MarketTickerRequest(Fields):
    """``market_ticker``: one page of the ticker, searched and ordered."""

    market: MarketKind
    search: Annotated[
        str | None,
        Check(
            _search, {"type": "string", "pattern": "^[A-Za-z0-9]{1,32}$", "description": "Part of a symbol."}
        ),
    ]
    priority: Annotated[
        list[str],
        Check(
            symbol_list,
            {"type": "string", "description": "Comma-separated symbols listed first, in their order."},
        ),
    ]
    page: Annotated[int, Check(_page, {"type": "integer", "minimum": 0, "default": 0})]
    limit: Limit(500, 1, 1000, clamp=True)


class MarketQuoteRequest(Fields):
    """``market_quote``: the quote of a USDT pair."""

    symbol: Symbol
    """A USDT pair such as BTCUSDT."""
    market: MarketKind


class KlinesRequest(Fields):
    """``get_klines``: candles of a stored series."""

    symbol: Symbol
    interval: Annotated[
        str, Check(_interval, {"type": "string", "default": "1h", "description": "A timeframe such as 1h."})
    ]
    start_time: UnixMs
    end_time: UnixMs
    limit: Limit(KLINES_DEFAULT, 1, KLINES_MAX, clamp=True)


class SymbolInfoRequest(Fields):
    """``market_symbol_info``: a stored series' instrument and data ranges."""

    symbol: Symbol


class FavoriteCoinRequest(Fields):
    """``favorite_coin``: add (default) or remove one favorite."""

    symbol: Symbol
    action: Annotated[Literal["add", "remove"], Check(_action, {"enum": ["add", "remove"], "default": "add"})]


class TickerItem(Shape):
    """One ticker row."""

    symbol: str
    last_price: str
    change_percent_24h: str
    quote_volume_24h: str
    market_type: str
    price_precision: int | None = None
    favorite: bool | None = None
    """Whether the caller holds it as a favorite (identified callers only)."""


class MarketTicker(Shape):
    """One page of the ticker."""

    items: list[TickerItem]
    page: Count
    count: Count
    total: Count
    last_page: Count
    cache: Annotated[dict[str, Any] | None, Field(alias="_cache")] = None
    """``{stale: true, age_seconds}`` when the rows are served stale while the data store fails."""


class MarketQuote(Shape):
    """The quote of a USDT pair."""

    symbol: str
    market_type: str
    bid_price: str
    ask_price: str
    last_price: str
    spread: str | None = None
    spread_percent: str | None = None
    commission_rate: str | None = None
    commission_percent: str | None = None
    timestamp: int
    """Unix milliseconds."""


def row_schema(items: dict[str, Any], size: int, description: str) -> WithJsonSchema:
    """The description of a fixed-size row (a kline): ``items`` typed, ``size`` long.

    Not ``prefixItems`` (what a bare ``tuple`` gives): schemathesis 4 rewrites ``prefixItems`` into
    draft 4's ``items: [...]`` and then checks replies under 2020-12, where that list is an invalid
    schema, so every reply holding a row failed to validate. ``items`` with a size is read by every
    generator (openapi-python-client, openapi-generator); the Python type stays the tuple.

    Example:
        >>> row_schema({"type": "number"}, 3, "a point").json_schema["maxItems"]
        3
    """
    schema = {"type": "array", "items": items, "minItems": size, "maxItems": size}
    return WithJsonSchema({**schema, "description": description})


Kline = Annotated[
    tuple[int, str, str, str, str, str],
    row_schema(
        {"type": ["integer", "string"]},
        6,
        "`[open_time_ms, open, high, low, close, volume]`: Unix ms, then decimal strings.",
    ),
]
"""``[open_time_ms, open, high, low, close, volume]``, prices and volume as decimal strings."""


class Klines(Shape):
    """Candles in Binance's ``klines`` shape."""

    symbol: str
    market: str | None = None
    interval: str
    klines: list[Kline]
    """``[open_time_ms, open, high, low, close, volume]``, prices and volume as decimal strings."""
    count: Count


class DataRange(Shape):
    """The stored candles of one timeframe."""

    first_ts: int
    """Unix seconds."""
    last_ts: int
    """Unix seconds."""
    first_date: str
    last_date: str
    total_candles: int


class SymbolPrecision(Shape):
    """The instrument's trading precision."""

    price_precision: int
    quantity_precision: int
    tick_size: str
    step_size: str
    min_quantity: str
    min_notional: str


class SymbolInfo(Shape):
    """A stored series: its instrument and data ranges."""

    symbol: str
    display: str | None = None
    market: str
    asset_class: str | None = None
    provider: str | None = None
    exchange: str | None = None
    quote: str | None = None
    precision: SymbolPrecision
    timeframes: dict[str, DataRange]


class AvailableCoins(Shape):
    """The coins with stored candles."""

    coins: list[str]
    count: Count


class FavoriteCoins(Shape):
    """The caller's favorites after the change, oldest first."""

    symbol: str
    action: Literal["add", "remove"]
    favorites: Annotated[list[str], Field(max_length=100)]


NOT_STORED = ErrorDoc(404, "not_found", "no candles are stored for the symbol")
QUOTE_ERRORS = (
    ErrorDoc(400, "invalid_request", "not a USDT pair"),
    ErrorDoc(404, "not_found", "no market data for the symbol"),
)
KLINES_ERRORS = (
    ErrorDoc(400, "invalid_request", "an interval the store cannot serve, start_time after end_time"),
    NOT_STORED,
)
FAVORITE_ERRORS = (ErrorDoc(400, "invalid_request", "a 101st favorite (at most 100)"),)
