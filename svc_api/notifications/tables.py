"""Personal notifications, platform announcements, the delivery outbox and its fan-outs, and the
messenger links of the bot channels.

Example:
    >>> sorted(t.name for t in TABLES)[:3]
    ['bot_update_offsets', 'messenger_link_codes', 'messenger_links']
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

outbox = sa.Table(
    "notification_outbox",
    metadata,
    sa.Column("id", sa.String(40), primary_key=True),
    sa.Column("svc_id", sa.String(6), sa.ForeignKey("accounts.svc_id"), nullable=False),
    sa.Column("channel", sa.String(16), nullable=False),
    sa.Column("address", sa.String(320), nullable=False),
    sa.Column("event_type", sa.String(64), nullable=False),
    sa.Column("title", sa.String(200), nullable=False),
    sa.Column("body", sa.String(2000), nullable=False),
    sa.Column("status", sa.String(16), nullable=False, server_default="pending"),
    sa.Column("attempts", sa.Integer, nullable=False, server_default="0"),
    sa.Column("next_attempt_at", sa.BigInteger, nullable=False),
    sa.Column("claimed_until", sa.BigInteger, nullable=False, server_default="0"),
    sa.Column("last_error", sa.String(500), nullable=True),
    sa.Column("created_at", sa.BigInteger, nullable=False),
    sa.Column("sent_at", sa.BigInteger, nullable=True),
    sa.Column("event_key", sa.String(64), nullable=True),  # the event (a signal's key) the row is about
    sa.Index("ix_notification_outbox_due", "status", "next_attempt_at"),
)

fanouts = sa.Table(
    "notification_fanouts",
    metadata,
    sa.Column("id", sa.String(40), primary_key=True),
    sa.Column("audience", sa.String(32), nullable=False),
    sa.Column("audience_arg", sa.String(64), nullable=False, server_default=""),
    sa.Column("event_type", sa.String(64), nullable=False),
    sa.Column("event_key", sa.String(64), nullable=False),
    sa.Column("title", sa.String(200), nullable=False),
    sa.Column("body", sa.String(2000), nullable=False),
    sa.Column("position", sa.String(6), nullable=True),
    sa.Column("delivered", sa.Integer, nullable=False, server_default="0"),
    sa.Column("done_at", sa.BigInteger, nullable=True),
    sa.Column("created_at", sa.BigInteger, nullable=False),
    sa.Index("ix_notification_fanouts_open", "done_at", "created_at"),
)

messenger_links = sa.Table(
    "messenger_links",
    metadata,
    sa.Column("svc_id", sa.String(6), sa.ForeignKey("accounts.svc_id"), primary_key=True),
    sa.Column("chat_id", sa.String(64), nullable=False),
    sa.Column("linked_at", sa.BigInteger, nullable=False),
    sa.Index("ux_messenger_links_chat", "chat_id", unique=True),  # one account per chat
)

messenger_codes = sa.Table(
    "messenger_link_codes",
    metadata,
    sa.Column("code", sa.String(16), primary_key=True),
    sa.Column("svc_id", sa.String(6), sa.ForeignKey("accounts.svc_id"), nullable=False, index=True),
    sa.Column("expires_at", sa.BigInteger, nullable=False),
    sa.Column("used_at", sa.BigInteger, nullable=True),
)

bot_state = sa.Table(
    "bot_update_offsets",
    metadata,
    sa.Column("bot", sa.String(32), primary_key=True),
    sa.Column("next_offset", sa.BigInteger, nullable=False),
)

TABLES = (notifications, platform_notifications, outbox, fanouts, messenger_links, messenger_codes, bot_state)
