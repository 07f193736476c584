"""The instruments a backtest request names, resolved against the data store's catalog.

A coin (``BTC``) or a data symbol (``BTCUSDT``) with optional metadata names one instrument, which
must have candles in the store; replies carry the legacy ``coin`` and the instrument metadata.

Example:
    >>> from svc_engine.instruments import resolve
    >>> instrument_fields(resolve("ETH"))["coin"], market_of([resolve("BTC"), resolve("ETH")])
    ('ETH', 'crypto')
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from svc_api.backtests.fields import metadata_of
from svc_api.core.errors import Invalid
from svc_engine.data import Catalog
from svc_engine.instruments import Instrument, UnknownInstrumentError, display_symbol, resolve


def stored_series(catalog: Catalog) -> list[tuple[str, str]]:
    """Every ``(market, symbol)`` with candles in the data store.

    Example:
        >>> from svc_engine.data import DataStore
        >>> stored_series(Catalog(DataStore("/nonexistent")))
        []
    """
    rows = catalog.entries().select("market", "symbol").unique().sort("market", "symbol")
    return [(m, s) for m, s in rows.iter_rows()]


def instrument_of(
    catalog: Catalog, coin: Any = None, symbol: Any = None, metadata: Mapping[str, str] | None = None
) -> Instrument:
    """The instrument a request names, which must have data in the store; 400 otherwise, with the
    instruments module's message.

    Example:
        >>> from svc_engine.data import DataStore
        >>> instrument_of(Catalog(DataStore("/nonexistent")), "BTX")
        Traceback (most recent call last):
        ...
        svc_api.core.errors.Invalid: unknown instrument: coin='BTX'; did you mean TRX, BTC?
    """
    for name, value in (("coin", coin), ("symbol", symbol)):
        if value is not None and not isinstance(value, str):
            raise Invalid(f"{name} must be a string")
    series = stored_series(catalog)
    try:
        inst = resolve(coin, symbol, stored=series, **dict(metadata or {}))
    except (UnknownInstrumentError, ValueError) as error:
        raise Invalid(str(error)) from None
    if (inst.market, inst.symbol) not in series:
        raise Invalid(f"no data for {inst.display} ({inst.symbol}) in market {inst.market}")
    return inst


def named_instrument(
    catalog: Callable[[], Catalog], params: Mapping[str, Any], *, missing: str, metadata: bool = True
) -> Instrument:
    """The instrument of a request that must name a ``coin`` or a ``symbol`` (400 ``missing``
    otherwise, before anything else is read), with the request's metadata unless ``metadata`` is False.

    Example:
        >>> from svc_engine.data import DataStore
        >>> named_instrument(lambda: Catalog(DataStore("/nonexistent")), {"symbol": ""},
        ...                  missing="coin is required")
        Traceback (most recent call last):
        ...
        svc_api.core.errors.Invalid: coin is required
    """
    coin, symbol = params.get("coin"), params.get("symbol")
    if not coin and not symbol:
        raise Invalid(missing)
    return instrument_of(catalog(), coin, symbol, metadata_of(params) if metadata else {})


def instruments_of(catalog: Catalog, coins: Sequence[str], metadata: Mapping[str, str]) -> list[Instrument]:
    """Each coin resolved (with the shared metadata); duplicates are refused.

    Example:
        >>> from svc_engine.data import DataStore
        >>> instruments_of(Catalog(DataStore("/nonexistent")), ["NOPE"], {})
        Traceback (most recent call last):
        ...
        svc_api.core.errors.Invalid: unknown instrument: coin='NOPE'; did you mean OP?
    """
    found = [instrument_of(catalog, coin, None, metadata) for coin in coins]
    symbols = [i.symbol for i in found]
    twice = sorted({s for s in symbols if symbols.count(s) > 1})
    if twice:
        raise Invalid(f"coins lists {', '.join(twice)} more than once")
    return found


def instrument_fields(inst: Instrument) -> dict[str, str]:
    """The legacy ``coin`` and the instrument metadata of replies; see the module example."""
    return {
        "coin": inst.display,
        "symbol": inst.symbol,
        "asset_class": inst.asset_class,
        "provider": inst.provider,
        "market": inst.market,
        "exchange": inst.exchange,
    }


def market_of(found: Sequence[Instrument]) -> str | None:
    """The one market of the instruments (None when they span several); see the module example."""
    markets = {i.market for i in found}
    return markets.pop() if len(markets) == 1 else None


def display_name(symbol: str, market: str | None) -> str:
    """The coin name shown for a stored data symbol (the symbol itself when unknown).

    Example:
        >>> display_name("BTCUSDT", "crypto"), display_name("ZZZ", None)
        ('BTC', 'ZZZ')
    """
    try:
        return display_symbol(market or "crypto", symbol)
    except (LookupError, ValueError):
        return symbol
