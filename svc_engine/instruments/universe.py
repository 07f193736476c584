"""The instrument universe: markets, asset classes, and resolving what a caller asked for.

A crypto pair has a legacy display symbol (``BTC``) and a data symbol (``BTCUSDT``); every other
market is daily data whose display and data symbols are the same ticker. Provider-specific symbols
never leave the data layer, so an :class:`Instrument` carries only the API's metadata.

Example:
    >>> resolve("btc").symbol
    'BTCUSDT'
    >>> resolve(symbol="EURUSD").market
    'forex'
"""

from __future__ import annotations

import difflib
import re
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from importlib import resources
from types import MappingProxyType
from typing import Any

MARKETS: MappingProxyType[str, str] = MappingProxyType(
    {
        "crypto": "crypto",
        "us_stocks": "stock",
        "etfs": "etf",
        "forex": "forex",
        "commodities": "commodity",
    }
)
"""Dataset market -> asset class, in the order the universe lists them."""

ASSET_CLASSES: tuple[str, ...] = ("crypto", "stock", "etf", "forex", "index", "commodity")
"""Every asset class of the API (``index`` has no dataset yet)."""

# The universe is defined in datasets/universe.toml (linked into the package beside this module).
DEFINITION: Mapping[str, Any] = MappingProxyType(
    tomllib.loads(resources.files("svc_engine.instruments").joinpath("universe.toml").read_text())
)
"""``datasets/universe.toml`` as read: crypto pairs, daily tickers, the market feed's timeframes."""

CRYPTO_PROVIDER: str = DEFINITION["crypto"]["provider"]
DAILY_PROVIDER: str = DEFINITION["daily"]["provider"]
CRYPTO_QUOTE: str = DEFINITION["crypto"]["quote"]

CRYPTO_BASES: tuple[str, ...] = tuple(DEFINITION["crypto"]["bases"])
_DAILY: dict[str, tuple[tuple[str, str], ...]] = {
    market: tuple((t, q) for t, q in DEFINITION["daily"][market]) for market in MARKETS if market != "crypto"
}
_SEPARATORS = re.compile(r"[\s/_\-:]+")


class UnknownInstrumentError(LookupError):
    """No instrument (or no market) matches what the caller asked for; the message says what was
    asked and suggests close matches.

    Example:
        >>> try:
        ...     resolve("BTX")
        ... except UnknownInstrumentError as err:
        ...     print(err)
        unknown instrument: coin='BTX'; did you mean TRX, BTC?
    """


@dataclass(frozen=True, slots=True)
class Instrument:
    """One tradable instrument with the metadata of the API.

    Example:
        >>> resolve("ETH")
        Instrument(symbol='ETHUSDT', display='ETH', market='crypto', asset_class='crypto', \
provider='binance', exchange='binance', quote='USDT')
    """

    symbol: str
    display: str
    market: str
    asset_class: str
    provider: str
    exchange: str
    quote: str

    def metadata(self) -> dict[str, str]:
        """The instrument block of API replies.

        Example:
            >>> resolve("SPY").metadata()["asset_class"]
            'etf'
        """
        return {
            "asset_class": self.asset_class,
            "provider": self.provider,
            "market": self.market,
            "symbol": self.symbol,
        }


def _build() -> tuple[Instrument, ...]:
    crypto = tuple(
        Instrument(
            f"{b}{CRYPTO_QUOTE}", b, "crypto", "crypto", CRYPTO_PROVIDER, CRYPTO_PROVIDER, CRYPTO_QUOTE
        )
        for b in CRYPTO_BASES
    )
    daily = tuple(
        Instrument(t, t, m, MARKETS[m], DAILY_PROVIDER, DAILY_PROVIDER, q)
        for m, tickers in _DAILY.items()
        for t, q in tickers
    )
    return crypto + daily


_UNIVERSE: tuple[Instrument, ...] = _build()
Index = dict[str, tuple[Instrument, ...]]


def _by_name(instruments: Iterable[Instrument]) -> Index:
    """Each instrument under its data symbol and its display symbol."""
    index: Index = {}
    for inst in instruments:
        for name in {inst.symbol, inst.display}:
            if inst not in index.get(name, ()):
                index[name] = (*index.get(name, ()), inst)
    return index


_BY_NAME: Index = _by_name(_UNIVERSE)


