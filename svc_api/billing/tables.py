"""Tables of the billing domain: one row per plan purchase, keyed by where it was reported from and
that channel's own id, so that a purchase reported twice is applied once. Money is exact
(``Numeric``), never float; times are Unix seconds.

Example:
    >>> [t.name for t in TABLES]
    ['purchases', 'pending_payments']
"""

from __future__ import annotations

import sqlalchemy as sa

from svc_api.core.tables import metadata

PURCHASE_STATUSES = ("applied", "refunded")

purchases = sa.Table(
    "purchases",
    metadata,
    # The channel that reported the purchase (``admin``, a store, a payment reconciler) and its id
    # there: the key that makes a report idempotent.
    sa.Column("source", sa.String(32), primary_key=True),
    sa.Column("purchase_id", sa.String(64), primary_key=True),
    sa.Column("svc_id", sa.String(6), sa.ForeignKey("accounts.svc_id"), nullable=False, index=True),
    sa.Column("plan", sa.String(16), nullable=False),
    sa.Column("period", sa.String(8), nullable=False),
    sa.Column("days", sa.Integer, nullable=False),
    sa.Column("amount_usdt", sa.Numeric(18, 6), nullable=False),
    sa.Column("status", sa.String(16), nullable=False, server_default="applied"),
    # The account's licence expiry right after this purchase was applied (after its refund, once
    # refunded).
    sa.Column("license_expires_at", sa.BigInteger, nullable=False),
    sa.Column("created_at", sa.BigInteger, nullable=False),
    sa.Column("refunded_at", sa.BigInteger, nullable=True),
)

pending_payments = sa.Table(
    "pending_payments",
    metadata,
    # A payment that could not be applied by itself (no account found, short, unknown product):
    # it waits for an operator (``svc admin payments``).
    sa.Column("payment_id", sa.String(40), primary_key=True),
    sa.Column("source", sa.String(32), nullable=False),
    sa.Column("external_id", sa.String(64), nullable=False),
    sa.Column("svc_id", sa.String(6), nullable=True),
    sa.Column("email", sa.String(320), nullable=False, server_default=""),
    sa.Column("product", sa.String(64), nullable=False, server_default=""),
    sa.Column("amount_usd", sa.Numeric(18, 6), nullable=False),
    sa.Column("currency", sa.String(8), nullable=False),
    sa.Column("note", sa.String(500), nullable=False, server_default=""),
    sa.Column("reason", sa.String(200), nullable=False),
    sa.Column("status", sa.String(16), nullable=False, server_default="waiting"),
    sa.Column("created_at", sa.BigInteger, nullable=False),
    sa.Column("decided_at", sa.BigInteger, nullable=True),
    sa.UniqueConstraint("source", "external_id", name="uq_pending_payments_external"),
    sa.Index("ix_pending_payments_status", "status", "created_at"),
)

TABLES = (purchases, pending_payments)
