"""The request and reply models of the economic data operations (``/user``).

Example:
    >>> Calendar.model_validate({"mode": "recent", "limit": 80}).limit
    50
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Annotated, Literal

from pydantic import Field

from svc_api.core.contract import Check, Fields, Shape
from svc_api.core.errors import Invalid
from svc_api.core.params import AsSent, Limit
from svc_api.economic.service import MODES

LIMIT = (20, 1, 50)
HORIZON = (7, 1, 90)
_INTEGER = re.compile(r"[0-9]{1,6}")
_CURSOR = AsSent(
    {
        "type": ["string", "null"],
        "description": "The previous page's `next_cursor` (or `last_evaluated_key`).",
    }
)


def horizon_days(value: object, name: str = "horizon_days") -> int:
    """``horizon_days``: default 7; an integer (or a string of digits) from 1 to 90, else 400.

    Example:
        >>> horizon_days(None), horizon_days("30")
        (7, 30)
        >>> horizon_days(91)
        Traceback (most recent call last):
        ...
        svc_api.core.errors.Invalid: horizon_days must be an integer from 1 to 90, got 91
    """
    default, lo, hi = HORIZON
    if value is None or value == "":
        return default
    if isinstance(value, int) and not isinstance(value, bool):
        number = value
    elif isinstance(value, str) and _INTEGER.fullmatch(value.strip()):
        number = int(value.strip())
    else:
        number = None
    if number is None or not lo <= number <= hi:
        raise Invalid(f"{name} must be an integer from {lo} to {hi}, got {value!r}")
    return number


def mode_of(value: object, name: str = "mode") -> str:
    """``mode``: ``upcoming`` (default) or ``recent``, else 400.

    Example:
        >>> mode_of(None), mode_of("recent")
        ('upcoming', 'recent')
        >>> mode_of("past")
        Traceback (most recent call last):
        ...
        svc_api.core.errors.Invalid: mode must be one of upcoming, recent, got 'past'
    """
    if value is None or value == "":
        return "upcoming"
    if value not in MODES:
        raise Invalid(f"{name} must be one of {', '.join(MODES)}, got {value!r}")
    return str(value)


class News(Fields):
    """``economic_news``: the news, newest first."""

    limit: Limit(*LIMIT, clamp=True)
    cursor: _CURSOR


class Calendar(Fields):
    """``economic_calendar``: the events ahead (``upcoming``) or past (``recent``)."""

    limit: Limit(*LIMIT, clamp=True)
    mode: Annotated[str, Check(mode_of, {"type": "string", "enum": list(MODES), "default": "upcoming"})]
    horizon_days: Annotated[
        int,
        Check(
            horizon_days,
            {
                "type": "integer",
                "minimum": HORIZON[1],
                "maximum": HORIZON[2],
                "default": HORIZON[0],
                "description": "Days ahead (`upcoming` only; checked in both modes).",
            },
        ),
    ]
    cursor: _CURSOR


class NewsItem(Shape):
    """One news item."""

    id: str
    type: Literal["news"]
    title: str
    summary: str
    """Plain text (HTML removed)."""
    source: str
    """The feed's name; ``sample`` for the bundled sample."""
    url: str
    sentiment: Literal["bullish", "bearish", "neutral"]
    sentiment_label: Literal["Bullish", "Bearish", "Neutral"]
    sentiment_score: Annotated[int, Field(ge=-100, le=100)]
    impact: Literal["high", "medium", "low"]
    category: Literal[
        "monetary_policy", "inflation", "employment", "growth", "regulation", "crypto", "markets", "other"
    ]
    affected_coins: list[str]
    """Coin symbols such as BTC."""
    affected_markets: list[Literal["bonds", "commodities", "crypto", "forex", "stocks"]]
    country: str
    """ISO 3166 alpha-2 (EU for the euro area); empty when none."""
    published_at: datetime
    """ISO 8601 UTC, ending in Z."""
    timestamp: int
    """Unix seconds."""


class CalendarItem(Shape):
    """One calendar event."""

    id: str
    type: Literal["calendar_event"]
    title: str
    source: str
    scheduled_date: datetime
    """UTC midnight of the event's day (ISO 8601, Z)."""
    event_time: datetime
    """ISO 8601 UTC, ending in Z."""
    impact: Literal["high", "medium", "low"]
    forecast: str
    previous: str
    country: str
    timestamp: int
    """Unix seconds."""


class NewsPage(Shape):
    """A page of news, newest first (the reply also carries the top-level ``timestamp``)."""

    news: list[NewsItem]
    count: Annotated[int, Field(ge=0)]
    has_more: bool
    next_cursor: str | None
    """Opaque; null on the last page."""
    last_evaluated_key: str | None
    """The same cursor as ``next_cursor``."""
    cost_credits: float


class CalendarPage(Shape):
    """A page of calendar events (the reply also carries the top-level ``timestamp``)."""

    calendar: list[CalendarItem]
    count: Annotated[int, Field(ge=0)]
    mode: Literal["upcoming", "recent"]
    horizon_days: Annotated[int | None, Field(ge=1, le=90)] = None
    """Upcoming mode only."""
    has_more: bool
    next_cursor: str | None
    """Opaque; null on the last page."""
    last_evaluated_key: str | None
    """The same cursor as ``next_cursor``."""
    cost_credits: float
