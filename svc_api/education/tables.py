"""Tables of the education marketplace: catalog (topics, products, revisions, bundles), commerce
(orders, payment events, entitlements, refunds) and learning (enrollments, lesson progress,
playback sessions, reviews, questions, certificates). Times are integer Unix seconds; money is an
integer of minor units beside its ISO 4217 currency.

Example:
    >>> sorted(t.name for t in TABLES)[:3]
    ['edu_answers', 'edu_bundle_items', 'edu_bundles']
"""

from __future__ import annotations

import sqlalchemy as sa

from svc_api.core.tables import metadata
from svc_api.education.payouts.tables import fx_rates, payables, payout_statements, payouts
from svc_api.education.uploads.tables import upload_parts, uploads

_ACCOUNT = "accounts.svc_id"

topics = sa.Table(
    "edu_topics",
    metadata,
    sa.Column("topic_id", sa.String(40), primary_key=True),
    sa.Column("name", sa.String(120), nullable=False),
    sa.Column("name_folded", sa.String(120), nullable=False, index=True),
)

products = sa.Table(
    "edu_products",
    metadata,
    sa.Column("product_id", sa.String(24), primary_key=True),
    sa.Column("leader_id", sa.String(6), sa.ForeignKey(_ACCOUNT), nullable=False),
    sa.Column("kind", sa.String(16), nullable=False),
    sa.Column("title", sa.String(160), nullable=False),
    sa.Column("subtitle", sa.String(240), nullable=False, server_default=""),
    sa.Column("description", sa.Text, nullable=False, server_default=""),
    sa.Column("language", sa.String(8), nullable=False),
    sa.Column("level", sa.String(16), nullable=False),
    sa.Column("price_minor", sa.BigInteger, nullable=False),
    sa.Column("currency", sa.String(3), nullable=False),
    sa.Column("state", sa.String(16), nullable=False),
    sa.Column("revision", sa.Integer, nullable=True),
    sa.Column("duration_seconds", sa.Integer, nullable=False, server_default="0"),
    sa.Column("lesson_count", sa.Integer, nullable=False, server_default="0"),
    sa.Column("rating_sum", sa.Integer, nullable=False, server_default="0"),
    sa.Column("rating_count", sa.Integer, nullable=False, server_default="0"),
    sa.Column("rating_avg", sa.Float, nullable=False, server_default="0"),
    sa.Column("student_count", sa.Integer, nullable=False, server_default="0"),
    sa.Column("refundable", sa.Boolean, nullable=False, server_default=sa.true()),
    sa.Column("sample", sa.Boolean, nullable=False, server_default=sa.false()),
    sa.Column("search_text", sa.Text, nullable=False, server_default=""),
    sa.Column("created_at", sa.BigInteger, nullable=False),
    sa.Column("published_at", sa.BigInteger, nullable=True),
    sa.Column("updated_at", sa.BigInteger, nullable=False),
    sa.Index("ix_edu_products_leader", "leader_id", "published_at", "product_id"),
    sa.Index("ix_edu_products_state", "state", "published_at", "product_id"),
)

product_topics = sa.Table(
    "edu_product_topics",
    metadata,
    sa.Column("product_id", sa.String(24), sa.ForeignKey("edu_products.product_id"), primary_key=True),
    sa.Column("topic_id", sa.String(40), sa.ForeignKey("edu_topics.topic_id"), primary_key=True),
    sa.Index("ix_edu_product_topics_topic", "topic_id", "product_id"),
)

revisions = sa.Table(
    "edu_revisions",
    metadata,
    sa.Column("product_id", sa.String(24), sa.ForeignKey("edu_products.product_id"), primary_key=True),
    sa.Column("revision", sa.Integer, primary_key=True),
    sa.Column("curriculum", sa.JSON, nullable=False),
    sa.Column("published_at", sa.BigInteger, nullable=False),
)

bundles = sa.Table(
    "edu_bundles",
    metadata,
    sa.Column("bundle_id", sa.String(24), primary_key=True),
    sa.Column("leader_id", sa.String(6), sa.ForeignKey(_ACCOUNT), nullable=False),
    sa.Column("title", sa.String(160), nullable=False),
    sa.Column("price_minor", sa.BigInteger, nullable=False),
    sa.Column("currency", sa.String(3), nullable=False),
    sa.Column("state", sa.String(16), nullable=False),
    sa.Column("version", sa.Integer, nullable=False, server_default="1"),
    sa.Column("created_at", sa.BigInteger, nullable=False),
    sa.Column("updated_at", sa.BigInteger, nullable=False),
)

