"""Series of the data store: the app's catalog, finding a series by name, its precision rules, its
freshest timeframe, its instrument metadata, and the coins that have candles.

Example:
    >>> rules_market("crypto_futures"), fixed(2.5, 2)
    ('crypto', '2.50')
"""

from __future__ import annotations

import math
from decimal import Decimal
from typing import Any

from svc_api.core.errors import NotFound

CATALOG_TTL = 1.0
"""Seconds a catalog of the data store is reused before new series and candles are looked for (a
refresh reads again only what changed: files' footers once per version, hot tails each time)."""


def catalog_of(services: Any) -> Any:
    """The app's catalog of the data store (``settings.data_dir``), renewed every ``CATALOG_TTL`` s.

    Example:
        >>> from pathlib import Path
        >>> from svc_api.core.services import Services
        >>> from svc_api.settings import Settings
        >>> s = Services(Settings(database_url="sqlite:///:memory:", secret_key=b"k" * 32,
        ...                       data_dir=Path("/nonexistent")))
        >>> catalog_of(s).markets()
        []
    """

    def make() -> Any:
        from svc_engine.data import Catalog, DataStore

        data_dir = services.settings.data_dir
        return Catalog(DataStore(data_dir) if data_dir is not None else None)

    catalog = services.cached("market:catalog", math.inf, make)
    # One catalog per app, refreshed every CATALOG_TTL s: candles another process (svc worker's feed)
    # appended show within a second, and unchanged files' footers are not read again.
    services.cached("market:catalog:fresh", CATALOG_TTL, catalog.refresh)
    return catalog


def crypto_series(catalog: Any) -> list[tuple[str, str]]:
    """``(market, symbol)`` of every crypto series with candles (``crypto`` and imported crypto venues).

    Example:
        >>> import tempfile
        >>> from svc_engine.data import Catalog, DataStore
        >>> crypto_series(Catalog(DataStore(tempfile.mkdtemp())))
        []
    """
    from svc_engine.instruments import is_crypto_market

    return [(m, s) for m in catalog.markets() if is_crypto_market(m) for s in catalog.symbols(m)]


def serves_timeframe(catalog: Any, market: str, symbol: str, timeframe: str) -> bool:
    """Whether candles of ``timeframe`` can be read for a stored series: stored, or resampled from a
    stored finer timeframe that divides it, exactly as backtests load them
    (:func:`svc_engine.data.derived.source_timeframe`).

    Example:
        >>> import tempfile, polars as pl
        >>> from svc_engine.data import Catalog, DataStore
        >>> store = DataStore(tempfile.mkdtemp())
        >>> df = pl.DataFrame({"open_time": [0], "open": [1.0], "high": [1.0], "low": [1.0],
        ...                    "close": [1.0], "volume": [1.0]})
        >>> _ = store.write_klines("crypto", "ETHUSDT", "1h", df)
        >>> [serves_timeframe(Catalog(store), "crypto", "ETHUSDT", tf) for tf in ("1h", "4h", "1d", "15m")]
        [True, True, True, False]
    """
    from svc_engine.data.derived import source_timeframe
    from svc_engine.data.store import DataNotFoundError

    try:
        source_timeframe(catalog.store, market, symbol, timeframe)
    except (DataNotFoundError, ValueError):
        return False
    return True


def find_series(catalog: Any, name: str) -> tuple[str, str]:
    """The stored ``(market, symbol)`` named by a data symbol (``BTCUSDT``) or display symbol (``BTC``).

    Raises :class:`NotFound` with the engine's message (and suggestions) when nothing is stored.

    Example:
        >>> import tempfile
        >>> from svc_engine.data import Catalog, DataStore
        >>> find_series(Catalog(DataStore(tempfile.mkdtemp())), "BTC")
        Traceback (most recent call last):
        ...
        svc_api.core.errors.NotFound: no candles are stored for BTCUSDT (crypto)
    """
    from svc_engine.instruments import UnknownInstrumentError, resolve

    stored = [(m, s) for m in catalog.markets() for s in catalog.symbols(m)]
    try:
        inst = resolve(symbol=name, stored=stored)
    except UnknownInstrumentError as exc:
        raise NotFound(str(exc)) from None
    if (inst.market, inst.symbol) not in stored:
        raise NotFound(f"no candles are stored for {inst.symbol} ({inst.market})")
    return inst.market, inst.symbol


def rules_market(market: str) -> str:
    """The manifest market of a stored series' market: itself, else ``crypto`` or ``us_stocks``
    (imported venues take the defaults of their asset class).

    Example:
        >>> rules_market("crypto_futures"), rules_market("forex")
        ('crypto', 'forex')
    """
    from svc_engine.instruments import MARKETS, is_crypto_market

    if market in MARKETS:
        return market
    return "crypto" if is_crypto_market(market) else "us_stocks"


def rules(market: str, symbol: str) -> Any:
    """The precision rules of a stored series.

    Example:
        >>> rules("crypto_futures", "BTCUSDT").price_precision
        2
    """
    from svc_engine.instruments import precision

    return precision(rules_market(market), symbol)


