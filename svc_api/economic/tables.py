"""Tables of economic data: news items and calendar events, each unique by ``(source, source_id)``.

``source`` names where a row came from (a feed's title, ``--source``, or ``sample``) and
``source_id`` is the item's own id there (an RSS ``guid``, an Atom ``id``, a calendar ``id``; a
digest when the source gives none): ingesting the same feed again finds every row already there.
Times are Unix seconds; lists (coins, markets) are JSON text.

Example:
    >>> sorted(t.name for t in TABLES)
    ['economic_calendar', 'economic_news']
"""

from __future__ import annotations

import sqlalchemy as sa

from svc_api.core.tables import metadata

economic_news = sa.Table(
    "economic_news",
    metadata,
    sa.Column("news_id", sa.String(40), primary_key=True),
    sa.Column("source", sa.String(100), nullable=False),
    sa.Column("source_id", sa.String(255), nullable=False),
    sa.Column("title", sa.String(500), nullable=False),
    sa.Column("summary", sa.Text, nullable=False),
    sa.Column("url", sa.String(2048), nullable=False),
    sa.Column("sentiment", sa.String(8), nullable=False),
    sa.Column("sentiment_score", sa.Integer, nullable=False),
    sa.Column("impact", sa.String(8), nullable=False),
    sa.Column("category", sa.String(20), nullable=False),
    sa.Column("affected_coins", sa.Text, nullable=False),
    sa.Column("affected_markets", sa.Text, nullable=False),
    sa.Column("country", sa.String(8), nullable=False),
    sa.Column("published_at", sa.BigInteger, nullable=False),
    sa.Column("ingested_at", sa.BigInteger, nullable=False),
    sa.UniqueConstraint("source", "source_id", name="uq_economic_news_source"),
    sa.Index("ix_economic_news_published", "published_at", "news_id"),
)

economic_calendar = sa.Table(
    "economic_calendar",
    metadata,
    sa.Column("event_id", sa.String(40), primary_key=True),
    sa.Column("source", sa.String(100), nullable=False),
    sa.Column("source_id", sa.String(255), nullable=False),
    sa.Column("title", sa.String(500), nullable=False),
    sa.Column("country", sa.String(8), nullable=False),
    sa.Column("impact", sa.String(8), nullable=False),
    sa.Column("forecast", sa.String(64), nullable=False),
    sa.Column("previous", sa.String(64), nullable=False),
    sa.Column("event_time", sa.BigInteger, nullable=False),
    sa.Column("ingested_at", sa.BigInteger, nullable=False),
    sa.UniqueConstraint("source", "source_id", name="uq_economic_calendar_source"),
    sa.Index("ix_economic_calendar_time", "event_time", "event_id"),
)

TABLES = (economic_news, economic_calendar)
