"""Market data from the kline store: ticker, quote, candles, symbol info, available coins, favorites.

Every number comes from the data store's candles through the engine (``svc_engine.data``,
``svc_engine.instruments``); nothing here is a live exchange feed. "Last 24 h" means the 24 hours of
market time ending at the close of the newest stored candle of the series, so a store that is not
being fed still gives consistent figures. Prices are strings with the instrument's precision.

Example:
    >>> import tempfile
    >>> from svc_engine.data import Catalog, DataStore
    >>> ticker_rows(Catalog(DataStore(tempfile.mkdtemp())))
    []
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import polars as pl
import sqlalchemy as sa
from sqlalchemy.engine import Connection

from svc_api.accounts.service import ACCOUNTS as accounts
from svc_api.core.errors import Invalid, NotFound
from svc_api.core.fields import check_name, last_page
from svc_api.market.tables import favorite_coins

DAY_MS = 86_400_000
HOUR_MS = 3_600_000
MARKET_TYPES = ("spot", "futures")
FUNDING_RATE = "0.0001"
"""Funding rate reported for futures quotes: the data store has no funding feed, so the usual 0.01 %."""
FUNDING_EVERY_MS = 8 * HOUR_MS
SPREAD_DAYS = 30
"""Days of candles whose average daily quote volume sets a coin's spread tier."""
MAX_FAVORITES = 100
KLINES_DEFAULT, KLINES_MAX = 500, 1500
_NAME = re.compile(r"^[A-Z0-9]{1,32}$")
CATALOG_TTL = 30.0
"""Seconds a catalog of the data store is reused before new series and candles are looked for."""


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

    return services.cached("market:catalog", CATALOG_TTL, make)


def market_type(value: object) -> str:
    """``spot`` (default) or ``futures``; anything else is a 400.

    Example:
        >>> market_type(None), market_type("futures")
        ('spot', 'futures')
    """
    if value is None or value == "":
        return "spot"
    if value not in MARKET_TYPES:
        raise Invalid(f"market must be spot or futures, got {value!r}")
    return str(value)


# ---- series lookup --------------------------------------------------------------------------------


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


def _fixed(value: float | Decimal, digits: int) -> str:
    text = f"{value:.{digits}f}"
    return text[1:] if text.startswith("-") and not any(c not in "-0." for c in text) else text


# ---- ticker ---------------------------------------------------------------------------------------


