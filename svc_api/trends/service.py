"""Trend-break signals kept in the store, their tracking, and the sentiment indicator.

The engine finds the signals (``svc_engine.trend``); the refresh job (:mod:`svc_api.trends.refresh`)
stores them here. Signals age in **market time**: ``now`` is the close of the newest candle in the
data store (never later than the wall clock), so a store that is not being fed keeps showing its
latest signals instead of expiring all of them. A signal expires ``SIGNAL_TTL`` seconds after its
candle; while at least one user tracks it, it has no expiry; the last untrack gives it back.

Example:
    >>> parse_timeframe("240"), parse_timeframe("1h")
    ('4h', '1h')
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import polars as pl
import sqlalchemy as sa
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Connection

from svc_api.core.errors import Invalid, NotFound
from svc_api.core.fields import check_name, parse_seconds, parse_timeframe
from svc_api.market.service import find_series, freshest
from svc_api.trends.tables import trend_signal_tracks, trend_signals

SIGNAL_TTL = 7 * 86_400
"""Seconds of market time after its candle at which an untracked signal expires."""
SENTIMENT_WARMUP = 1000
"""Candles loaded before a sentiment page so that its EMAs, RSI and ATR have settled."""
DEFAULT_MARKET_KEY = "BTCUSDT#1h"
WAYS = ("BUY", "SELL")
_DIGITS = re.compile(r"^[0-9]{1,12}$")


@dataclass(frozen=True)
class SignalKey:
    """The four fields naming one stored signal.

    Example:
        >>> SignalKey("BTCUSDT", "1h", 1_700_000_000, "BUY").where() is not None
        True
    """

    symbol: str
    timeframe: str
    ts: int
    way: str

    def where(self, table: sa.Table = trend_signals) -> sa.ColumnElement[bool]:
        """The SQL condition selecting this key in ``table``."""
        c = table.c
        return sa.and_(c.symbol == self.symbol, c.timeframe == self.timeframe, c.ts == self.ts,
                       c.way == self.way)


def signal_key(params: Mapping[str, Any]) -> SignalKey:
    """The signal named by ``coin_name``, ``timeframe`` (minutes or name), ``way`` and ``timestamp``.

    Example:
        >>> signal_key({"coin_name": "btcusdt", "timeframe": "60", "way": "buy", "timestamp": "3600"})
        SignalKey(symbol='BTCUSDT', timeframe='1h', ts=3600, way='BUY')
    """
    missing = [f for f in ("coin_name", "timeframe", "way", "timestamp") if params.get(f) in (None, "")]
    if missing:
        raise Invalid(f"missing required fields: {', '.join(missing)}")
    way = str(params["way"]).strip().upper()
    if way not in WAYS:
        raise Invalid(f"way must be BUY or SELL, got {params['way']!r}")
    return SignalKey(check_name(params["coin_name"], "coin_name") or "", parse_timeframe(params["timeframe"]),
                     parse_seconds(params["timestamp"], "timestamp"), way)


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
    closes = [int(r["last_ts"]) + timeframe_ms(r["timeframe"]) // 1000
              for r in entries.iter_rows(named=True) if is_crypto_market(r["market"])]
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
    for market, symbol, timeframe, open_time, way, is_return in scan.select(columns).iter_rows():
        key = (symbol, timeframe, int(open_time) // 1000, way)
        out.setdefault(key, {"symbol": symbol, "timeframe": timeframe, "ts": key[2], "way": way,
                             "market": market, "is_return_to_trend": bool(is_return)})
    return list(out.values())


def upsert_signals(conn: Connection, rows: list[dict[str, Any]], *, now: int, ttl: int = SIGNAL_TTL) -> int:
    """Insert the signals not yet stored (``expires_at`` = candle + ``ttl``); existing ones are left as
    they are, so tracking is kept. Returns how many were new.

    Example:
        >>> from svc_api.core.store import Store
        >>> from svc_api.migrations import migrate
        >>> store = Store("sqlite:///:memory:"); _ = migrate(store)
        >>> row = {"symbol": "BTCUSDT", "timeframe": "1h", "ts": 3600, "way": "BUY", "market": "crypto",
        ...        "is_return_to_trend": False}
        >>> with store.write() as conn:
        ...     upsert_signals(conn, [row], now=4000), upsert_signals(conn, [row], now=4000)
        (1, 0)
    """
    insert = postgresql.insert if conn.dialect.name == "postgresql" else sqlite.insert
    added = 0
    for row in rows:
        stmt = insert(trend_signals).values(**row, detected_at=now, expires_at=row["ts"] + ttl)
        # RETURNING, not rowcount: psycopg reports -1 for a skipped ON CONFLICT DO NOTHING.
        added += len(conn.execute(stmt.on_conflict_do_nothing().returning(trend_signals.c.ts)).all())
    return added


def remove_expired(conn: Connection, *, now: int) -> int:
    """Delete the untracked signals whose expiry has passed; returns how many.

    Example:
        >>> from svc_api.core.store import Store
        >>> from svc_api.migrations import migrate
        >>> store = Store("sqlite:///:memory:"); _ = migrate(store)
        >>> with store.write() as conn:
        ...     remove_expired(conn, now=0)
        0
    """
    c = trend_signals.c
    gone = trend_signals.delete().where(c.expires_at.is_not(None) & (c.expires_at <= now))
    return conn.execute(gone).rowcount


def _live(now: int) -> sa.ColumnElement[bool]:
    c = trend_signals.c
    return sa.or_(c.expires_at.is_(None), c.expires_at > now)


def summary(row: Any) -> dict[str, Any]:
    """The list record of a stored signal: the engine's summary with an empty ``klines_data``.

    Example:
        >>> summary({"symbol": "ETHUSDT", "timeframe": "4h", "ts": 7200, "way": "SELL",
        ...          "is_return_to_trend": True})["timestamp"]
        '7200'
    """
    from svc_engine.trend import signal_summary

    m = row if isinstance(row, Mapping) else row._mapping
    record = {"symbol": m["symbol"], "timeframe": m["timeframe"], "open_time": int(m["ts"]) * 1000,
              "way": m["way"], "is_return_to_trend": m["is_return_to_trend"]}
    return {**signal_summary(record), "klines_data": []}


def list_signals(conn: Connection, *, page: int, limit: int, now: int) -> tuple[list[dict[str, Any]], int]:
    """One page of the live signals, newest first, and how many there are in all.

    Example:
        >>> from svc_api.core.store import Store
        >>> from svc_api.migrations import migrate
        >>> store = Store("sqlite:///:memory:"); _ = migrate(store)
        >>> with store.read() as conn:
        ...     list_signals(conn, page=0, limit=50, now=0)
        ([], 0)
    """
    c = trend_signals.c
    total = conn.execute(sa.select(sa.func.count()).select_from(trend_signals).where(_live(now))).scalar_one()
    query = (sa.select(trend_signals).where(_live(now))
             .order_by(c.ts.desc(), c.symbol, c.timeframe, c.way).offset(page * limit).limit(limit))
    return [summary(r) for r in conn.execute(query)], int(total)


# ---- tracking -------------------------------------------------------------------------------------


def track(conn: Connection, svc_id: str, key: SignalKey, *, now: int) -> dict[str, bool]:
    """Track a live signal (idempotent): it loses its expiry. Unknown or expired: 404.

    Example:
        >>> from svc_api.core.store import Store
        >>> from svc_api.migrations import migrate
        >>> store = Store("sqlite:///:memory:"); _ = migrate(store)
        >>> with store.write() as conn:
        ...     track(conn, "AB12CD", SignalKey("BTCUSDT", "1h", 3600, "BUY"), now=0)
        Traceback (most recent call last):
        ...
        svc_api.core.errors.NotFound: no live trend signal BTCUSDT 1h BUY at 3600 (unknown or expired)
    """
    found = conn.execute(sa.select(trend_signals.c.ts).where(key.where() & _live(now)).with_for_update())
    if found.first() is None:
        raise NotFound(f"no live trend signal {key.symbol} {key.timeframe} {key.way} at {key.ts} "
                       "(unknown or expired)")
    held = conn.execute(sa.select(trend_signal_tracks.c.ts).where(
        key.where(trend_signal_tracks) & (trend_signal_tracks.c.svc_id == svc_id))).first()
    if held is None:
        values = {"svc_id": svc_id, "symbol": key.symbol, "timeframe": key.timeframe, "ts": key.ts,
                  "way": key.way, "created_at": now}
        conn.execute(trend_signal_tracks.insert().values(**values))
    conn.execute(trend_signals.update().where(key.where()).values(expires_at=None))
    return {"tracked": True}


def untrack(conn: Connection, svc_id: str, key: SignalKey, *, ttl: int = SIGNAL_TTL) -> dict[str, bool]:
    """Stop tracking (idempotent); when nobody tracks the signal any more its expiry comes back.

    Example:
        >>> from svc_api.core.store import Store
        >>> from svc_api.migrations import migrate
        >>> store = Store("sqlite:///:memory:"); _ = migrate(store)
        >>> with store.write() as conn:
        ...     untrack(conn, "AB12CD", SignalKey("BTCUSDT", "1h", 3600, "BUY"))
        {'tracked': False}
    """
    # Lock the signal first, so a concurrent track cannot slip between the count and the update.
    conn.execute(sa.select(trend_signals.c.ts).where(key.where()).with_for_update())
    t = trend_signal_tracks
    conn.execute(t.delete().where(key.where(t) & (t.c.svc_id == svc_id)))
    left = conn.execute(sa.select(sa.func.count()).select_from(t).where(key.where(t))).scalar_one()
    if not left:
        conn.execute(trend_signals.update().where(key.where() & trend_signals.c.expires_at.is_(None))
                     .values(expires_at=key.ts + ttl))
    return {"tracked": False}


def tracked_page(conn: Connection, svc_id: str, *, limit: int,
                 after: SignalKey | None) -> tuple[list[tuple[SignalKey, bool]], bool]:
    """The caller's tracked signals after ``after``, newest signal first, each with its
    ``is_return_to_trend``; and whether more follow.

    Example:
        >>> from svc_api.core.store import Store
        >>> from svc_api.migrations import migrate
        >>> store = Store("sqlite:///:memory:"); _ = migrate(store)
        >>> with store.read() as conn:
        ...     tracked_page(conn, "AB12CD", limit=20, after=None)
        ([], False)
    """
    t = trend_signal_tracks.c
    same = sa.and_(*(t[n] == trend_signals.c[n] for n in ("symbol", "timeframe", "ts", "way")))
    joined = trend_signal_tracks.join(trend_signals, same)
    query = (sa.select(t.symbol, t.timeframe, t.ts, t.way, trend_signals.c.is_return_to_trend)
             .select_from(joined).where(t.svc_id == svc_id))
    if after is not None:
        query = query.where(sa.or_(
            t.ts < after.ts,
            sa.and_(t.ts == after.ts, t.symbol > after.symbol),
            sa.and_(t.ts == after.ts, t.symbol == after.symbol, t.timeframe > after.timeframe),
            sa.and_(t.ts == after.ts, t.symbol == after.symbol, t.timeframe == after.timeframe,
                    t.way > after.way),
        ))
    rows = conn.execute(query.order_by(t.ts.desc(), t.symbol, t.timeframe, t.way).limit(limit + 1)).all()
    keys = [(SignalKey(r.symbol, r.timeframe, int(r.ts), r.way), bool(r.is_return_to_trend))
            for r in rows[:limit]]
    return keys, len(rows) > limit


def detail(store: Any, symbol: str, timeframe: str, ts: int, way: str | None = None) -> dict[str, Any]:
    """The engine's Trend signal (``trend_data`` and the 200-candle ``klines_data``) of one candle.

    ``way`` picks that way's signal when the candle holds both; 404 when there is none.

    Example:
        >>> import tempfile
        >>> from svc_engine.data import DataStore
        >>> detail(DataStore(tempfile.mkdtemp()), "BTCUSDT", "1h", 3600)
        Traceback (most recent call last):
        ...
        svc_api.core.errors.NotFound: no trend signal of BTCUSDT 1h at timestamp 3600
    """
    from svc_engine.data import load_klines
    from svc_engine.trend import detect_trends, signal_to_api
    from svc_engine.trend.scan import WARMUP

    try:
        klines = load_klines(symbol, timeframe, start_ts=ts, end_ts=ts, warmup=WARMUP, store=store)
    except (LookupError, ValueError):
        klines = None
    found = pl.DataFrame()
    if klines is not None:
        found = detect_trends(klines, symbol=symbol, timeframe=timeframe)
        found = found.filter(pl.col("open_time") == ts * 1000)
        if way is not None:
            found = found.filter(pl.col("way") == way)
    if found.height == 0:
        what = f"{symbol} {timeframe}" + (f" {way}" if way else "")
        raise NotFound(f"no trend signal of {what} at timestamp {ts}")
    return signal_to_api(found.head(1), klines)


# ---- sentiment ------------------------------------------------------------------------------------


def parse_market_key(catalog: Any, value: object) -> tuple[str, str, str, str]:
    """``(market_key, market, symbol, timeframe)`` of a ``<SYMBOL>#<timeframe>`` key (default
    ``BTCUSDT#1h``): 400 when malformed, 404 when the store has no such series.

    Example:
        >>> import tempfile
        >>> from svc_engine.data import Catalog, DataStore
        >>> parse_market_key(Catalog(DataStore(tempfile.mkdtemp())), "BTCUSDT-1h")
        Traceback (most recent call last):
        ...
        svc_api.core.errors.Invalid: market_key must look like BTCUSDT#1h (<SYMBOL>#<timeframe>), \
