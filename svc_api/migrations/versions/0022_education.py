"""education marketplace for students: catalog, orders, entitlements, learning, certificates

Revision ID: 0022_education
Revises: 0021_identities
Create Date: 2026-11-25

Frozen once released: never edit a revision that has shipped; change the schema with a new one.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0022_education"
down_revision = "0021_identities"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "edu_topics",
        sa.Column("topic_id", sa.String(length=40), nullable=False),
        sa.Column("name", sa.String(length=120), nullable=False),
        sa.Column("name_folded", sa.String(length=120), nullable=False),
        sa.PrimaryKeyConstraint("topic_id"),
    )
    op.create_index(op.f("ix_edu_topics_name_folded"), "edu_topics", ["name_folded"], unique=False)
    op.create_table(
        "edu_bundles",
        sa.Column("bundle_id", sa.String(length=24), nullable=False),
        sa.Column("leader_id", sa.String(length=6), nullable=False),
        sa.Column("title", sa.String(length=160), nullable=False),
        sa.Column("price_minor", sa.BigInteger(), nullable=False),
        sa.Column("currency", sa.String(length=3), nullable=False),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
        sa.Column("updated_at", sa.BigInteger(), nullable=False),
        sa.ForeignKeyConstraint(
            ["leader_id"],
            ["accounts.svc_id"],
        ),
        sa.PrimaryKeyConstraint("bundle_id"),
    )
    op.create_table(
        "edu_lesson_progress",
        sa.Column("svc_id", sa.String(length=6), nullable=False),
        sa.Column("product_id", sa.String(length=24), nullable=False),
        sa.Column("lesson_id", sa.String(length=40), nullable=False),
        sa.Column("intervals", sa.JSON(), nullable=False),
        sa.Column("watched_seconds", sa.Float(), server_default="0", nullable=False),
        sa.Column("position", sa.Float(), server_default="0", nullable=False),
        sa.Column("furthest_page", sa.Integer(), server_default="0", nullable=False),
        sa.Column("page", sa.Integer(), server_default="0", nullable=False),
        sa.Column("reading_version", sa.BigInteger(), server_default="0", nullable=False),
        sa.Column("completed_at", sa.BigInteger(), nullable=True),
        sa.Column("updated_at", sa.BigInteger(), nullable=False),
        sa.ForeignKeyConstraint(
            ["svc_id"],
            ["accounts.svc_id"],
        ),
        sa.PrimaryKeyConstraint("svc_id", "product_id", "lesson_id"),
    )
    op.create_table(
        "edu_orders",
        sa.Column("order_id", sa.String(length=24), nullable=False),
        sa.Column("svc_id", sa.String(length=6), nullable=False),
        sa.Column("item_kind", sa.String(length=16), nullable=False),
        sa.Column("item_id", sa.String(length=24), nullable=False),
        sa.Column("amount_minor", sa.BigInteger(), nullable=False),
        sa.Column("currency", sa.String(length=3), nullable=False),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column("provider", sa.String(length=16), nullable=False),
        sa.Column("session_token", sa.String(length=64), nullable=False),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
        sa.Column("expires_at", sa.BigInteger(), nullable=False),
        sa.Column("paid_at", sa.BigInteger(), nullable=True),
        sa.Column("updated_at", sa.BigInteger(), nullable=False),
        sa.ForeignKeyConstraint(
            ["svc_id"],
            ["accounts.svc_id"],
        ),
        sa.PrimaryKeyConstraint("order_id"),
        sa.UniqueConstraint("session_token"),
    )
    op.create_index(
        "ix_edu_orders_buyer_item", "edu_orders", ["svc_id", "item_kind", "item_id", "state"], unique=False
    )
    op.create_table(
        "edu_playback_sessions",
        sa.Column("session_id", sa.String(length=24), nullable=False),
        sa.Column("svc_id", sa.String(length=6), nullable=False),
        sa.Column("product_id", sa.String(length=24), nullable=False),
        sa.Column("lesson_id", sa.String(length=40), nullable=False),
        sa.Column("duration_seconds", sa.Float(), nullable=False),
        sa.Column("tracked", sa.Boolean(), nullable=False),
        sa.Column("last_seq", sa.Integer(), server_default="0", nullable=False),
        sa.Column("position", sa.Float(), server_default="0", nullable=False),
        sa.Column("rate", sa.Float(), server_default="1", nullable=False),
        sa.Column("last_at", sa.Float(), nullable=False),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
        sa.Column("expires_at", sa.BigInteger(), nullable=False),
        sa.Column("closed_at", sa.BigInteger(), nullable=True),
        sa.ForeignKeyConstraint(
            ["svc_id"],
            ["accounts.svc_id"],
        ),
        sa.PrimaryKeyConstraint("session_id"),
    )
    op.create_index("ix_edu_playback_owner", "edu_playback_sessions", ["svc_id", "closed_at"], unique=False)
    op.create_table(
        "edu_products",
        sa.Column("product_id", sa.String(length=24), nullable=False),
        sa.Column("leader_id", sa.String(length=6), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("title", sa.String(length=160), nullable=False),
        sa.Column("subtitle", sa.String(length=240), server_default="", nullable=False),
        sa.Column("description", sa.Text(), server_default="", nullable=False),
        sa.Column("language", sa.String(length=8), nullable=False),
        sa.Column("level", sa.String(length=16), nullable=False),
        sa.Column("price_minor", sa.BigInteger(), nullable=False),
        sa.Column("currency", sa.String(length=3), nullable=False),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column("revision", sa.Integer(), nullable=True),
        sa.Column("duration_seconds", sa.Integer(), server_default="0", nullable=False),
        sa.Column("lesson_count", sa.Integer(), server_default="0", nullable=False),
        sa.Column("rating_sum", sa.Integer(), server_default="0", nullable=False),
        sa.Column("rating_count", sa.Integer(), server_default="0", nullable=False),
        sa.Column("rating_avg", sa.Float(), server_default="0", nullable=False),
        sa.Column("student_count", sa.Integer(), server_default="0", nullable=False),
        sa.Column("refundable", sa.Boolean(), server_default=sa.true(), nullable=False),
        sa.Column("sample", sa.Boolean(), server_default=sa.false(), nullable=False),
        sa.Column("search_text", sa.Text(), server_default="", nullable=False),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
        sa.Column("published_at", sa.BigInteger(), nullable=True),
        sa.Column("updated_at", sa.BigInteger(), nullable=False),
        sa.ForeignKeyConstraint(
            ["leader_id"],
            ["accounts.svc_id"],
        ),
        sa.PrimaryKeyConstraint("product_id"),
    )
    op.create_index(
        "ix_edu_products_leader", "edu_products", ["leader_id", "published_at", "product_id"], unique=False
    )
    op.create_index(
        "ix_edu_products_state", "edu_products", ["state", "published_at", "product_id"], unique=False
    )
    op.create_table(
        "edu_bundle_items",
        sa.Column("bundle_id", sa.String(length=24), nullable=False),
        sa.Column("product_id", sa.String(length=24), nullable=False),
        sa.ForeignKeyConstraint(
            ["bundle_id"],
            ["edu_bundles.bundle_id"],
        ),
        sa.ForeignKeyConstraint(
            ["product_id"],
            ["edu_products.product_id"],
        ),
        sa.PrimaryKeyConstraint("bundle_id", "product_id"),
    )
    op.create_table(
        "edu_certificates",
        sa.Column("certificate_id", sa.String(length=24), nullable=False),
        sa.Column("svc_id", sa.String(length=6), nullable=False),
        sa.Column("product_id", sa.String(length=24), nullable=False),
        sa.Column("token", sa.String(length=64), nullable=False),
        sa.Column("holder_name", sa.String(length=80), nullable=False),
        sa.Column("course_title", sa.String(length=160), nullable=False),
        sa.Column("issued_at", sa.BigInteger(), nullable=False),
        sa.ForeignKeyConstraint(
            ["product_id"],
            ["edu_products.product_id"],
        ),
        sa.ForeignKeyConstraint(
            ["svc_id"],
            ["accounts.svc_id"],
        ),
        sa.PrimaryKeyConstraint("certificate_id"),
        sa.UniqueConstraint("svc_id", "product_id"),
        sa.UniqueConstraint("token"),
    )
    op.create_table(
        "edu_enrollments",
        sa.Column("svc_id", sa.String(length=6), nullable=False),
        sa.Column("product_id", sa.String(length=24), nullable=False),
        sa.Column("revision", sa.Integer(), nullable=False),
        sa.Column("version", sa.Integer(), server_default="1", nullable=False),
        sa.Column("enrolled_at", sa.BigInteger(), nullable=False),
        sa.Column("updated_at", sa.BigInteger(), nullable=False),
        sa.Column("completed_at", sa.BigInteger(), nullable=True),
        sa.Column("last_lesson_id", sa.String(length=40), nullable=True),
        sa.ForeignKeyConstraint(
            ["product_id"],
            ["edu_products.product_id"],
        ),
        sa.ForeignKeyConstraint(
            ["svc_id"],
            ["accounts.svc_id"],
        ),
        sa.PrimaryKeyConstraint("svc_id", "product_id"),
    )
    op.create_index("ix_edu_enrollments_recent", "edu_enrollments", ["svc_id", "updated_at"], unique=False)
    op.create_table(
        "edu_entitlements",
        sa.Column("order_id", sa.String(length=24), nullable=False),
        sa.Column("product_id", sa.String(length=24), nullable=False),
        sa.Column("svc_id", sa.String(length=6), nullable=False),
        sa.Column("granted_at", sa.BigInteger(), nullable=False),
        sa.Column("revoked_at", sa.BigInteger(), nullable=True),
        sa.ForeignKeyConstraint(
            ["order_id"],
            ["edu_orders.order_id"],
        ),
        sa.ForeignKeyConstraint(
            ["product_id"],
            ["edu_products.product_id"],
        ),
        sa.ForeignKeyConstraint(
            ["svc_id"],
            ["accounts.svc_id"],
        ),
        sa.PrimaryKeyConstraint("order_id", "product_id"),
    )
    op.create_index("ix_edu_entitlements_owner", "edu_entitlements", ["svc_id", "product_id"], unique=False)
    op.create_table(
        "edu_ledger",
        sa.Column("entry_id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("order_id", sa.String(length=24), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("svc_id", sa.String(length=6), nullable=False),
        sa.Column("leader_id", sa.String(length=6), nullable=False),
        sa.Column("amount_minor", sa.BigInteger(), nullable=False),
        sa.Column("currency", sa.String(length=3), nullable=False),
        sa.Column("at", sa.BigInteger(), nullable=False),
        sa.ForeignKeyConstraint(
            ["leader_id"],
            ["accounts.svc_id"],
        ),
        sa.ForeignKeyConstraint(
            ["order_id"],
            ["edu_orders.order_id"],
        ),
        sa.ForeignKeyConstraint(
            ["svc_id"],
            ["accounts.svc_id"],
        ),
        sa.PrimaryKeyConstraint("entry_id"),
        sa.UniqueConstraint("order_id", "kind"),
    )
    op.create_index("ix_edu_ledger_leader", "edu_ledger", ["leader_id", "at"], unique=False)
    op.create_table(
        "edu_payment_events",
        sa.Column("event_id", sa.String(length=32), nullable=False),
        sa.Column("order_id", sa.String(length=24), nullable=False),
        sa.Column("payload", sa.Text(), nullable=False),
        sa.Column("signature", sa.String(length=64), nullable=False),
        sa.Column("attempts", sa.Integer(), server_default="0", nullable=False),
        sa.Column("next_at", sa.BigInteger(), nullable=False),
        sa.Column("delivered_at", sa.BigInteger(), nullable=True),
        sa.Column("last_error", sa.String(length=300), nullable=True),
        sa.ForeignKeyConstraint(
            ["order_id"],
            ["edu_orders.order_id"],
        ),
        sa.PrimaryKeyConstraint("event_id"),
    )
    op.create_index(
        "ix_edu_payment_events_due", "edu_payment_events", ["delivered_at", "next_at"], unique=False
    )
    op.create_table(
        "edu_product_topics",
        sa.Column("product_id", sa.String(length=24), nullable=False),
        sa.Column("topic_id", sa.String(length=40), nullable=False),
        sa.ForeignKeyConstraint(
            ["product_id"],
            ["edu_products.product_id"],
        ),
        sa.ForeignKeyConstraint(
            ["topic_id"],
            ["edu_topics.topic_id"],
        ),
        sa.PrimaryKeyConstraint("product_id", "topic_id"),
    )
    op.create_index(
        "ix_edu_product_topics_topic", "edu_product_topics", ["topic_id", "product_id"], unique=False
    )
    op.create_table(
        "edu_questions",
        sa.Column("question_id", sa.String(length=24), nullable=False),
        sa.Column("product_id", sa.String(length=24), nullable=False),
        sa.Column("svc_id", sa.String(length=6), nullable=False),
        sa.Column("lesson_id", sa.String(length=40), nullable=True),
        sa.Column("title", sa.String(length=160), nullable=False),
        sa.Column("body", sa.String(length=4000), nullable=False),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
        sa.Column("updated_at", sa.BigInteger(), nullable=False),
        sa.ForeignKeyConstraint(
            ["product_id"],
            ["edu_products.product_id"],
        ),
        sa.ForeignKeyConstraint(
            ["svc_id"],
            ["accounts.svc_id"],
        ),
        sa.PrimaryKeyConstraint("question_id"),
    )
    op.create_index("ix_edu_questions_product", "edu_questions", ["product_id", "created_at"], unique=False)
    op.create_table(
        "edu_refunds",
        sa.Column("refund_request_id", sa.String(length=24), nullable=False),
        sa.Column("order_id", sa.String(length=24), nullable=False),
        sa.Column("svc_id", sa.String(length=6), nullable=False),
        sa.Column("reason", sa.String(length=500), server_default="", nullable=False),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column("amount_minor", sa.BigInteger(), nullable=False),
        sa.Column("currency", sa.String(length=3), nullable=False),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
        sa.Column("completed_at", sa.BigInteger(), nullable=True),
        sa.ForeignKeyConstraint(
            ["order_id"],
            ["edu_orders.order_id"],
        ),
        sa.ForeignKeyConstraint(
            ["svc_id"],
            ["accounts.svc_id"],
        ),
        sa.PrimaryKeyConstraint("refund_request_id"),
        sa.UniqueConstraint("order_id"),
    )
    op.create_table(
        "edu_reviews",
        sa.Column("product_id", sa.String(length=24), nullable=False),
        sa.Column("svc_id", sa.String(length=6), nullable=False),
        sa.Column("rating", sa.Integer(), nullable=False),
        sa.Column("comment", sa.String(length=2000), server_default="", nullable=False),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
        sa.Column("updated_at", sa.BigInteger(), nullable=False),
        sa.ForeignKeyConstraint(
            ["product_id"],
            ["edu_products.product_id"],
        ),
        sa.ForeignKeyConstraint(
            ["svc_id"],
            ["accounts.svc_id"],
        ),
        sa.PrimaryKeyConstraint("product_id", "svc_id"),
    )
    op.create_index("ix_edu_reviews_recent", "edu_reviews", ["product_id", "updated_at"], unique=False)
    op.create_table(
        "edu_revisions",
        sa.Column("product_id", sa.String(length=24), nullable=False),
        sa.Column("revision", sa.Integer(), nullable=False),
        sa.Column("curriculum", sa.JSON(), nullable=False),
        sa.Column("published_at", sa.BigInteger(), nullable=False),
        sa.ForeignKeyConstraint(
            ["product_id"],
            ["edu_products.product_id"],
        ),
        sa.PrimaryKeyConstraint("product_id", "revision"),
    )
    # The catalog's full-text index: an FTS5 table on SQLite, a tsvector expression index on PostgreSQL.
    if op.get_bind().dialect.name == "postgresql":
        op.execute(
            "CREATE INDEX ix_edu_products_search ON edu_products"
            " USING gin (to_tsvector('simple', search_text))"
        )
    else:
        op.execute("CREATE VIRTUAL TABLE edu_products_fts USING fts5(product_id UNINDEXED, body)")


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute("DROP INDEX ix_edu_products_search")
    else:
        op.execute("DROP TABLE edu_products_fts")
    op.drop_table("edu_revisions")
    op.drop_index("ix_edu_reviews_recent", table_name="edu_reviews")
    op.drop_table("edu_reviews")
    op.drop_table("edu_refunds")
    op.drop_index("ix_edu_questions_product", table_name="edu_questions")
    op.drop_table("edu_questions")
    op.drop_index("ix_edu_product_topics_topic", table_name="edu_product_topics")
    op.drop_table("edu_product_topics")
    op.drop_index("ix_edu_payment_events_due", table_name="edu_payment_events")
    op.drop_table("edu_payment_events")
    op.drop_index("ix_edu_ledger_leader", table_name="edu_ledger")
    op.drop_table("edu_ledger")
    op.drop_index("ix_edu_entitlements_owner", table_name="edu_entitlements")
    op.drop_table("edu_entitlements")
    op.drop_index("ix_edu_enrollments_recent", table_name="edu_enrollments")
    op.drop_table("edu_enrollments")
    op.drop_table("edu_certificates")
    op.drop_table("edu_bundle_items")
    op.drop_index("ix_edu_products_state", table_name="edu_products")
    op.drop_index("ix_edu_products_leader", table_name="edu_products")
    op.drop_table("edu_products")
    op.drop_index("ix_edu_playback_owner", table_name="edu_playback_sessions")
    op.drop_table("edu_playback_sessions")
    op.drop_index("ix_edu_orders_buyer_item", table_name="edu_orders")
    op.drop_table("edu_orders")
    op.drop_table("edu_lesson_progress")
    op.drop_table("edu_bundles")
    op.drop_index(op.f("ix_edu_topics_name_folded"), table_name="edu_topics")
    op.drop_table("edu_topics")
