"""Tables of the catalog: topics, products and their topics, published revisions, bundles and
their items. Times are integer Unix seconds; money is an integer of minor units beside its ISO 4217
currency.

Example:
    >>> sorted(t.name for t in TABLES)[:2]
    ['edu_bundle_items', 'edu_bundles']
"""

from __future__ import annotations

import sqlalchemy as sa

from svc_api.core.tables import metadata

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

TABLES = (topics, products, product_topics, revisions, bundles, bundle_items)
