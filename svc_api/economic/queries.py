"""Every SQL statement of the economic domain.

Example:
    >>> with store.read() as conn:
    ...     is_empty(conn), news(conn, limit=5, after=None)
    (True, [])
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Row

from svc_api.core.upsert import insert_new
from svc_api.economic.tables import economic_calendar, economic_news

_n, _c = economic_news.c, economic_calendar.c


def add_news(conn: Connection, values: Mapping[str, Any]) -> bool:
    """Insert a news item unless one with its ``(source, source_id)`` exists; whether it was added.

    Example:
        >>> row = dict(news_id="n1", source="s", source_id="1", title="t", summary="", url="",
        ...            sentiment="neutral", sentiment_score=0, impact="low", category="other",
        ...            affected_coins="[]", affected_markets="[]", country="", published_at=1, ingested_at=1)
        >>> with store.write() as conn:
        ...     add_news(conn, row), add_news(conn, row | {"news_id": "n2"})
        (True, False)
    """
    stmt = insert_new(conn, economic_news, ["source", "source_id"]).values(**values)
    # RETURNING, not rowcount: psycopg reports -1 for a skipped ON CONFLICT DO NOTHING.
    return bool(conn.execute(stmt.returning(_n.news_id)).all())


def add_event(conn: Connection, values: Mapping[str, Any]) -> bool:
    """Insert a calendar event unless one with its ``(source, source_id)`` exists; whether it was added.

    Example:
        >>> row = dict(event_id="e1", source="s", source_id="1", title="CPI", country="US", impact="high",
        ...            forecast="", previous="", event_time=1, ingested_at=1)
        >>> with store.write() as conn:
        ...     add_event(conn, row), add_event(conn, row | {"event_id": "e2"})
        (True, False)
    """
    stmt = insert_new(conn, economic_calendar, ["source", "source_id"]).values(**values)
    return bool(conn.execute(stmt.returning(_c.event_id)).all())


def is_empty(conn: Connection) -> bool:
    """True when neither table holds a row.

    Example:
        >>> with store.read() as conn:
        ...     is_empty(conn)
        True
    """
    any_news = conn.execute(sa.select(_n.news_id).limit(1)).first()
    any_event = conn.execute(sa.select(_c.event_id).limit(1)).first()
    return any_news is None and any_event is None


def news(conn: Connection, *, limit: int, after: tuple[int, str] | None) -> list[Row[Any]]:
    """News newest first (published time, then id), after a keyset position.

    Example:
        >>> with store.read() as conn:
        ...     news(conn, limit=10, after=(1_700_000_000, "news_x"))
        []
    """
    query = sa.select(economic_news)
    if after is not None:
        query = query.where(sa.tuple_(_n.published_at, _n.news_id) < sa.tuple_(*after))
    order = (_n.published_at.desc(), _n.news_id.desc())
    return list(conn.execute(query.order_by(*order).limit(limit)))


def upcoming(
    conn: Connection, *, start: int, end: int, limit: int, after: tuple[int, str] | None
) -> list[Row[Any]]:
    """Events with ``start <= event_time <= end``, soonest first, after a keyset position.

    Example:
        >>> with store.read() as conn:
        ...     upcoming(conn, start=0, end=10, limit=5, after=None)
        []
    """
    query = sa.select(economic_calendar).where(_c.event_time >= start, _c.event_time <= end)
    if after is not None:
        query = query.where(sa.tuple_(_c.event_time, _c.event_id) > sa.tuple_(*after))
    return list(conn.execute(query.order_by(_c.event_time.asc(), _c.event_id.asc()).limit(limit)))


def recent(conn: Connection, *, before: int, limit: int, after: tuple[int, str] | None) -> list[Row[Any]]:
    """Events with ``event_time < before``, newest first, after a keyset position.

    Example:
        >>> with store.read() as conn:
        ...     recent(conn, before=10, limit=5, after=None)
        []
    """
    query = sa.select(economic_calendar).where(_c.event_time < before)
    if after is not None:
        query = query.where(sa.tuple_(_c.event_time, _c.event_id) < sa.tuple_(*after))
    return list(conn.execute(query.order_by(_c.event_time.desc(), _c.event_id.desc()).limit(limit)))
