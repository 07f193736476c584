"""Economic data: ingesting news and calendar files, and the pages ``economic_news`` and
``economic_calendar`` read.

Ingesting is all or nothing (one transaction) and idempotent: a row is keyed by ``(source,
source_id)``, an item already stored is counted ``unchanged`` and left as it was (the first version
wins), so running the same ingest twice changes nothing. News is classified once, when stored, by
the rule of :mod:`svc_api.economic.classify`.

Times in items are ISO 8601 UTC strings ending in ``Z``; ``timestamp`` is the same moment in Unix
seconds. A calendar item's ``scheduled_date`` is the UTC midnight of its day, ``event_time`` the
moment itself.

Example:
    >>> fill_sample_if_empty(store, now=1_795_500_000)
    {'news': {'added': 15, 'unchanged': 0}, 'calendar': {'added': 20, 'unchanged': 0}}
    >>> fill_sample_if_empty(store, now=1_795_500_000) is None
    True
"""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime
from importlib import resources
from typing import Any

from sqlalchemy.engine import Row

from svc_api.core.errors import Invalid
from svc_api.core.store import Store
from svc_api.economic import queries
from svc_api.economic.classify import classify, impact_of
from svc_api.economic.feeds import Calendar, Feed, parse_calendar, parse_news

MODES = ("upcoming", "recent")
SAMPLE = "sample"
"""The ``source`` of the bundled sample's rows."""
NEWS_TYPE = "news"
CALENDAR_TYPE = "calendar_event"
DAY = 86_400

Position = dict[str, Any]


def iso(seconds: int) -> str:
    """Unix seconds as ISO 8601 UTC with a ``Z``.

    Example:
        >>> iso(1_795_507_200)
        '2026-11-24T08:00:00Z'
    """
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _key(prefix: str, source: str, source_id: str) -> str:
    return prefix + hashlib.sha256(f"{source}\x1f{source_id}".encode()).hexdigest()[:32]


def _source(given: str | None, fallback: str | None, default: str) -> str:
    name = (given or fallback or default).strip()
    if not 1 <= len(name) <= 100:
        raise Invalid("source must be 1-100 characters")
    return name


def ingest_news(store: Store, feed: Feed, *, now: int, source: str | None = None) -> dict[str, int]:
    """Store a feed's items not stored yet; counts ``{added, unchanged}``. ``source`` defaults to
    the feed's title (``feed`` when it has none).

    Example:
        >>> from svc_api.core.store import Store
        >>> feed = parse_news(b'<rss><channel><title>Desk</title><item><title>ECB holds</title>'
        ...     b'<guid>1</guid><pubDate>Tue, 24 Nov 2026 08:00:00 GMT</pubDate></item></channel></rss>')
        >>> ingest_news(store, feed, now=0), ingest_news(store, feed, now=0)
        ({'added': 1, 'unchanged': 0}, {'added': 0, 'unchanged': 1})
    """
    name = _source(source, feed.title, "feed")
    added = 0
    with store.write() as conn:
        for item in feed.items:
            found = classify(item.title, item.summary)
            added += queries.add_news(
                conn,
                {
                    "news_id": _key("news_", name, item.source_id),
                    "source": name,
                    "source_id": item.source_id,
                    "title": item.title,
                    "summary": item.summary,
                    "url": item.url,
                    "sentiment": found.sentiment,
                    "sentiment_score": found.sentiment_score,
                    "impact": found.impact,
                    "category": found.category,
                    "affected_coins": json.dumps(found.affected_coins),
                    "affected_markets": json.dumps(found.affected_markets),
                    "country": found.country,
                    "published_at": item.published_at,
                    "ingested_at": now,
                },
            )
    return {"added": added, "unchanged": len(feed.items) - added}


def ingest_calendar(
    store: Store, calendar: Calendar, *, now: int, source: str | None = None
) -> dict[str, int]:
    """Store a calendar's events not stored yet; counts ``{added, unchanged}``. ``source``
    defaults to the file's own ``source`` (``calendar`` when it has none); an event without an
    impact gets one from its title (:func:`~svc_api.economic.classify.impact_of`).

    Example:
        >>> from svc_api.core.store import Store
        >>> cal = parse_calendar(b"title,date\\nUS CPI,2026-12-10\\n", now=0)
        >>> ingest_calendar(store, cal, now=0), ingest_calendar(store, cal, now=0)
        ({'added': 1, 'unchanged': 0}, {'added': 0, 'unchanged': 1})
    """
    name = _source(source, calendar.source, "calendar")
    added = 0
    with store.write() as conn:
        for event in calendar.events:
            added += queries.add_event(
                conn,
                {
                    "event_id": _key("evt_", name, event.source_id),
                    "source": name,
                    "source_id": event.source_id,
                    "title": event.title,
                    "country": event.country,
                    "impact": event.impact or impact_of(event.title),
                    "forecast": event.forecast,
                    "previous": event.previous,
                    "event_time": event.event_time,
                    "ingested_at": now,
                },
            )
    return {"added": added, "unchanged": len(calendar.events) - added}


