"""the messenger bot: updates seen (replay guard, webhook inbox), opaque callback tokens, signal
preferences, secret messages to delete, orders to follow, one-time app login codes; the event key of
an outbox row (which signal a chat message is about); one account per chat

Revision ID: 0029_bot
Revises: 0028_object_deletions
Create Date: 2026-12-02

Frozen once released: never edit a revision that has shipped; change the schema with a new one.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0029_bot"
down_revision = "0028_object_deletions"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("notification_outbox", schema=None) as batch_op:
        batch_op.add_column(sa.Column("event_key", sa.String(64), nullable=True))
    # one account per chat: a chat linked to several accounts (possible before) keeps its newest link
    op.execute(
        "DELETE FROM messenger_links WHERE EXISTS (SELECT 1 FROM messenger_links AS newer"
        " WHERE newer.chat_id = messenger_links.chat_id AND (newer.linked_at > messenger_links.linked_at"
        " OR (newer.linked_at = messenger_links.linked_at AND newer.svc_id > messenger_links.svc_id)))"
    )
    with op.batch_alter_table("messenger_links", schema=None) as batch_op:
        batch_op.create_index("ux_messenger_links_chat", ["chat_id"], unique=True)
    op.create_table(
        "bot_updates",
        sa.Column("update_id", sa.BigInteger(), primary_key=True, autoincrement=False),
        sa.Column("payload", sa.Text(), nullable=True),
        sa.Column("received_at", sa.BigInteger(), nullable=False),
        sa.Column("done_at", sa.BigInteger(), nullable=True),
    )
    op.create_index("ix_bot_updates_open", "bot_updates", ["done_at", "update_id"])
    op.create_index("ix_bot_updates_received", "bot_updates", ["received_at"])
    op.create_table(
        "bot_callbacks",
        sa.Column("token", sa.String(32), primary_key=True),
        sa.Column("chat_id", sa.String(64), nullable=False),
        sa.Column("svc_id", sa.String(6), sa.ForeignKey("accounts.svc_id"), nullable=False),
        sa.Column("action", sa.String(16), nullable=False),
        sa.Column("payload", sa.Text(), nullable=False, server_default="{}"),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
        sa.Column("expires_at", sa.BigInteger(), nullable=False),
    )
    op.create_index("ix_bot_callbacks_expiry", "bot_callbacks", ["expires_at"])
    op.create_table(
        "bot_preferences",
        sa.Column("svc_id", sa.String(6), sa.ForeignKey("accounts.svc_id"), primary_key=True),
        sa.Column("strategies", sa.Text(), nullable=False, server_default=""),
        sa.Column("coins", sa.Text(), nullable=False, server_default=""),
        sa.Column("muted_until", sa.BigInteger(), nullable=False, server_default="0"),
        sa.Column("mode", sa.String(8), nullable=False, server_default="notify"),
        sa.Column("order_usdt", sa.String(24), nullable=False, server_default="100"),
    )
    op.create_table(
        "bot_deletions",
        sa.Column("chat_id", sa.String(64), primary_key=True),
        sa.Column("message_id", sa.BigInteger(), primary_key=True, autoincrement=False),
        sa.Column("delete_at", sa.BigInteger(), nullable=False),
    )
    op.create_index("ix_bot_deletions_due", "bot_deletions", ["delete_at"])
    op.create_table(
        "bot_orders",
        sa.Column("svc_id", sa.String(6), sa.ForeignKey("accounts.svc_id"), primary_key=True),
        sa.Column("idempotency_key", sa.String(128), primary_key=True),
        sa.Column("chat_id", sa.String(64), nullable=False),
        sa.Column("message_id", sa.BigInteger(), nullable=False),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
        sa.Column("done_at", sa.BigInteger(), nullable=True),
    )
    op.create_index("ix_bot_orders_open", "bot_orders", ["done_at", "created_at"])
    op.create_table(
        "bot_login_codes",
        sa.Column("code_hash", sa.String(64), primary_key=True),
        sa.Column("svc_id", sa.String(6), sa.ForeignKey("accounts.svc_id"), nullable=False, index=True),
        sa.Column("expires_at", sa.BigInteger(), nullable=False),
        sa.Column("used_at", sa.BigInteger(), nullable=True),
    )


def downgrade() -> None:
    op.drop_table("bot_login_codes")
    op.drop_index("ix_bot_orders_open", table_name="bot_orders")
    op.drop_table("bot_orders")
    op.drop_index("ix_bot_deletions_due", table_name="bot_deletions")
    op.drop_table("bot_deletions")
    op.drop_table("bot_preferences")
    op.drop_index("ix_bot_callbacks_expiry", table_name="bot_callbacks")
    op.drop_table("bot_callbacks")
    op.drop_index("ix_bot_updates_received", table_name="bot_updates")
    op.drop_index("ix_bot_updates_open", table_name="bot_updates")
    op.drop_table("bot_updates")
    with op.batch_alter_table("messenger_links", schema=None) as batch_op:
        batch_op.drop_index("ux_messenger_links_chat")
    with op.batch_alter_table("notification_outbox", schema=None) as batch_op:
        batch_op.drop_column("event_key")
