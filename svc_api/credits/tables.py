"""The credits ledger: one row per balance change, written in the same transaction as the change.

Example:
    >>> sorted(t.name for t in TABLES)
    ['credit_transactions']
"""

from __future__ import annotations

import sqlalchemy as sa

from svc_api.core.tables import metadata

credit_transactions = sa.Table(
    "credit_transactions",
    metadata,
    sa.Column("transaction_id", sa.String(40), primary_key=True),
    sa.Column("svc_id", sa.String(6), sa.ForeignKey("accounts.svc_id"), nullable=False),
    sa.Column("seq", sa.BigInteger, nullable=False),
    sa.Column("type", sa.String(16), nullable=False),
    sa.Column("amount", sa.BigInteger, nullable=False),
    sa.Column("balance_after", sa.BigInteger, nullable=False),
    sa.Column("action", sa.String(32), nullable=False),
    sa.Column("description", sa.String(500), nullable=False),
    sa.Column("reason", sa.String(500), nullable=True),
    sa.Column("idempotency_key", sa.String(128), nullable=True),
    sa.Column("created_at", sa.BigInteger, nullable=False),
    sa.UniqueConstraint("svc_id", "seq", name="uq_credit_seq"),
    sa.UniqueConstraint("svc_id", "idempotency_key", name="uq_credit_idempotency"),
)

TABLES = (credit_transactions,)
