"""The store of trend signals: market time, storing a scan, expiry, listing, and tracking; every
function joins the caller's transaction (``conn``).

Example:
    >>> SignalKey("BTCUSDT", "1h", 3600, "BUY").way
    'BUY'
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import polars as pl
from sqlalchemy.engine import Connection

from svc_api.core.cursors import keyset_page
from svc_api.core.errors import NotFound
from svc_api.trends import queries
from svc_api.trends.detail import summary
from svc_engine.data.times import ms_columns

SIGNAL_TTL = 7 * 86_400
"""Seconds of market time after its candle at which an untracked signal expires."""


@dataclass(frozen=True)
class SignalKey:
    """The four fields naming one stored signal.

    Example:
        >>> SignalKey("BTCUSDT", "1h", 1_700_000_000, "BUY").ts
        1700000000
    """

    symbol: str
    timeframe: str
    ts: int
    way: str


# ---- market time ----------------------------------------------------------------------------------


def market_now(catalog: Any, wall_now: int) -> int:
    """The close (Unix seconds) of the newest crypto candle in the store, at most ``wall_now``.

    An empty store gives ``wall_now``.

    Example:
        >>> import tempfile
        >>> from svc_engine.data import Catalog, DataStore
        >>> market_now(Catalog(DataStore(tempfile.mkdtemp())), 1_800_000_000)
        1800000000
    """
    from svc_engine.data import timeframe_ms
    from svc_engine.instruments import is_crypto_market

    entries = catalog.entries()
    closes = [
        int(r["last_ts"]) + timeframe_ms(r["timeframe"]) // 1000
        for r in entries.iter_rows(named=True)
        if is_crypto_market(r["market"])
    ]
    return min(max(closes), wall_now) if closes else wall_now


# ---- the store of signals -------------------------------------------------------------------------


def signal_rows(scan: pl.DataFrame) -> list[dict[str, Any]]:
    """Rows for :func:`upsert_signals` from a ``scan_trends`` frame (first signal per key wins).

    Example:
        >>> scan = pl.DataFrame({"market": ["crypto"], "symbol": ["BTCUSDT"], "timeframe": ["1h"],
        ...                      "open_time": [3_600_000], "way": ["BUY"], "is_return_to_trend": [False]})
        >>> signal_rows(scan)
        [{'symbol': 'BTCUSDT', 'timeframe': '1h', 'ts': 3600, 'way': 'BUY', 'market': 'crypto', \
'is_return_to_trend': False}]
    """
    out: dict[tuple[str, str, int, str], dict[str, Any]] = {}
    columns = ("market", "symbol", "timeframe", "open_time", "way", "is_return_to_trend")
    # ``scan_trends`` gives datetimes; ms_columns reads them (and plain integers) as Unix ms.
    for market, symbol, timeframe, open_time, way, is_return in ms_columns(scan.select(columns)).iter_rows():
        key = (symbol, timeframe, int(open_time) // 1000, way)
        out.setdefault(
            key,
            {
                "symbol": symbol,
                "timeframe": timeframe,
                "ts": key[2],
                "way": way,
                "market": market,
                "is_return_to_trend": bool(is_return),
            },
        )
    return list(out.values())


def upsert_signals(conn: Connection, rows: list[dict[str, Any]], *, now: int, ttl: int = SIGNAL_TTL) -> int:
    """Insert the signals not yet stored (``expires_at`` = candle + ``ttl``); existing ones are left as
    they are, so tracking is kept. Returns how many were new.

    Example:
        >>> row = {"symbol": "BTCUSDT", "timeframe": "1h", "ts": 3600, "way": "BUY", "market": "crypto",
        ...        "is_return_to_trend": False}
        >>> with store.write() as conn:
        ...     upsert_signals(conn, [row], now=4000), upsert_signals(conn, [row], now=4000)
        (1, 0)
    """
    added = 0
    for row in rows:
        added += queries.insert_if_new(conn, row, detected_at=now, expires_at=row["ts"] + ttl)
    return added


def remove_expired(conn: Connection, *, now: int) -> int:
    """Delete the untracked signals whose expiry has passed; returns how many.

    Example:
        >>> with store.write() as conn:
        ...     remove_expired(conn, now=0)
        0
    """
    return queries.delete_expired(conn, now=now)


def list_signals(conn: Connection, *, page: int, limit: int, now: int) -> tuple[list[dict[str, Any]], int]:
    """One page of the live signals, newest first, and how many there are in all.

    Example:
        >>> with store.read() as conn:
        ...     list_signals(conn, page=0, limit=50, now=0)
        ([], 0)
    """
    total = queries.count_live(conn, now=now)
    return [summary(r) for r in queries.live_page(conn, now=now, offset=page * limit, limit=limit)], total


# ---- tracking -------------------------------------------------------------------------------------


def track(conn: Connection, svc_id: str, key: SignalKey, *, now: int) -> dict[str, bool]:
    """Track a live signal (idempotent): it loses its expiry. Unknown or expired: 404.

    Example:
        >>> with store.write() as conn:
        ...     track(conn, "AB12CD", SignalKey("BTCUSDT", "1h", 3600, "BUY"), now=0)
        Traceback (most recent call last):
        ...
        svc_api.core.errors.NotFound: no live trend signal BTCUSDT 1h BUY at 3600 (unknown or expired)
    """
    if not queries.lock_signal(conn, key, live_at=now):
        raise NotFound(
            f"no live trend signal {key.symbol} {key.timeframe} {key.way} at {key.ts} (unknown or expired)"
        )
    if not queries.is_tracked_by(conn, svc_id, key):
        queries.insert_track(conn, svc_id, key, now=now)
    queries.set_expiry(conn, key, None)
    return {"tracked": True}


def untrack(conn: Connection, svc_id: str, key: SignalKey, *, ttl: int = SIGNAL_TTL) -> dict[str, bool]:
    """Stop tracking (idempotent); when nobody tracks the signal any more its expiry comes back.

    Example:
        >>> with store.write() as conn:
        ...     untrack(conn, "AB12CD", SignalKey("BTCUSDT", "1h", 3600, "BUY"))
        {'tracked': False}
    """
    # Lock the signal first, so a concurrent track cannot slip between the count and the update.
    queries.lock_signal(conn, key)
    queries.delete_track(conn, svc_id, key)
    if not queries.count_trackers(conn, key):
        queries.set_expiry(conn, key, key.ts + ttl, only_if_tracked=True)
    return {"tracked": False}


def tracked_page(
    conn: Connection, svc_id: str, *, limit: int, after: SignalKey | None
) -> tuple[list[tuple[SignalKey, bool]], bool]:
    """The caller's tracked signals after ``after``, newest signal first, each with its
    ``is_return_to_trend``; and whether more follow.

    Example:
        >>> with store.read() as conn:
        ...     tracked_page(conn, "AB12CD", limit=20, after=None)
        ([], False)
    """
    rows, more = keyset_page(lambda n: queries.tracked_after(conn, svc_id, limit=n, after=after), limit)
    keys = [(SignalKey(r.symbol, r.timeframe, int(r.ts), r.way), bool(r.is_return_to_trend)) for r in rows]
    return keys, more