bundle_items = sa.Table(
    "edu_bundle_items",
    metadata,
    sa.Column("bundle_id", sa.String(24), sa.ForeignKey("edu_bundles.bundle_id"), primary_key=True),
    sa.Column("product_id", sa.String(24), sa.ForeignKey("edu_products.product_id"), primary_key=True),
)

orders = sa.Table(
    "edu_orders",
    metadata,
    sa.Column("order_id", sa.String(24), primary_key=True),
    sa.Column("svc_id", sa.String(6), sa.ForeignKey(_ACCOUNT), nullable=False),
    sa.Column("item_kind", sa.String(16), nullable=False),
    sa.Column("item_id", sa.String(24), nullable=False),
    sa.Column("amount_minor", sa.BigInteger, nullable=False),
    sa.Column("currency", sa.String(3), nullable=False),
    sa.Column("state", sa.String(16), nullable=False),
    sa.Column("provider", sa.String(16), nullable=False),
    sa.Column("session_token", sa.String(64), nullable=False, unique=True),
    sa.Column("created_at", sa.BigInteger, nullable=False),
    sa.Column("expires_at", sa.BigInteger, nullable=False),
    sa.Column("paid_at", sa.BigInteger, nullable=True),
    sa.Column("updated_at", sa.BigInteger, nullable=False),
    sa.Index("ix_edu_orders_buyer_item", "svc_id", "item_kind", "item_id", "state"),
)

payment_events = sa.Table(
    "edu_payment_events",
    metadata,
    sa.Column("event_id", sa.String(32), primary_key=True),
    sa.Column("order_id", sa.String(24), sa.ForeignKey("edu_orders.order_id"), nullable=False),
    sa.Column("payload", sa.Text, nullable=False),
    sa.Column("signature", sa.String(64), nullable=False),
    sa.Column("attempts", sa.Integer, nullable=False, server_default="0"),
    sa.Column("next_at", sa.BigInteger, nullable=False),
    sa.Column("delivered_at", sa.BigInteger, nullable=True),
    sa.Column("last_error", sa.String(300), nullable=True),
    sa.Index("ix_edu_payment_events_due", "delivered_at", "next_at"),
)