def freshest(catalog: Any, market: str, symbol: str) -> tuple[str, int]:
    """The stored timeframe whose last candle closes latest (the finest on a tie), and that candle's
    open in ms: a stale 1m import next to an up-to-date 1h series does not hide the newer candles.

    Example:
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


@dataclass(frozen=True)
class Stats24h:
    """Last close, 24 h change and 24 h quote volume of one series, from its finest stored candles.

    Example:
        >>> Stats24h(100.0, 2.5, 1e6, 1_700_000_000_000).change_pct
        2.5
    """

    last: float
    change_pct: float
    quote_volume: float
    last_open_ms: int


def stats_24h(catalog: Any, market: str, symbol: str) -> Stats24h:
    """The :class:`Stats24h` of one series: candles whose open lies in the 24 h ending at the last close.

    The change is ``last close / first open of the window - 1`` (in percent), the quote volume
    ``sum(close * volume)`` over the window (the data store keeps no trade-level quote volume).

    Example:
        >>> import tempfile
        >>> from svc_engine.data import Catalog, DataStore
        >>> store = DataStore(tempfile.mkdtemp())
        >>> df = pl.DataFrame({"open_time": [0, 3_600_000], "open": [10.0, 11.0], "high": [11.0, 12.0],
        ...                    "low": [9.0, 10.0], "close": [11.0, 12.0], "volume": [2.0, 3.0]})
        >>> _ = store.write_klines("crypto", "BTCUSDT", "1h", df)
        >>> stats_24h(Catalog(store), "crypto", "BTCUSDT")
        Stats24h(last=12.0, change_pct=19.999999999999996, quote_volume=58.0, last_open_ms=3600000)
    """
    from svc_engine.data import load_klines, timeframe_ms

    timeframe, last_open = freshest(catalog, market, symbol)
    step = timeframe_ms(timeframe)
    start_ms = min(last_open + step - DAY_MS, last_open)
    window = load_klines(symbol, timeframe, start_ts=start_ms / 1000, market=market, store=catalog.store)
    first_open, last = float(window["open"][0]), float(window["close"][-1])
    quote = float(window.select((pl.col("close") * pl.col("volume")).sum()).item())
    change = (last / first_open - 1.0) * 100.0 if first_open else 0.0
    return Stats24h(last, change, quote, int(window["open_time"][-1]))


def ticker_rows(catalog: Any) -> list[dict[str, Any]]:
    """One ticker row per crypto series, busiest (24 h quote volume) first, then by symbol.

    Rows hold the item fields except ``market_type`` and ``favorite`` (per request), plus
    ``display`` and ``market`` for searching and favorites.

    Example:
        >>> import tempfile
        >>> from svc_engine.data import Catalog, DataStore
        >>> ticker_rows(Catalog(DataStore(tempfile.mkdtemp())))
        []
    """
    from svc_engine.instruments import display_symbol

    rows = []
    for market, symbol in crypto_series(catalog):
        s, digits = stats_24h(catalog, market, symbol), rules(market, symbol).price_precision
        rows.append({
            "symbol": symbol, "last_price": _fixed(s.last, digits),
            "change_percent_24h": _fixed(s.change_pct, 2), "quote_volume_24h": _fixed(s.quote_volume, 2),
            "price_precision": digits, "display": display_symbol(market, symbol), "market": market,
            "_volume": s.quote_volume,
        })
    rows.sort(key=lambda r: (-r["_volume"], r["symbol"]))
    return rows


def parse_priority(value: object) -> list[str]:
    """The comma-separated ``priority`` symbols, upper-cased, each alphanumeric (else 400).

    Example:
        >>> parse_priority("btcusdt, ETHUSDT,"), parse_priority(None)
        (['BTCUSDT', 'ETHUSDT'], [])
    """
    if value is None or value == "":
        return []
    if not isinstance(value, str):
        raise Invalid("priority must be a comma-separated list of symbols")
    names = [check_name(part, "priority") for part in value.split(",") if part.strip()]
    return [n for n in names if n is not None]


def for_market_type(rows: Sequence[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    """One row per symbol for ``kind``: ``futures`` prefers a stored futures venue (a dataset market
    named ``*futures*``, e.g. an imported ``crypto_futures``), ``spot`` the others; the order is kept.

    Example:
        >>> rows = [{"symbol": "BTCUSDT", "market": m} for m in ("crypto", "crypto_futures")]
        >>> rows.append({"symbol": "ETHUSDT", "market": "crypto"})
        >>> [r["market"] for r in for_market_type(rows, "futures")], len(for_market_type(rows, "spot"))
        (['crypto_futures', 'crypto'], 2)
    """
    def preferred(row: dict[str, Any]) -> bool:
        return ("futures" in row["market"]) == (kind == "futures")

    best: dict[str, dict[str, Any]] = {}
    for row in rows:
        held = best.get(row["symbol"])
        if held is None or (preferred(row) and not preferred(held)):
            best[row["symbol"]] = row
    return [r for r in rows if best[r["symbol"]] is r]


def ticker_page(rows: Sequence[dict[str, Any]], *, kind: str, search: str | None, priority: Sequence[str],
                favorites: Iterable[str], page: int, limit: int) -> dict[str, Any]:
    """One page of ``market_ticker``: search, priority symbols first (in their order), then the rest.

    ``search`` keeps symbols whose data or display symbol contains it.

    Example:
        >>> rows = [{"symbol": s, "display": s[:-4], "last_price": "1", "change_percent_24h": "0.00",
        ...          "quote_volume_24h": "0.00", "price_precision": 2, "market": "crypto"}
        ...         for s in ("ETHUSDT", "BTCUSDT")]
        >>> page = ticker_page(rows, kind="spot", search=None, priority=["BTCUSDT"], favorites=["ETH"],
        ...                    page=0, limit=1)
        >>> [(i["symbol"], i["favorite"]) for i in page["items"]], page["total"], page["last_page"]
        ([('BTCUSDT', False)], 2, 1)
    """
    chosen = [r for r in rows if search is None or search in r["symbol"] or search in r["display"]]
    chosen = for_market_type(chosen, kind)
    rank = {name: i for i, name in enumerate(dict.fromkeys(priority))}
    chosen.sort(key=lambda r: min(rank.get(r["symbol"], len(rank)), rank.get(r["display"], len(rank))))
    wanted = set(favorites)
    items = [
        {"symbol": r["symbol"], "last_price": r["last_price"], "change_percent_24h": r["change_percent_24h"],
         "quote_volume_24h": r["quote_volume_24h"], "market_type": kind,
         "price_precision": r["price_precision"],
         "favorite": r["symbol"] in wanted or r["display"] in wanted}
        for r in chosen[page * limit:(page + 1) * limit]
    ]
    return {"items": items, "page": page, "count": len(items), "total": len(chosen),
            "last_page": last_page(len(chosen), limit)}


# ---- quote ----------------------------------------------------------------------------------------


def spread_pct(catalog: Any, market: str, symbol: str) -> float:
    """The coin's full spread in percent: the engine's tier of its last ``SPREAD_DAYS`` days of 1h candles.

    Example:
        >>> import tempfile
        >>> from svc_engine.data import Catalog, DataStore
        >>> store = DataStore(tempfile.mkdtemp())
        >>> df = pl.DataFrame({"open_time": [0], "open": [100.0], "high": [100.0], "low": [100.0],
        ...                    "close": [100.0], "volume": [1e6]})
        >>> _ = store.write_klines("crypto", "BTCUSDT", "1h", df)
        >>> spread_pct(Catalog(store), "crypto", "BTCUSDT")
        0.05
    """
    from svc_engine.data import load_klines
    from svc_engine.instruments import spread_pct_for

    last = _last_ms(catalog, market, symbol) // 1000
    klines = load_klines(symbol, "1h", start_ts=last - SPREAD_DAYS * 86_400, market=market,
                         store=catalog.store)
    return float(spread_pct_for(market, klines, "1h"))


def next_funding_ms(now_ms: int) -> int:
    """The next funding time after ``now_ms``: 00:00, 08:00 or 16:00 UTC.

    Example:
        >>> next_funding_ms(0), next_funding_ms(8 * 3_600_000 - 1), next_funding_ms(8 * 3_600_000)
        (28800000, 28800000, 57600000)
    """
    return (now_ms // FUNDING_EVERY_MS + 1) * FUNDING_EVERY_MS


def quote(market: str, symbol: str, *, kind: str, last: float, spread: float, commission_pct: float,
          now_ms: int) -> dict[str, Any]:
    """The Market quote of a USDT pair: bid and ask half the spread either side of the last price.

    Example:
        >>> q = quote("crypto", "BTCUSDT", kind="futures", last=100.0, spread=0.2, commission_pct=0.2,
        ...           now_ms=1000)
        >>> q["bid_price"], q["ask_price"], q["spread"], q["spread_percent"], q["next_funding_time"]
        ('99.90', '100.10', '0.20', '0.20', '28800000')
    """
    from svc_engine.instruments import format_price

    digits = rules(market, symbol).price_precision
    bid = Decimal(format_price(rules_market(market), symbol, last * (1 - spread / 200)))
    ask = Decimal(format_price(rules_market(market), symbol, last * (1 + spread / 200)))
    out: dict[str, Any] = {
        "symbol": symbol, "market_type": kind, "bid_price": str(bid), "ask_price": str(ask),
        "last_price": _fixed(last, digits), "spread": _fixed(ask - bid, digits),
        "spread_percent": _fixed(spread, 2), "commission_rate": _fixed(commission_pct / 100, 4),
        "commission_percent": _fixed(commission_pct, 2), "timestamp": now_ms,
    }
    if kind == "futures":
        out |= {"mark_price": out["last_price"], "funding_rate": FUNDING_RATE,
                "next_funding_time": str(next_funding_ms(now_ms))}
    return out


# ---- candles and symbol info ----------------------------------------------------------------------


def parse_ms(value: object, field: str) -> int | None:
    """An optional non-negative integer of Unix milliseconds (else 400).

    Example:
        >>> parse_ms("1700000000000", "start_time"), parse_ms(None, "end_time")
        (1700000000000, None)
    """
    if value is None or value == "":
        return None
    text = str(value).strip()
    if isinstance(value, bool) or not text.isdigit():
        raise Invalid(f"{field} must be Unix milliseconds (a non-negative integer), got {value!r}")
    return int(text)


def klines(catalog: Any, market: str, symbol: str, interval: str, *, start_ms: int | None,
           end_ms: int | None, limit: int) -> dict[str, Any]:
    """Candles like Binance's ``klines``: ``[open_time_ms, "open", "high", "low", "close", "volume"]``.

    With ``start_ms`` the first ``limit`` candles opening at or after it (and at or before
    ``end_ms``); without, the last ``limit`` candles opening at or before ``end_ms`` (default: the
    newest). A range with no candle gives an empty list.

    Example:
        >>> import tempfile
        >>> from svc_engine.data import Catalog, DataStore
        >>> store = DataStore(tempfile.mkdtemp())
        >>> df = pl.DataFrame({"open_time": [0, 60_000], "open": [1.0, 1.1], "high": [1.2, 1.2],
        ...                    "low": [0.9, 1.0], "close": [1.1, 1.15], "volume": [5.0, 6.0]})
        >>> _ = store.write_klines("crypto", "BTCUSDT", "1m", df)
        >>> klines(Catalog(store), "crypto", "BTCUSDT", "1m", start_ms=None, end_ms=None, limit=1)["klines"]
        [[60000, '1.10', '1.20', '1.00', '1.15', '6.00000']]
    """
    from svc_engine.data import load_klines, timeframe_ms

    try:
        step = timeframe_ms(interval)
    except ValueError as exc:
        raise Invalid(str(exc)) from None
    if start_ms is not None and end_ms is not None and start_ms > end_ms:
        raise Invalid(f"start_time {start_ms} is after end_time {end_ms}")

    def load(lo: int | None, hi: int | None) -> pl.DataFrame:
        try:
            return load_klines(symbol, interval, start_ts=None if lo is None else lo / 1000,
                               end_ts=None if hi is None else hi / 1000, market=market, store=catalog.store)
        except ValueError as exc:
            if "selects no candle" in str(exc):
                return pl.DataFrame()
            raise Invalid(str(exc)) from None

    if start_ms is not None:
        span_end = start_ms + limit * step
        frame = load(start_ms, span_end if end_ms is None else min(end_ms, span_end))
        if frame.height < limit and (end_ms is None or end_ms > span_end):
            frame = load(start_ms, end_ms)  # gaps in the data: read on to the end of the range
        frame = frame.head(limit)
    else:
        hi = end_ms if end_ms is not None else _last_ms(catalog, market, symbol)
        frame = load(max(0, hi - limit * step), hi)
        if frame.height < limit:
            frame = load(None, hi)
        frame = frame.tail(limit)
    return {"symbol": symbol, "market": market, "interval": interval,
            "klines": _rows(frame, rules(market, symbol)), "count": frame.height}


def _last_ms(catalog: Any, market: str, symbol: str) -> int:
    return freshest(catalog, market, symbol)[1]


def _rows(frame: pl.DataFrame, precision: Any) -> list[list[Any]]:
    if frame.height == 0:
        return []
    p, q = precision.price_precision, precision.quantity_precision
    cols = [frame["open_time"].to_list()]
    cols += [[f"{x:.{p}f}" for x in frame[c].to_list()] for c in ("open", "high", "low", "close")]
    cols.append([f"{x:.{q}f}" for x in frame["volume"].to_list()])
    return [list(r) for r in zip(*cols, strict=True)]


def symbol_info(catalog: Any, market: str, symbol: str) -> dict[str, Any]:
    """Instrument metadata, its precision entry and the data range of every stored timeframe.

    Example:
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
        "symbol": inst.symbol, "display": inst.display, "market": inst.market,
        "asset_class": inst.asset_class, "provider": inst.provider, "exchange": inst.exchange,
        "quote": inst.quote,
        "precision": {"price_precision": prec.price_precision, "quantity_precision": prec.quantity_precision,
                      "tick_size": str(prec.tick_size), "step_size": str(prec.step_size),
                      "min_quantity": str(prec.min_quantity), "min_notional": str(prec.min_notional)},
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


