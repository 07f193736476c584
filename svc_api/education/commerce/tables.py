"""Tables of commerce: orders, the payment provider's events, the money ledger, entitlements and
refunds. Times are integer Unix seconds; money is an integer of minor units beside its ISO 4217
currency.

Example:
    >>> sorted(t.name for t in TABLES)[:2]
    ['edu_entitlements', 'edu_ledger']
"""

from __future__ import annotations

import sqlalchemy as sa

from svc_api.core.tables import metadata

_ACCOUNT = "accounts.svc_id"

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

TABLES = (orders, payment_events, ledger, entitlements, refunds)
