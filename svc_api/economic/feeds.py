"""Reading economic data files: news feeds (RSS 2.0, RSS 1.0, Atom) and calendars (CSV or JSON).

Everything is parsed and checked before anything is stored: a file with one bad item is refused
whole, with a :class:`FeedError` that names the item and what is wrong. XML is read with the
standard library's parser, and a document that declares a DOCTYPE or entities is refused outright
(no entity expansion, no external resources: the attacks defusedxml guards against).

Calendar records (JSON objects, or CSV rows under a header) have the fields ``title`` (required),
``id``, ``country``, ``impact`` (``high``, ``medium``, ``low`` or empty), ``forecast``,
``previous``, and one way to say when, in this order of precedence:

- ``event_time``: ISO 8601 (``2026-12-02T13:30:00Z``; without a zone it is UTC) or Unix seconds;
- ``date`` (``YYYY-MM-DD``) and optional ``time`` (``HH:MM``, UTC; default ``00:00``);
- ``day_offset`` (an integer: days after the UTC midnight of the load time) and optional ``time``.

A JSON calendar is a list of records or ``{"source": NAME, "events": [records]}``.

Example:
    >>> feed = parse_news(b'''<rss version="2.0"><channel><title>Desk</title><item>
    ...   <title>Bitcoin rallies</title><link>https://x.io/1</link><guid>g1</guid>
    ...   <pubDate>Tue, 24 Nov 2026 08:00:00 GMT</pubDate></item></channel></rss>''')
    >>> feed.title, feed.items[0].source_id, feed.items[0].published_at
    ('Desk', 'g1', 1795507200)
"""

from __future__ import annotations

import csv
import hashlib
import html
import io
import json
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any

MAX_BYTES = 5_000_000
"""A feed or calendar larger than this is refused (a news feed is a few hundred kilobytes)."""
MAX_ITEMS = 5_000
IMPACTS = ("high", "medium", "low")
_TAG = re.compile(r"<[^>]*>")
_SPACE = re.compile(r"\s+")
_LOOSE = re.compile(r" ([.,;:!?])")  # a space a removed tag left before punctuation
_DECLARATION = re.compile(rb"<!(DOCTYPE|ENTITY)", re.IGNORECASE)
_TIME = re.compile(r"^([01][0-9]|2[0-3]):([0-5][0-9])$")


class FeedError(ValueError):
    """A feed or calendar that cannot be read; the message says where and why.

    Example:
        >>> str(FeedError("item 2: title is missing"))
        'item 2: title is missing'
    """


@dataclass(frozen=True)
class NewsEntry:
    """One item of a news feed, as read (classification comes later, in the service)."""

    source_id: str
    title: str
    summary: str
    url: str
    published_at: int


@dataclass(frozen=True)
class Feed:
    """A news feed: its own title (the default ``source``) and its items."""

    title: str
    items: tuple[NewsEntry, ...]


@dataclass(frozen=True)
class CalendarEntry:
    """One event of a calendar; ``impact`` None when the file does not say."""

    source_id: str
    title: str
    country: str
    impact: str | None
    forecast: str
    previous: str
    event_time: int


@dataclass(frozen=True)
class Calendar:
    """A calendar: its ``source`` name when the file gives one, and its events."""

    source: str | None
    events: tuple[CalendarEntry, ...]


def plain_text(value: str | None, limit: int) -> str:
    """Text without HTML tags and entities, whitespace collapsed, cut to ``limit`` characters.

    Example:
        >>> plain_text("<p>Rates &amp; <b>yields</b>\\n rise</p><p>Stocks <i>fall</i>.</p>", 100)
        'Rates & yields rise Stocks fall.'
    """
    if not value:
        return ""
    text = _SPACE.sub(" ", html.unescape(_TAG.sub(" ", value))).strip()
    return _LOOSE.sub(r"\1", text)[:limit]


def _digest(*parts: str) -> str:
    return "sha256:" + hashlib.sha256("\x1f".join(parts).encode()).hexdigest()[:40]


def _source_id(given: str, *fallback: str) -> str:
    given = given.strip()
    if not given:
        return _digest(*fallback)
    return given if len(given) <= 255 else _digest(given)


# ---- news ----------------------------------------------------------------------------------------


def _local(tag: object) -> str:
    return str(tag).rpartition("}")[2] if isinstance(tag, str) else ""


def _child(element: ET.Element, name: str) -> ET.Element | None:
    return next((c for c in element if _local(c.tag) == name), None)