# ---- favorites ------------------------------------------------------------------------------------


def favorites(conn: Connection, svc_id: str) -> list[str]:
    """The caller's favorite symbols, oldest first.

    Example:
        >>> from svc_api.core.store import Store
        >>> from svc_api.migrations import migrate
        >>> store = Store("sqlite:///:memory:"); _ = migrate(store)
        >>> with store.read() as conn:
        ...     favorites(conn, "AB12CD")
        []
    """
    query = (sa.select(favorite_coins.c.symbol).where(favorite_coins.c.svc_id == svc_id)
             .order_by(favorite_coins.c.created_at, favorite_coins.c.symbol))
    return list(conn.execute(query).scalars())


def set_favorite(conn: Connection, svc_id: str, symbol: object, action: object, *,
                 now: int) -> dict[str, Any]:
    """Add (default) or remove one favorite; both are idempotent. The 101st favorite is a 400.

    Example:
        >>> set_favorite(None, "AB12CD", "btc", "toggle", now=0)
        Traceback (most recent call last):
        ...
        svc_api.core.errors.Invalid: action must be add or remove, got 'toggle'
    """
    name = check_name(symbol, "symbol") or ""
    verb = "add" if action is None or action == "" else action
    if verb not in ("add", "remove"):
        raise Invalid(f"action must be add or remove, got {action!r}")
    # Lock the account row: two concurrent adds must not both pass the limit check.
    conn.execute(sa.select(accounts.c.svc_id).where(accounts.c.svc_id == svc_id).with_for_update())
    held = favorites(conn, svc_id)
    if verb == "add" and name not in held:
        if len(held) >= MAX_FAVORITES:
            raise Invalid(f"at most {MAX_FAVORITES} favorites; remove one before adding {name}")
        conn.execute(favorite_coins.insert().values(svc_id=svc_id, symbol=name, created_at=now))
        held.append(name)
    elif verb == "remove" and name in held:
        conn.execute(favorite_coins.delete().where(
            (favorite_coins.c.svc_id == svc_id) & (favorite_coins.c.symbol == name)))
        held.remove(name)
    return {"symbol": name, "action": verb, "favorites": held}
