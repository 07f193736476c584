"""The ticker: 24 h figures of every crypto series, one row per symbol and market type, and pages of
them searched, ordered by the caller's priorities and flagged with the caller's favorites.

"Last 24 h" means the 24 hours of market time ending at the close of the newest stored candle of
the series, so a store that is not being fed still gives consistent figures.

Example:
    >>> import tempfile
    >>> from svc_engine.data import Catalog, DataStore
    >>> ticker_rows(Catalog(DataStore(tempfile.mkdtemp())))
    []
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import polars as pl

from svc_api.core.fields import last_page
from svc_api.market.series import crypto_series, fixed, freshest, rules

DAY_MS = 86_400_000


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
    from svc_engine.data.times import epoch_ms

    timeframe, last_open = freshest(catalog, market, symbol)
    step = timeframe_ms(timeframe)
    start_ms = min(last_open + step - DAY_MS, last_open)
    window = load_klines(symbol, timeframe, start_ts=start_ms / 1000, market=market, store=catalog.store)
    first_open, last = float(window["open"][0]), float(window["close"][-1])
    quote = float(window.select((pl.col("close") * pl.col("volume")).sum()).item())
    change = (last / first_open - 1.0) * 100.0 if first_open else 0.0
    return Stats24h(last, change, quote, epoch_ms(window["open_time"][-1]))


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
        rows.append(
            {
                "symbol": symbol,
                "last_price": fixed(s.last, digits),
                "change_percent_24h": fixed(s.change_pct, 2),
                "quote_volume_24h": fixed(s.quote_volume, 2),
                "price_precision": digits,
                "display": display_symbol(market, symbol),
                "market": market,
                "_volume": s.quote_volume,
            }
        )
    rows.sort(key=lambda r: (-r["_volume"], r["symbol"]))
    return rows


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


def ticker_page(
    rows: Sequence[dict[str, Any]],
    *,
    kind: str,
    search: str | None,
    priority: Sequence[str],
    favorites: Iterable[str],
    page: int,
    limit: int,
) -> dict[str, Any]:
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
        {
            "symbol": r["symbol"],
            "last_price": r["last_price"],
            "change_percent_24h": r["change_percent_24h"],
            "quote_volume_24h": r["quote_volume_24h"],
            "market_type": kind,
            "price_precision": r["price_precision"],
            "favorite": r["symbol"] in wanted or r["display"] in wanted,
        }
        for r in chosen[page * limit : (page + 1) * limit]
    ]
    return {
        "items": items,
        "page": page,
        "count": len(items),
        "total": len(chosen),
        "last_page": last_page(len(chosen), limit),
    }