def _text(element: ET.Element, *names: str) -> str:
    for name in names:
        found = _child(element, name)
        if found is not None and (found.text or "").strip():
            return (found.text or "").strip()
    return ""


def _date(value: str, where: str) -> int:
    if not value:
        raise FeedError(f"{where}: the publication date is missing")
    try:
        parsed = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        parsed = None
    if parsed is None:
        try:
            parsed = datetime.fromisoformat(value)
        except ValueError:
            raise FeedError(f"{where}: {value[:40]!r} is not an RFC 822 or ISO 8601 date") from None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return int(parsed.timestamp())


def _atom_link(entry: ET.Element) -> str:
    links = [c for c in entry if _local(c.tag) == "link"]
    chosen = next((c for c in links if c.get("rel", "alternate") == "alternate"), None)
    return (chosen if chosen is not None else links[0]).get("href", "").strip() if links else ""


def _entry(element: ET.Element, number: int, atom: bool) -> NewsEntry:
    where = f"item {number}"
    title = plain_text(_text(element, "title"), 500)
    if not title:
        raise FeedError(f"{where}: the title is missing")
    if atom:
        url = _atom_link(element)
        given = _text(element, "id")
        summary = _text(element, "summary", "content")
        published = _date(_text(element, "published", "updated"), where)
    else:
        url = _text(element, "link")
        given = _text(element, "guid") or url
        summary = _text(element, "description", "encoded")
        published = _date(_text(element, "pubDate", "date"), where)
    return NewsEntry(
        source_id=_source_id(given, title, str(published)),
        title=title,
        summary=plain_text(summary, 1000),
        url=url[:2048],
        published_at=published,
    )


def parse_news(data: bytes) -> Feed:
    """Read an RSS 2.0, RSS 1.0 or Atom feed; :class:`FeedError` when it is none of them.

    Example:
        >>> feed = parse_news(b'''<feed xmlns="http://www.w3.org/2005/Atom"><title>A</title>
        ...   <entry><id>urn:1</id><title>ECB holds rates</title><link href="https://a.io/1"/>
        ...   <updated>2026-11-24T09:00:00Z</updated><summary>Steady.</summary></entry></feed>''')
        >>> feed.items[0].url, feed.items[0].published_at
        ('https://a.io/1', 1795510800)
        >>> parse_news(b"<html><body>not a feed</body></html>")
        Traceback (most recent call last):
        ...
        svc_api.economic.feeds.FeedError: not a news feed: the root element is <html>, expected <rss>, \
<feed> or <rdf:RDF>
    """
    if len(data) > MAX_BYTES:
        raise FeedError(f"the feed is larger than {MAX_BYTES} bytes")
    if _DECLARATION.search(data):
        raise FeedError("the feed declares a DOCTYPE or entities, which are refused")
    try:
        root = ET.fromstring(data)
    except ET.ParseError as exc:
        raise FeedError(f"the feed is not well-formed XML ({exc})") from None
    kind = _local(root.tag)
    if kind == "feed":
        holder, elements, atom = root, [c for c in root if _local(c.tag) == "entry"], True
    elif kind in ("rss", "RDF"):
        holder = _child(root, "channel")
        if holder is None:
            raise FeedError("not a news feed: <channel> is missing")
        scope = holder if kind == "rss" else root
        elements, atom = [c for c in scope if _local(c.tag) == "item"], False
    else:
        raise FeedError(f"not a news feed: the root element is <{kind}>, expected <rss>, <feed> or <rdf:RDF>")
    if len(elements) > MAX_ITEMS:
        raise FeedError(f"the feed has more than {MAX_ITEMS} items")
    items = tuple(_entry(e, n, atom) for n, e in enumerate(elements, 1))
    return Feed(title=plain_text(_text(holder, "title"), 100), items=items)


# ---- calendar ------------------------------------------------------------------------------------


def _field(record: dict[str, Any], name: str, limit: int) -> str:
    value = record.get(name)
    if value is None:
        return ""
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise FeedError(f"{name} must be text or a number, got {type(value).__name__}")
    return str(value).strip()[:limit]


def _time_of_day(record: dict[str, Any]) -> int:
    clock = _field(record, "time", 5) or "00:00"
    match = _TIME.match(clock)
    if match is None:
        raise FeedError(f"time must be HH:MM (UTC), got {clock!r}")
    return int(match[1]) * 3600 + int(match[2]) * 60