got 'BTCUSDT-1h'
    """
    from svc_engine.data import timeframe_ms
    from svc_engine.trend import market_key

    text = DEFAULT_MARKET_KEY if value is None or value == "" else str(value)
    symbol, sep, timeframe = text.partition("#")
    if not sep:
        raise Invalid(f"market_key must look like BTCUSDT#1h (<SYMBOL>#<timeframe>), got {text!r}")
    try:
        timeframe_ms(timeframe)
        market_key(symbol, timeframe)
    except ValueError as exc:
        raise Invalid(str(exc)) from None
    market, data_symbol = find_series(catalog, symbol)
    return market_key(data_symbol, timeframe), market, data_symbol, timeframe


def sentiment_scores(catalog: Any, market: str, symbol: str, timeframe: str, *, count: int,
                     before: int | None) -> pl.DataFrame:
    """The engine's scores of the last ``count`` candles opening before ``before`` (seconds), each
    computed with ``SENTIMENT_WARMUP`` earlier candles; the warm-up rows are kept (older history).

    Example:
        >>> import tempfile
        >>> from svc_engine.data import Catalog, DataStore
        >>> store = DataStore(tempfile.mkdtemp())
        >>> df = pl.DataFrame({"open_time": [0, 3_600_000], "open": [1.0, 1.0], "high": [1.0, 1.0],
        ...                    "low": [1.0, 1.0], "close": [1.0, 1.0], "volume": [1.0, 1.0]})
        >>> _ = store.write_klines("crypto", "BTCUSDT", "1h", df)
        >>> scores = sentiment_scores(Catalog(store), "crypto", "BTCUSDT", "1h", count=1, before=None)
        >>> scores["score"].to_list()
        [0, 0]
    """
    from svc_engine.data import load_klines, timeframe_ms
    from svc_engine.trend import trend_indicator

    step = timeframe_ms(timeframe)
    newest = freshest(catalog, market, symbol)[1]
    hi = newest if before is None else min(newest, before * 1000 - 1)
    lo = max(0, hi - (count + SENTIMENT_WARMUP) * step)
    empty = pl.DataFrame(schema={"open_time": pl.Int64(), "score": pl.Int64(), "direction": pl.Utf8()})
    if hi < lo:
        return empty
    try:
        klines = load_klines(symbol, timeframe, start_ts=lo / 1000, end_ts=hi / 1000, market=market,
                             store=catalog.store)
    except ValueError as exc:
        if "selects no candle" in str(exc):
            return empty
        raise Invalid(str(exc)) from None
    return trend_indicator(klines)
