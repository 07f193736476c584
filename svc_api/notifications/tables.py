"""Personal notifications and platform announcements.

Example:
    >>> sorted(t.name for t in TABLES)
    ['notifications', 'platform_notifications']
"""

from __future__ import annotations

import sqlalchemy as sa

from svc_api.core.tables import metadata

notifications = sa.Table(
    "notifications",
    metadata,
    sa.Column("id", sa.String(40), primary_key=True),
    sa.Column("svc_id", sa.String(6), sa.ForeignKey("accounts.svc_id"), nullable=False),
    sa.Column("title", sa.String(200), nullable=False),
    sa.Column("body", sa.String(2000), nullable=False),
    sa.Column("event_type", sa.String(64), nullable=False),
    sa.Column("created_at", sa.BigInteger, nullable=False),
    sa.Column("read_at", sa.BigInteger, nullable=True),
    sa.Index("ix_notifications_recent", "svc_id", "created_at", "id"),
)

platform_notifications = sa.Table(
    "platform_notifications",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("title", sa.String(200), nullable=False),
    sa.Column("body", sa.String(2000), nullable=False),
    sa.Column("type", sa.String(32), nullable=False, server_default="announcement"),
    sa.Column("created_at", sa.BigInteger, nullable=False, index=True),
)

TABLES = (notifications, platform_notifications,)
