"""Quotes of USDT pairs: bid and ask from the last price and the coin's spread tier, the commission,
and for futures the mark price and funding.

Example:
    >>> next_funding_ms(0)
    28800000
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from svc_api.market.series import fixed, last_ms, rules, rules_market

HOUR_MS = 3_600_000
FUNDING_RATE = "0.0001"
"""Funding rate reported for futures quotes: the data store has no funding feed, so the usual 0.01 %."""
FUNDING_EVERY_MS = 8 * HOUR_MS
SPREAD_DAYS = 30
"""Days of candles whose average daily quote volume sets a coin's spread tier."""


def spread_pct(catalog: Any, market: str, symbol: str) -> float:
    """The coin's full spread in percent: the engine's tier of its last ``SPREAD_DAYS`` days of 1h candles.

    Example:
        >>> import polars as pl
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

    last = last_ms(catalog, market, symbol) // 1000
    klines = load_klines(
        symbol, "1h", start_ts=last - SPREAD_DAYS * 86_400, market=market, store=catalog.store
    )
    return float(spread_pct_for(market, klines, "1h"))


def next_funding_ms(now_ms: int) -> int:
    """The next funding time after ``now_ms``: 00:00, 08:00 or 16:00 UTC.

    Example:
        >>> next_funding_ms(0), next_funding_ms(8 * 3_600_000 - 1), next_funding_ms(8 * 3_600_000)
        (28800000, 28800000, 57600000)
    """
    return (now_ms // FUNDING_EVERY_MS + 1) * FUNDING_EVERY_MS


def quote(
    market: str, symbol: str, *, kind: str, last: float, spread: float, commission_pct: float, now_ms: int
) -> dict[str, Any]:
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
        "symbol": symbol,
        "market_type": kind,
        "bid_price": str(bid),
        "ask_price": str(ask),
        "last_price": fixed(last, digits),
        "spread": fixed(ask - bid, digits),
        "spread_percent": fixed(spread, 2),
        "commission_rate": fixed(commission_pct / 100, 4),
        "commission_percent": fixed(commission_pct, 2),
        "timestamp": now_ms,
    }
    if kind == "futures":
        out |= {
            "mark_price": out["last_price"],
            "funding_rate": FUNDING_RATE,
            "next_funding_time": str(next_funding_ms(now_ms)),
        }
    return out