def _norm(value: str) -> str:
    return _SEPARATORS.sub("", str(value)).upper()


def check_market(market: str) -> str:
    """The canonical (lower-case) name of a dataset market, or :class:`UnknownInstrumentError`.

    Example:
        >>> check_market("Forex")
        'forex'
    """
    key = str(market).strip().lower()
    if key not in MARKETS:
        raise UnknownInstrumentError(f"unknown market {market!r}; markets: {', '.join(MARKETS)}")
    return key


def universe(market: str | None = None) -> list[Instrument]:
    """Every instrument, or those of one market, in a fixed order (crypto first).

    Example:
        >>> len(universe("us_stocks")), universe("etfs")[0].symbol
        (6, 'SPY')
    """
    if market is None:
        return list(_UNIVERSE)
    key = check_market(market)
    return [i for i in _UNIVERSE if i.market == key]


def is_crypto_market(market: str) -> bool:
    """Whether a dataset market holds crypto pairs: ``crypto`` and imported venues such as ``crypto_futures``.

    Example:
        >>> is_crypto_market("crypto_futures"), is_crypto_market("forex")
        (True, False)
    """
    return str(market).strip().lower().startswith("crypto")


def display_symbol(market: str, symbol: str) -> str:
    """The symbol shown to users: the base coin for a crypto USDT pair, the ticker elsewhere.

    Works for imported pairs and dataset markets outside the built-in universe too.

    Example:
        >>> display_symbol("crypto", "pepeusdt"), display_symbol("forex", "EURUSD")
        ('PEPE', 'EURUSD')
    """
    sym = _norm(symbol)
    if is_crypto_market(market) and sym.endswith(CRYPTO_QUOTE) and len(sym) > len(CRYPTO_QUOTE):
        return sym[: -len(CRYPTO_QUOTE)]
    return sym


# Dataset markets outside the built-in list (imported data) take the asset class of their prefix:
# ``crypto_futures`` is crypto from the ``futures`` provider, ``us_stocks_yahoo`` stocks from ``yahoo``.
_PREFIXES: tuple[tuple[str, str, str], ...] = (
    ("crypto", "crypto", CRYPTO_PROVIDER),
    ("us_stocks", "stock", DAILY_PROVIDER),
    ("stocks", "stock", DAILY_PROVIDER),
    ("etfs", "etf", DAILY_PROVIDER),
    ("forex", "forex", DAILY_PROVIDER),
    ("commodities", "commodity", DAILY_PROVIDER),
    ("cfd", "commodity", DAILY_PROVIDER),
    ("index", "index", DAILY_PROVIDER),
)
_CRYPTO_QUOTES = (CRYPTO_QUOTE, "USDC", "FDUSD", "BUSD", "USD", "EUR", "BTC", "ETH", "BNB")


def _classify(market: str) -> tuple[str, str]:
    for prefix, asset_class, default_provider in _PREFIXES:
        if market == prefix or market.startswith(prefix + "_"):
            return asset_class, market[len(prefix) + 1 :] or default_provider
    raise UnknownInstrumentError(
        f"market {market!r} has no known asset class; name it like "
        f"{', '.join(p + '_<provider>' for p, _, _ in _PREFIXES[:3])}, ..."
    )


def instrument_for(market: str, symbol: str) -> Instrument:
    """The instrument of a stored series: the built-in one, else one derived from the market's prefix.

    Example:
        >>> instrument_for("crypto", "PEPEUSDT").display
        'PEPE'
        >>> instrument_for("us_stocks_yahoo", "orcl").metadata()
        {'asset_class': 'stock', 'provider': 'yahoo', 'market': 'us_stocks_yahoo', 'symbol': 'ORCL'}
    """
    key, sym = str(market).strip().lower(), _norm(symbol)
    for inst in _BY_NAME.get(sym, ()):
        if inst.market == key and inst.symbol == sym:
            return inst
    asset_class, provider = _classify(key)
    if asset_class == "crypto":
        quote = next((q for q in _CRYPTO_QUOTES if sym.endswith(q) and len(sym) > len(q)), "")
        return Instrument(sym, display_symbol(key, sym), key, asset_class, provider, provider, quote)
    quote = sym[3:] if asset_class == "forex" and len(sym) == 6 else "USD"
    return Instrument(sym, sym, key, asset_class, provider, provider, quote)