def _event_time(record: dict[str, Any], now: int) -> int:
    given = record.get("event_time")
    if isinstance(given, int) and not isinstance(given, bool):
        return given
    text = _field(record, "event_time", 40)
    if text.isdigit():
        return int(text)
    if text:
        try:
            parsed = datetime.fromisoformat(text)
        except ValueError:
            raise FeedError(f"event_time {text!r} is not ISO 8601 or Unix seconds") from None
        return int((parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)).timestamp())
    day = _field(record, "date", 10)
    if day:
        try:
            midnight = datetime.strptime(day, "%Y-%m-%d").replace(tzinfo=UTC)
        except ValueError:
            raise FeedError(f"date {day!r} is not YYYY-MM-DD") from None
        return int(midnight.timestamp()) + _time_of_day(record)
    offset = _field(record, "day_offset", 6)
    if offset:
        if not re.fullmatch(r"-?[0-9]{1,4}", offset):
            raise FeedError(f"day_offset must be an integer number of days, got {offset!r}")
        return now - now % 86400 + int(offset) * 86400 + _time_of_day(record)
    raise FeedError("the event has no event_time, date or day_offset")


def _calendar_entry(record: object, number: int, now: int) -> CalendarEntry:
    try:
        if not isinstance(record, dict):
            raise FeedError("an event must be an object")
        title = plain_text(_field(record, "title", 500), 500)
        if not title:
            raise FeedError("the title is missing")
        impact = _field(record, "impact", 10).lower() or None
        if impact is not None and impact not in IMPACTS:
            raise FeedError(f"impact must be high, medium or low, got {impact!r}")
        when = _event_time(record, now)
        country = _field(record, "country", 8).upper()
        return CalendarEntry(
            source_id=_source_id(_field(record, "id", 255), title, country, str(when)),
            title=title,
            country=country,
            impact=impact,
            forecast=_field(record, "forecast", 64),
            previous=_field(record, "previous", 64),
            event_time=when,
        )
    except FeedError as exc:
        raise FeedError(f"event {number}: {exc}") from None


def parse_calendar(data: bytes, *, now: int) -> Calendar:
    """Read a JSON or CSV calendar (JSON when it starts with ``[`` or ``{``); ``now`` places
    ``day_offset`` events.

    Example:
        >>> csv_text = b"title,country,date,time,impact\\nUS CPI,us,2026-12-10,13:30,high\\n"
        >>> cal = parse_calendar(csv_text, now=0)
        >>> cal.events[0].country, cal.events[0].event_time, cal.events[0].impact
        ('US', 1796909400, 'high')
        >>> json_text = b'[{"title": "NFP", "day_offset": 1, "time": "13:30"}]'
        >>> parse_calendar(json_text, now=86400 + 5).events[0].event_time
        221400
    """
    if len(data) > MAX_BYTES:
        raise FeedError(f"the calendar is larger than {MAX_BYTES} bytes")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise FeedError("the calendar is not UTF-8 text") from None
    source, records = _json_records(text) if text.lstrip()[:1] in ("[", "{") else (None, _csv_records(text))
    if len(records) > MAX_ITEMS:
        raise FeedError(f"the calendar has more than {MAX_ITEMS} events")
    return Calendar(source, tuple(_calendar_entry(r, n, now) for n, r in enumerate(records, 1)))


def _json_records(text: str) -> tuple[str | None, list[Any]]:
    try:
        document = json.loads(text)
    except ValueError as exc:
        raise FeedError(f"the calendar is not valid JSON ({exc})") from None
    source = None
    if isinstance(document, dict):
        source = document.get("source")
        if source is not None and (not isinstance(source, str) or not 1 <= len(source.strip()) <= 100):
            raise FeedError("source must be a string of 1-100 characters")
        document = document.get("events")
    if not isinstance(document, list):
        raise FeedError('a JSON calendar is a list of events or {"events": [...]}')
    return (source.strip() if source else None), document


def _csv_records(text: str) -> list[Any]:
    try:
        rows = list(csv.DictReader(io.StringIO(text)))
    except csv.Error as exc:
        raise FeedError(f"the calendar is not valid CSV ({exc})") from None
    header = [h.strip() for h in (csv.DictReader(io.StringIO(text)).fieldnames or [])]
    if "title" not in header:
        raise FeedError("a CSV calendar needs a header row with a title column")
    return [{(k or "").strip(): v for k, v in row.items() if k is not None} for row in rows]