def fixed(value: float | Decimal, digits: int) -> str:
    """``value`` with ``digits`` decimals, never a negative zero.

    Example:
        >>> fixed(-0.0001, 2), fixed(1.005, 1)
        ('0.00', '1.0')
    """
    text = f"{value:.{digits}f}"
    return text[1:] if text.startswith("-") and not any(c not in "-0." for c in text) else text


def freshest(catalog: Any, market: str, symbol: str) -> tuple[str, int]:
    """The stored timeframe whose last candle closes latest (the finest on a tie), and that candle's
    open in ms: a stale 1m import next to an up-to-date 1h series does not hide the newer candles.

    Example:
        >>> import polars as pl
        >>> import tempfile
        >>> from svc_engine.data import Catalog, DataStore
        >>> store = DataStore(tempfile.mkdtemp())
        >>> one = pl.DataFrame({"open_time": [0], "open": [1.0], "high": [1.0], "low": [1.0],
        ...                     "close": [1.0], "volume": [1.0]})
        >>> _ = store.write_klines("crypto", "BTCUSDT", "1m", one)
        >>> _ = store.write_klines("crypto", "BTCUSDT", "1h", one.with_columns(open_time=pl.lit(3_600_000)))
        >>> freshest(Catalog(store), "crypto", "BTCUSDT")
        ('1h', 3600000)
    """
    from svc_engine.data import timeframe_ms

    rows = catalog.entries(market=market, symbol=symbol)
    if rows.height == 0:
        raise NotFound(f"no candles are stored for {symbol} ({market})")

    def rank(r: dict[str, Any]) -> tuple[int, int]:
        step = timeframe_ms(r["timeframe"])
        return r["last_ts"] * 1000 + step, -step

    best = max(rows.iter_rows(named=True), key=rank)
    return str(best["timeframe"]), int(best["last_ts"]) * 1000


def last_ms(catalog: Any, market: str, symbol: str) -> int:
    """The open (ms) of the newest stored candle of a series (see :func:`freshest`).

    Example:
        >>> import tempfile
        >>> from svc_engine.data import Catalog, DataStore
        >>> last_ms(Catalog(DataStore(tempfile.mkdtemp())), "crypto", "BTCUSDT")
        Traceback (most recent call last):
        ...
        svc_api.core.errors.NotFound: no candles are stored for BTCUSDT (crypto)
    """
    return freshest(catalog, market, symbol)[1]


def display_of(market: str, symbol: str) -> str:
    """The display name of a stored series (``BTC`` for crypto ``BTCUSDT``).

    Example:
        >>> display_of("crypto", "ETHUSDT")
        'ETH'
    """
    from svc_engine.instruments import instrument_for

    return str(instrument_for(market, symbol).display)


def symbol_info(catalog: Any, market: str, symbol: str) -> dict[str, Any]:
    """Instrument metadata, its precision entry and the data range of every stored timeframe.

    Example:
        >>> import polars as pl
        >>> import tempfile
        >>> from svc_engine.data import Catalog, DataStore
        >>> store = DataStore(tempfile.mkdtemp())
        >>> df = pl.DataFrame({"open_time": [0], "open": [1.0], "high": [1.0], "low": [1.0],
        ...                    "close": [1.0], "volume": [1.0]})
        >>> _ = store.write_klines("crypto", "ETHUSDT", "1h", df)
        >>> info = symbol_info(Catalog(store), "crypto", "ETHUSDT")
        >>> info["display"], info["precision"]["tick_size"], info["timeframes"]["1h"]["total_candles"]
        ('ETH', '0.01', 1)
    """
    from svc_engine.instruments import instrument_for

    inst = instrument_for(market, symbol)
    prec = rules(market, symbol)
    stored = catalog.timeframes(symbol, market=market)
    ranges = {tf: catalog.data_range(symbol, tf, market=market) for tf in stored}
    return {
        "symbol": inst.symbol,
        "display": inst.display,
        "market": inst.market,
        "asset_class": inst.asset_class,
        "provider": inst.provider,
        "exchange": inst.exchange,
        "quote": inst.quote,
        "precision": {
            "price_precision": prec.price_precision,
            "quantity_precision": prec.quantity_precision,
            "tick_size": str(prec.tick_size),
            "step_size": str(prec.step_size),
            "min_quantity": str(prec.min_quantity),
            "min_notional": str(prec.min_notional),
        },
        "timeframes": ranges,
    }


def available_coins(catalog: Any) -> dict[str, Any]:
    """``{coins, count}``: display symbols of the crypto series that have candles, sorted.

    Example:
        >>> import tempfile
        >>> from svc_engine.data import Catalog, DataStore
        >>> available_coins(Catalog(DataStore(tempfile.mkdtemp())))
        {'coins': [], 'count': 0}
    """
    from svc_engine.instruments import display_symbol

    coins = sorted({display_symbol(m, s) for m, s in crypto_series(catalog)})
    return {"coins": coins, "count": len(coins)}
