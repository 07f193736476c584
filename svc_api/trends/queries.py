"""Every SQL statement of the trends domain, one small function each. They join the caller's
transaction and hold no rules (expiry and tracking are the service's). The example runs each of them.

A signal is named by ``(symbol, timeframe, ts, way)``, the four fields of
:class:`~svc_api.trends.service.SignalKey` (any object with those attributes will do here).

Example:
    >>> from svc_api.accounts.service import register
    >>> from svc_api.trends.service import SignalKey
    >>> key = SignalKey("BTCUSDT", "1h", 3600, "BUY")
    >>> row = {"symbol": "BTCUSDT", "timeframe": "1h", "ts": 3600, "way": "BUY", "market": "crypto",
    ...        "is_return_to_trend": False}
    >>> with store.write() as conn:
    ...     sid = register(conn, "t@example.com", "password1", ip="::1", ttl=60, now=0).svc_id
    ...     [insert_if_new(conn, row, detected_at=1, expires_at=9) for _ in range(2)]
    ...     count_live(conn, now=5), [r.ts for r in live_page(conn, now=5, offset=0, limit=5)]
    ...     lock_signal(conn, key, live_at=5), lock_signal(conn, key, live_at=9)
    ...     insert_track(conn, sid, key, now=5); set_expiry(conn, key, None)
    ...     is_tracked_by(conn, sid, key), count_trackers(conn, key)
    ...     [tuple(r) for r in tracked_after(conn, sid, limit=5, after=None)]
    ...     delete_track(conn, sid, key); set_expiry(conn, key, 9, only_if_tracked=True)
    ...     delete_expired(conn, now=8), delete_expired(conn, now=9)
    [True, False]
    (1, [3600])
    (True, False)
    (True, 1)
    [('BTCUSDT', '1h', 3600, 'BUY', False)]
    (0, 1)
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Row

from svc_api.core.upsert import insert_new
from svc_api.trends.tables import trend_signal_tracks, trend_signals

_s = trend_signals.c
_t = trend_signal_tracks.c
_KEY = ("symbol", "timeframe", "ts", "way")


def _same(table: sa.Table, key: Any) -> sa.ColumnElement[bool]:
    return sa.and_(*(table.c[name] == getattr(key, name) for name in _KEY))


def _live(now: int) -> sa.ColumnElement[bool]:
    return sa.or_(_s.expires_at.is_(None), _s.expires_at > now)


# ---- stored signals -------------------------------------------------------------------------------


def insert_if_new(conn: Connection, row: dict[str, Any], *, detected_at: int, expires_at: int) -> bool:
    """Store one signal unless its key is stored already (then nothing changes); True when stored."""
    stmt = insert_new(conn, trend_signals).values(**row, detected_at=detected_at, expires_at=expires_at)
    # RETURNING, not rowcount: psycopg reports -1 for a skipped ON CONFLICT DO NOTHING.
    return bool(conn.execute(stmt.returning(_s.ts)).all())


def delete_expired(conn: Connection, *, now: int) -> int:
    """Delete the signals whose expiry has passed (tracked ones have none); returns how many."""
    gone = trend_signals.delete().where(_s.expires_at.is_not(None) & (_s.expires_at <= now))
    return int(conn.execute(gone).rowcount)


def count_live(conn: Connection, *, now: int) -> int:
    """How many signals have not expired at ``now``."""
    query = sa.select(sa.func.count()).select_from(trend_signals).where(_live(now))
    return int(conn.execute(query).scalar_one())


def live_page(conn: Connection, *, now: int, offset: int, limit: int) -> list[Row[Any]]:
    """Live signals, newest candle first (then symbol, timeframe, way), ``limit`` from ``offset``."""
    query = (
        sa.select(trend_signals)
        .where(_live(now))
        .order_by(_s.ts.desc(), _s.symbol, _s.timeframe, _s.way)
        .offset(offset)
        .limit(limit)
    )
    return list(conn.execute(query))


def lock_signal(conn: Connection, key: Any, *, live_at: int | None = None) -> bool:
    """Lock the signal's row for this transaction; True when it exists (and is live at ``live_at``)."""
    where = _same(trend_signals, key)
    if live_at is not None:
        where = where & _live(live_at)
    return conn.execute(sa.select(_s.ts).where(where).with_for_update()).first() is not None


def set_expiry(conn: Connection, key: Any, expires_at: int | None, *, only_if_tracked: bool = False) -> None:
    """Set the expiry of one signal (None: never); ``only_if_tracked`` leaves an expiry already set."""
    where = _same(trend_signals, key)
    if only_if_tracked:
        where = where & _s.expires_at.is_(None)
    conn.execute(trend_signals.update().where(where).values(expires_at=expires_at))


# ---- tracking -------------------------------------------------------------------------------------


def is_tracked_by(conn: Connection, svc_id: str, key: Any) -> bool:
    """True when ``svc_id`` tracks the signal."""
    query = sa.select(_t.ts).where(_same(trend_signal_tracks, key) & (_t.svc_id == svc_id))
    return conn.execute(query).first() is not None


def insert_track(conn: Connection, svc_id: str, key: Any, *, now: int) -> None:
    """Record that ``svc_id`` tracks the signal."""
    values = {name: getattr(key, name) for name in _KEY}
    conn.execute(trend_signal_tracks.insert().values(svc_id=svc_id, created_at=now, **values))


def delete_track(conn: Connection, svc_id: str, key: Any) -> None:
    """Forget that ``svc_id`` tracks the signal."""
    conn.execute(trend_signal_tracks.delete().where(_same(trend_signal_tracks, key) & (_t.svc_id == svc_id)))


def count_trackers(conn: Connection, key: Any) -> int:
    """How many users track the signal."""
    query = sa.select(sa.func.count()).select_from(trend_signal_tracks).where(_same(trend_signal_tracks, key))
    return int(conn.execute(query).scalar_one())


def tracked_after(conn: Connection, svc_id: str, *, limit: int, after: Any | None) -> list[Row[Any]]:
    """Up to ``limit`` signals ``svc_id`` tracks, newest candle first (then symbol, timeframe, way),
    after the key ``after``; each row: ``symbol, timeframe, ts, way, is_return_to_trend``."""
    joined = trend_signal_tracks.join(trend_signals, sa.and_(*(_t[n] == _s[n] for n in _KEY)))
    query = (
        sa.select(_t.symbol, _t.timeframe, _t.ts, _t.way, _s.is_return_to_trend)
        .select_from(joined)
        .where(_t.svc_id == svc_id)
    )
    if after is not None:
        query = query.where(
            sa.or_(
                _t.ts < after.ts,
                sa.and_(_t.ts == after.ts, _t.symbol > after.symbol),
                sa.and_(_t.ts == after.ts, _t.symbol == after.symbol, _t.timeframe > after.timeframe),
                sa.and_(
                    _t.ts == after.ts,
                    _t.symbol == after.symbol,
                    _t.timeframe == after.timeframe,
                    _t.way > after.way,
                ),
            )
        )
    return list(conn.execute(query.order_by(_t.ts.desc(), _t.symbol, _t.timeframe, _t.way).limit(limit)))