def _filters(
    asset_class: str | None, market: str | None, provider: str | None, exchange: str | None, markets: set[str]
) -> dict[str, str]:
    wanted: dict[str, str] = {}
    if market is not None:
        key = str(market).strip().lower()
        wanted["market"] = key if key in markets else check_market(market)
    if asset_class is not None:
        cls = str(asset_class).strip().lower()
        if cls not in ASSET_CLASSES:
            raise UnknownInstrumentError(
                f"unknown asset_class {asset_class!r}; asset classes: {', '.join(ASSET_CLASSES)}"
            )
        wanted["asset_class"] = cls
    for field, value in (("provider", provider), ("exchange", exchange)):
        if value is not None:
            wanted[field] = str(value).strip().lower()
    return wanted


def _asked(coin: str | None, symbol: str | None, wanted: dict[str, str]) -> str:
    parts = [f"{k}={v!r}" for k, v in (("coin", coin), ("symbol", symbol)) if v is not None]
    return ", ".join(parts + [f"{k}={v!r}" for k, v in wanted.items()])


def _suggest(name: str, names: Iterable[str]) -> str:
    close = difflib.get_close_matches(name, sorted(set(names)), n=3, cutoff=0.6)
    return f"; did you mean {', '.join(close)}?" if close else ""


def _matches(index: Index, name: str, wanted: dict[str, str]) -> tuple[Instrument, ...]:
    return tuple(i for i in index.get(name, ()) if all(getattr(i, k) == v for k, v in wanted.items()))


def _pick(index: Index, names: list[str], wanted: dict[str, str], asked: str) -> Instrument | None:
    found = {i for n in names for i in _matches(index, n, wanted)}
    if not found:
        return None
    if len(names) == 2 and _matches(index, names[0], wanted) != _matches(index, names[1], wanted):
        raise UnknownInstrumentError(f"coin and symbol name different instruments: {asked}")
    if len(found) > 1:
        where = ", ".join(sorted(f"{i.market}/{i.symbol}" for i in found))
        raise UnknownInstrumentError(f"ambiguous instrument {asked}: {where}; pass market= to choose")
    return found.pop()


def resolve(
    coin: str | None = None,
    symbol: str | None = None,
    *,
    asset_class: str | None = None,
    market: str | None = None,
    provider: str | None = None,
    exchange: str | None = None,
    stored: Iterable[tuple[str, str]] = (),
) -> Instrument:
    """The one instrument named by a legacy ``coin`` and/or a data ``symbol`` and the optional metadata.

    Case, spaces and separators are ignored (``btc/usdt`` is ``BTCUSDT``); a coin may also be given as
    its data symbol. The metadata filters must all match the instrument. ``stored`` lists
    ``(market, symbol)`` series held by the data store (imported data); they resolve, through
    :func:`instrument_for`, when no built-in instrument matches.

    Example:
        >>> resolve("BTCUSDT") == resolve(symbol="btc", market="crypto")
        True
        >>> resolve(symbol="GOLD", asset_class="commodity").quote
        'USD'
        >>> resolve("PEPE", stored=[("crypto", "PEPEUSDT")]).symbol
        'PEPEUSDT'
    """
    extra = _by_name(instrument_for(m, s) for m, s in stored)
    markets = {i.market for found in extra.values() for i in found}
    wanted = _filters(asset_class, market, provider, exchange, markets)
    names = [_norm(v) for v in (coin, symbol) if v is not None and str(v).strip()]
    if not names:
        raise UnknownInstrumentError(
            "no instrument given: pass a coin (e.g. 'BTC') or a symbol (e.g. 'BTCUSDT')"
        )
    asked = _asked(coin, symbol, wanted)
    for index in (_BY_NAME, extra):
        chosen = _pick(index, names, wanted, asked)
        if chosen is not None:
            return chosen
    unfiltered = {i for index in (_BY_NAME, extra) for n in names for i in index.get(n, ())}
    if unfiltered:
        have = ", ".join(
            sorted(f"{i.symbol} ({i.market}, {i.asset_class}, {i.provider})" for i in unfiltered)
        )
        raise UnknownInstrumentError(f"no instrument matches {asked}; that name is {have}")
    raise UnknownInstrumentError(f"unknown instrument: {asked}{_suggest(names[0], [*_BY_NAME, *extra])}")
