"""economic news and calendar

Revision ID: 0013_economic
Revises: 0012_signals_marketplace
Create Date: 2026-11-25

Frozen once released: never edit a revision that has shipped; change the schema with a new one.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0013_economic"
down_revision = "0012_signals_marketplace"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "economic_calendar",
        sa.Column("event_id", sa.String(length=40), nullable=False),
        sa.Column("source", sa.String(length=100), nullable=False),
        sa.Column("source_id", sa.String(length=255), nullable=False),
        sa.Column("title", sa.String(length=500), nullable=False),
        sa.Column("country", sa.String(length=8), nullable=False),
        sa.Column("impact", sa.String(length=8), nullable=False),
        sa.Column("forecast", sa.String(length=64), nullable=False),
        sa.Column("previous", sa.String(length=64), nullable=False),
        sa.Column("event_time", sa.BigInteger(), nullable=False),
        sa.Column("ingested_at", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("event_id"),
        sa.UniqueConstraint("source", "source_id", name="uq_economic_calendar_source"),
    )
    op.create_index(
        "ix_economic_calendar_time", "economic_calendar", ["event_time", "event_id"], unique=False
    )
    op.create_table(
        "economic_news",
        sa.Column("news_id", sa.String(length=40), nullable=False),
        sa.Column("source", sa.String(length=100), nullable=False),
        sa.Column("source_id", sa.String(length=255), nullable=False),
        sa.Column("title", sa.String(length=500), nullable=False),
        sa.Column("summary", sa.Text(), nullable=False),
        sa.Column("url", sa.String(length=2048), nullable=False),
        sa.Column("sentiment", sa.String(length=8), nullable=False),
        sa.Column("sentiment_score", sa.Integer(), nullable=False),
        sa.Column("impact", sa.String(length=8), nullable=False),
        sa.Column("category", sa.String(length=20), nullable=False),
        sa.Column("affected_coins", sa.Text(), nullable=False),
        sa.Column("affected_markets", sa.Text(), nullable=False),
        sa.Column("country", sa.String(length=8), nullable=False),
        sa.Column("published_at", sa.BigInteger(), nullable=False),
        sa.Column("ingested_at", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("news_id"),
        sa.UniqueConstraint("source", "source_id", name="uq_economic_news_source"),
    )
    op.create_index("ix_economic_news_published", "economic_news", ["published_at", "news_id"], unique=False)


def downgrade() -> None:
    op.drop_index("ix_economic_news_published", table_name="economic_news")
    op.drop_table("economic_news")
    op.drop_index("ix_economic_calendar_time", table_name="economic_calendar")
    op.drop_table("economic_calendar")