def news_item(row: Row[Any]) -> dict[str, Any]:
    """A stored news row as the API's News item.

    Example:
        >>> from types import SimpleNamespace
        >>> row = SimpleNamespace(news_id="news_1", title="ECB holds", summary="", source="s", url="",
        ...     sentiment="neutral", sentiment_score=0, impact="high", category="monetary_policy",
        ...     affected_coins="[]", affected_markets="[]", country="EU", published_at=1_795_507_200)
        >>> item = news_item(row)
        >>> item["sentiment_label"], item["published_at"], item["timestamp"]
        ('Neutral', '2026-11-24T08:00:00Z', 1795507200)
    """
    return {
        "id": row.news_id,
        "type": NEWS_TYPE,
        "title": row.title,
        "summary": row.summary,
        "source": row.source,
        "url": row.url,
        "sentiment": row.sentiment,
        "sentiment_label": row.sentiment.capitalize(),
        "sentiment_score": int(row.sentiment_score),
        "impact": row.impact,
        "category": row.category,
        "affected_coins": json.loads(row.affected_coins),
        "affected_markets": json.loads(row.affected_markets),
        "country": row.country,
        "published_at": iso(int(row.published_at)),
        "timestamp": int(row.published_at),
    }


def calendar_item(row: Row[Any]) -> dict[str, Any]:
    """A stored calendar row as the API's Calendar item.

    Example:
        >>> from types import SimpleNamespace
        >>> row = SimpleNamespace(event_id="evt_1", title="US CPI", source="s", impact="high",
        ...     forecast="2.7%", previous="2.8%", country="US", event_time=1_796_909_400)
        >>> item = calendar_item(row)
        >>> item["scheduled_date"], item["event_time"]
        ('2026-12-10T00:00:00Z', '2026-12-10T13:30:00Z')
    """
    at = int(row.event_time)
    return {
        "id": row.event_id,
        "type": CALENDAR_TYPE,
        "title": row.title,
        "source": row.source,
        "scheduled_date": iso(at - at % DAY),
        "event_time": iso(at),
        "impact": row.impact,
        "forecast": row.forecast,
        "previous": row.previous,
        "country": row.country,
        "timestamp": at,
    }


def news_page(
    store: Store, *, limit: int, after: tuple[int, str] | None
) -> tuple[list[dict[str, Any]], Position | None]:
    """A page of news, newest first, and the position after it (None on the last page).

    Example:
        >>> _ = fill_sample_if_empty(store, now=1_795_500_000)
        >>> page, last = news_page(store, limit=2, after=None)
        >>> [item["published_at"] for item in page], sorted(last)
        (['2026-11-25T05:40:00Z', '2026-11-25T03:15:00Z'], ['k', 't'])
    """
    with store.read() as conn:
        rows = queries.news(conn, limit=limit + 1, after=after)
    page = rows[:limit]
    more = len(rows) > limit
    return [news_item(r) for r in page], (
        {"t": int(page[-1].published_at), "k": page[-1].news_id} if more else None
    )


def calendar_page(
    store: Store, *, mode: str, now: int, horizon_days: int, limit: int, after: tuple[int, str] | None
) -> tuple[list[dict[str, Any]], Position | None]:
    """A page of the calendar: ``upcoming`` (from ``now`` through ``now + horizon_days`` days,
    soonest first) or ``recent`` (before ``now``, newest first); the position after it.

    Example:
        >>> _ = fill_sample_if_empty(store, now=1_795_500_000)
        >>> page, _ = calendar_page(store, mode="upcoming", now=1_795_500_000, horizon_days=1,
        ...                         limit=5, after=None)
        >>> [(item["title"], item["event_time"]) for item in page]
        [('Eurozone Manufacturing PMI (Flash)', '2026-11-24T09:00:00Z')]
    """
    if mode not in MODES:
        raise Invalid(f"mode must be one of {', '.join(MODES)}, got {mode!r}")
    with store.read() as conn:
        if mode == "upcoming":
            end = now + horizon_days * DAY
            rows = queries.upcoming(conn, start=now, end=end, limit=limit + 1, after=after)
        else:
            rows = queries.recent(conn, before=now, limit=limit + 1, after=after)
    page = rows[:limit]
    more = len(rows) > limit
    return [calendar_item(r) for r in page], (
        {"t": int(page[-1].event_time), "k": page[-1].event_id} if more else None
    )


def _sample(name: str) -> bytes:
    return resources.files("svc_api.economic").joinpath("sample", name).read_bytes()


def load_sample(store: Store, now: int) -> dict[str, dict[str, int]]:
    """Ingest the bundled sample (source ``sample``): 15 news items, and 20 calendar events placed
    by their ``day_offset`` from the UTC day of ``now``. Counts of each.

    Example:
        >>> load_sample(store, 0)["calendar"]
        {'added': 20, 'unchanged': 0}
    """
    news = ingest_news(store, parse_news(_sample("news.xml")), now=now, source=SAMPLE)
    calendar = ingest_calendar(
        store, parse_calendar(_sample("calendar.json"), now=now), now=now, source=SAMPLE
    )
    return {"news": news, "calendar": calendar}


def fill_sample_if_empty(store: Store, now: int) -> dict[str, dict[str, int]] | None:
    """Load the sample when both tables are empty (a fresh install shows something); the counts,
    or None when there was data already. For the app's start-up to call.

    Example:
        >>> fill_sample_if_empty(store, 0)["news"]
        {'added': 15, 'unchanged': 0}
    """
    with store.read() as conn:
        if not queries.is_empty(conn):
            return None
    return load_sample(store, now)