ledger = sa.Table(
    "edu_ledger",
    metadata,
    sa.Column("entry_id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("order_id", sa.String(24), sa.ForeignKey("edu_orders.order_id"), nullable=False),
    sa.Column("kind", sa.String(16), nullable=False),
    sa.Column("svc_id", sa.String(6), sa.ForeignKey(_ACCOUNT), nullable=False),
    sa.Column("leader_id", sa.String(6), sa.ForeignKey(_ACCOUNT), nullable=False),
    sa.Column("amount_minor", sa.BigInteger, nullable=False),
    sa.Column("currency", sa.String(3), nullable=False),
    sa.Column("at", sa.BigInteger, nullable=False),
    sa.UniqueConstraint("order_id", "kind"),
    sa.Index("ix_edu_ledger_leader", "leader_id", "at"),
)

entitlements = sa.Table(
    "edu_entitlements",
    metadata,
    sa.Column("order_id", sa.String(24), sa.ForeignKey("edu_orders.order_id"), primary_key=True),
    sa.Column("product_id", sa.String(24), sa.ForeignKey("edu_products.product_id"), primary_key=True),
    sa.Column("svc_id", sa.String(6), sa.ForeignKey(_ACCOUNT), nullable=False),
    sa.Column("granted_at", sa.BigInteger, nullable=False),
    sa.Column("revoked_at", sa.BigInteger, nullable=True),
    sa.Index("ix_edu_entitlements_owner", "svc_id", "product_id"),
)

refunds = sa.Table(
    "edu_refunds",
    metadata,
    sa.Column("refund_request_id", sa.String(24), primary_key=True),
    sa.Column("order_id", sa.String(24), sa.ForeignKey("edu_orders.order_id"), nullable=False, unique=True),
    sa.Column("svc_id", sa.String(6), sa.ForeignKey(_ACCOUNT), nullable=False),
    sa.Column("reason", sa.String(500), nullable=False, server_default=""),
    sa.Column("state", sa.String(16), nullable=False),
    sa.Column("amount_minor", sa.BigInteger, nullable=False),
    sa.Column("currency", sa.String(3), nullable=False),
    sa.Column("created_at", sa.BigInteger, nullable=False),
    sa.Column("completed_at", sa.BigInteger, nullable=True),
)

enrollments = sa.Table(
    "edu_enrollments",
    metadata,
    sa.Column("svc_id", sa.String(6), sa.ForeignKey(_ACCOUNT), primary_key=True),
    sa.Column("product_id", sa.String(24), sa.ForeignKey("edu_products.product_id"), primary_key=True),
    sa.Column("revision", sa.Integer, nullable=False),
    sa.Column("version", sa.Integer, nullable=False, server_default="1"),
    sa.Column("enrolled_at", sa.BigInteger, nullable=False),
    sa.Column("updated_at", sa.BigInteger, nullable=False),
    sa.Column("completed_at", sa.BigInteger, nullable=True),
    sa.Column("last_lesson_id", sa.String(40), nullable=True),
    sa.Index("ix_edu_enrollments_recent", "svc_id", "updated_at"),
)

lesson_progress = sa.Table(
    "edu_lesson_progress",
    metadata,
    sa.Column("svc_id", sa.String(6), sa.ForeignKey(_ACCOUNT), primary_key=True),
    sa.Column("product_id", sa.String(24), primary_key=True),
    sa.Column("lesson_id", sa.String(40), primary_key=True),
    sa.Column("intervals", sa.JSON, nullable=False),
    sa.Column("watched_seconds", sa.Float, nullable=False, server_default="0"),
    sa.Column("position", sa.Float, nullable=False, server_default="0"),
    sa.Column("furthest_page", sa.Integer, nullable=False, server_default="0"),
    # When the furthest page last grew (NULL: not yet): the reading pace is measured from it.
    sa.Column("furthest_at", sa.BigInteger, nullable=True),
    sa.Column("page", sa.Integer, nullable=False, server_default="0"),
    sa.Column("reading_version", sa.BigInteger, nullable=False, server_default="0"),
    sa.Column("completed_at", sa.BigInteger, nullable=True),
    sa.Column("updated_at", sa.BigInteger, nullable=False),
)

playback_sessions = sa.Table(
    "edu_playback_sessions",
    metadata,
    sa.Column("session_id", sa.String(24), primary_key=True),
    sa.Column("svc_id", sa.String(6), sa.ForeignKey(_ACCOUNT), nullable=False),
    sa.Column("product_id", sa.String(24), nullable=False),
    sa.Column("lesson_id", sa.String(40), nullable=False),
    sa.Column("duration_seconds", sa.Float, nullable=False),
    sa.Column("tracked", sa.Boolean, nullable=False),
    sa.Column("last_seq", sa.Integer, nullable=False, server_default="0"),
    sa.Column("position", sa.Float, nullable=False, server_default="0"),
    sa.Column("rate", sa.Float, nullable=False, server_default="1"),
    sa.Column("last_at", sa.Float, nullable=False),
    sa.Column("created_at", sa.BigInteger, nullable=False),
    sa.Column("expires_at", sa.BigInteger, nullable=False),
    sa.Column("closed_at", sa.BigInteger, nullable=True),
    sa.Index("ix_edu_playback_owner", "svc_id", "closed_at"),
)

reviews = sa.Table(
    "edu_reviews",
    metadata,
    sa.Column("product_id", sa.String(24), sa.ForeignKey("edu_products.product_id"), primary_key=True),
    sa.Column("svc_id", sa.String(6), sa.ForeignKey(_ACCOUNT), primary_key=True),
    sa.Column("rating", sa.Integer, nullable=False),
    sa.Column("comment", sa.String(2000), nullable=False, server_default=""),
    sa.Column("created_at", sa.BigInteger, nullable=False),
    sa.Column("updated_at", sa.BigInteger, nullable=False),
    sa.Index("ix_edu_reviews_recent", "product_id", "updated_at"),
)

questions = sa.Table(
    "edu_questions",
    metadata,
    sa.Column("question_id", sa.String(24), primary_key=True),
    sa.Column("product_id", sa.String(24), sa.ForeignKey("edu_products.product_id"), nullable=False),
    sa.Column("svc_id", sa.String(6), sa.ForeignKey(_ACCOUNT), nullable=False),
    sa.Column("lesson_id", sa.String(40), nullable=True),
    sa.Column("title", sa.String(160), nullable=False),
    sa.Column("body", sa.String(4000), nullable=False),
    sa.Column("state", sa.String(16), nullable=False),
    sa.Column("created_at", sa.BigInteger, nullable=False),
    sa.Column("updated_at", sa.BigInteger, nullable=False),
    sa.Index("ix_edu_questions_product", "product_id", "created_at"),
)

certificates = sa.Table(
    "edu_certificates",
    metadata,
    sa.Column("certificate_id", sa.String(24), primary_key=True),
    sa.Column("svc_id", sa.String(6), sa.ForeignKey(_ACCOUNT), nullable=False),
    sa.Column("product_id", sa.String(24), sa.ForeignKey("edu_products.product_id"), nullable=False),
    sa.Column("token", sa.String(64), nullable=False, unique=True),
    sa.Column("holder_name", sa.String(80), nullable=False),
    sa.Column("course_title", sa.String(160), nullable=False),
    sa.Column("issued_at", sa.BigInteger, nullable=False),
    # Set when the entitlement it certified was refunded: verification then says revoked.
    sa.Column("revoked_at", sa.BigInteger, nullable=True),
    sa.UniqueConstraint("svc_id", "product_id"),
)

instructor_roles = sa.Table(
    "edu_instructor_roles",
    metadata,
    sa.Column("svc_id", sa.String(6), sa.ForeignKey(_ACCOUNT), primary_key=True),
    sa.Column("role", sa.String(24), nullable=False),
    sa.Column("granted_at", sa.BigInteger, nullable=False),
)

seller_profiles = sa.Table(
    "edu_seller_profiles",
    metadata,
    sa.Column("svc_id", sa.String(6), sa.ForeignKey(_ACCOUNT), primary_key=True),
    sa.Column("country", sa.String(2), nullable=True),
    sa.Column("legal_entity", sa.String(16), nullable=True),
    sa.Column("tax_id", sa.String(16), nullable=True),
    sa.Column("bank_account", sa.String(40), nullable=True),
    sa.Column("swift_bic", sa.String(11), nullable=True),
    sa.Column("payout_currency", sa.String(3), nullable=True),
    sa.Column("e_document_type", sa.String(32), nullable=True),
    sa.Column("contract_accepted_at", sa.BigInteger, nullable=True),
    sa.Column("contract_version", sa.String(16), nullable=True),
    sa.Column("identity_confirmed_at", sa.BigInteger, nullable=True),
    sa.Column("updated_at", sa.BigInteger, nullable=False),
)

onboarding_sessions = sa.Table(
    "edu_onboarding_sessions",
    metadata,
    sa.Column("session_id", sa.String(24), primary_key=True),
    sa.Column("svc_id", sa.String(6), sa.ForeignKey(_ACCOUNT), nullable=False),
    sa.Column("token", sa.String(64), nullable=False, unique=True),
    sa.Column("state", sa.String(16), nullable=False),
    sa.Column("created_at", sa.BigInteger, nullable=False),
    sa.Column("expires_at", sa.BigInteger, nullable=False),
    sa.Column("completed_at", sa.BigInteger, nullable=True),
    sa.Index("ix_edu_onboarding_owner", "svc_id", "state"),
)

drafts = sa.Table(
    "edu_drafts",
    metadata,
    sa.Column("product_id", sa.String(24), sa.ForeignKey("edu_products.product_id"), primary_key=True),
    sa.Column("fields", sa.JSON, nullable=False),
    sa.Column("curriculum", sa.JSON, nullable=True),
    sa.Column("version", sa.Integer, nullable=False),
    sa.Column("curriculum_version", sa.Integer, nullable=False),
    sa.Column("updated_at", sa.BigInteger, nullable=False),
)

submissions = sa.Table(
    "edu_submissions",
    metadata,
    sa.Column("submission_id", sa.String(24), primary_key=True),
    sa.Column("product_id", sa.String(24), sa.ForeignKey("edu_products.product_id"), nullable=False),
    sa.Column("leader_id", sa.String(6), sa.ForeignKey(_ACCOUNT), nullable=False),
    sa.Column("snapshot", sa.JSON, nullable=False),
    sa.Column("state", sa.String(16), nullable=False),
    sa.Column("reason", sa.String(500), nullable=True),
    sa.Column("created_at", sa.BigInteger, nullable=False),
    sa.Column("decided_at", sa.BigInteger, nullable=True),
    sa.Index("ix_edu_submissions_product", "product_id", "state"),
)

answers = sa.Table(
    "edu_answers",
    metadata,
    sa.Column("answer_id", sa.String(24), primary_key=True),
    sa.Column("question_id", sa.String(24), sa.ForeignKey("edu_questions.question_id"), nullable=False),
    sa.Column("svc_id", sa.String(6), sa.ForeignKey(_ACCOUNT), nullable=False),
    sa.Column("body", sa.String(4000), nullable=False),
    sa.Column("created_at", sa.BigInteger, nullable=False),
    sa.Index("ix_edu_answers_question", "question_id", "created_at"),
)

TABLES = (
    topics,
    products,
    product_topics,
    revisions,
    bundles,
    bundle_items,
    orders,
    payment_events,
    ledger,
    entitlements,
    refunds,
    enrollments,
    lesson_progress,
    playback_sessions,
    reviews,
    questions,
    certificates,
    instructor_roles,
    seller_profiles,
    onboarding_sessions,
    drafts,
    submissions,
    answers,
    payouts,
    payout_statements,
    payables,
    fx_rates,
    uploads,
    upload_parts,
)
