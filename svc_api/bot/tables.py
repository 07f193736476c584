"""Tables of the messenger bot: the updates seen (replay guard and webhook inbox), opaque callback
tokens, signal preferences, secret messages to delete, orders followed, one-time app login codes.

Example:
    >>> sorted(t.name for t in TABLES)[:3]
    ['bot_callbacks', 'bot_deletions', 'bot_login_codes']
"""

from __future__ import annotations

import sqlalchemy as sa

from svc_api.core.tables import metadata

updates = sa.Table(
    "bot_updates",
    metadata,
    sa.Column("update_id", sa.BigInteger, primary_key=True, autoincrement=False),
    sa.Column("payload", sa.Text, nullable=True),  # a webhook update waiting for the worker
    sa.Column("received_at", sa.BigInteger, nullable=False),
    sa.Column("done_at", sa.BigInteger, nullable=True),
    sa.Index("ix_bot_updates_open", "done_at", "update_id"),
    sa.Index("ix_bot_updates_received", "received_at"),
)

callbacks = sa.Table(
    "bot_callbacks",
    metadata,
    sa.Column("token", sa.String(32), primary_key=True),
    sa.Column("chat_id", sa.String(64), nullable=False),
    sa.Column("svc_id", sa.String(6), sa.ForeignKey("accounts.svc_id"), nullable=False),
    sa.Column("action", sa.String(16), nullable=False),
    sa.Column("payload", sa.Text, nullable=False, server_default="{}"),
    sa.Column("created_at", sa.BigInteger, nullable=False),
    sa.Column("expires_at", sa.BigInteger, nullable=False),
    sa.Index("ix_bot_callbacks_expiry", "expires_at"),
)

preferences = sa.Table(
    "bot_preferences",
    metadata,
    sa.Column("svc_id", sa.String(6), sa.ForeignKey("accounts.svc_id"), primary_key=True),
    sa.Column("strategies", sa.Text, nullable=False, server_default=""),  # comma list; empty: all
    sa.Column("coins", sa.Text, nullable=False, server_default=""),
    sa.Column("muted_until", sa.BigInteger, nullable=False, server_default="0"),
    sa.Column("mode", sa.String(8), nullable=False, server_default="notify"),
    sa.Column("order_usdt", sa.String(24), nullable=False, server_default="100"),
)

deletions = sa.Table(
    "bot_deletions",
    metadata,
    sa.Column("chat_id", sa.String(64), primary_key=True),
    sa.Column("message_id", sa.BigInteger, primary_key=True, autoincrement=False),
    sa.Column("delete_at", sa.BigInteger, nullable=False),
    sa.Index("ix_bot_deletions_due", "delete_at"),
)

orders = sa.Table(
    "bot_orders",
    metadata,
    sa.Column("svc_id", sa.String(6), sa.ForeignKey("accounts.svc_id"), primary_key=True),
    sa.Column("idempotency_key", sa.String(128), primary_key=True),
    sa.Column("chat_id", sa.String(64), nullable=False),
    sa.Column("message_id", sa.BigInteger, nullable=False),
    sa.Column("created_at", sa.BigInteger, nullable=False),
    sa.Column("done_at", sa.BigInteger, nullable=True),
    sa.Index("ix_bot_orders_open", "done_at", "created_at"),
)

login_codes = sa.Table(
    "bot_login_codes",
    metadata,
    sa.Column("code_hash", sa.String(64), primary_key=True),
    sa.Column("svc_id", sa.String(6), sa.ForeignKey("accounts.svc_id"), nullable=False, index=True),
    sa.Column("expires_at", sa.BigInteger, nullable=False),
    sa.Column("used_at", sa.BigInteger, nullable=True),
)

TABLES = (updates, callbacks, preferences, deletions, orders, login_codes)
