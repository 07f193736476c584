"""referrals and purchases: commissions tied to purchases, redemptions, per-account rates, purchases

Revision ID: 0014_referrals
Revises: 0013_economic
Create Date: 2026-11-25

Frozen once released: never edit a revision that has shipped; change the schema with a new one.

``referral_commissions`` gains the referee, the purchase (UNIQUE: a purchase reported twice records
one commission), the purchase amount and the rate; rows written before keep NULL there (several
NULLs never conflict). SQLite cannot add a constraint in place: batch mode copies the table.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0014_referrals"
down_revision = "0013_economic"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "purchases",
        sa.Column("source", sa.String(length=32), nullable=False),
        sa.Column("purchase_id", sa.String(length=64), nullable=False),
        sa.Column("svc_id", sa.String(length=6), nullable=False),
        sa.Column("plan", sa.String(length=16), nullable=False),
        sa.Column("period", sa.String(length=8), nullable=False),
        sa.Column("days", sa.Integer(), nullable=False),
        sa.Column("amount_usdt", sa.Numeric(precision=18, scale=6), nullable=False),
        sa.Column("status", sa.String(length=16), server_default="applied", nullable=False),
        sa.Column("license_expires_at", sa.BigInteger(), nullable=False),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
        sa.Column("refunded_at", sa.BigInteger(), nullable=True),
        sa.ForeignKeyConstraint(["svc_id"], ["accounts.svc_id"]),
        sa.PrimaryKeyConstraint("source", "purchase_id"),
    )
    op.create_index("ix_purchases_svc_id", "purchases", ["svc_id"], unique=False)
    op.create_table(
        "referral_rates",
        sa.Column("svc_id", sa.String(length=6), nullable=False),
        sa.Column("rate_pct", sa.Numeric(precision=5, scale=2), nullable=False),
        sa.ForeignKeyConstraint(["svc_id"], ["accounts.svc_id"]),
        sa.PrimaryKeyConstraint("svc_id"),
    )
    op.create_table(
        "referral_redemptions",
        sa.Column("redemption_id", sa.String(length=40), nullable=False),
        sa.Column("svc_id", sa.String(length=6), nullable=False),
        sa.Column("amount_usdt", sa.Numeric(precision=18, scale=6), nullable=False),
        sa.Column("credits", sa.BigInteger(), nullable=False),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
        sa.ForeignKeyConstraint(["svc_id"], ["accounts.svc_id"]),
        sa.PrimaryKeyConstraint("redemption_id"),
    )
    op.create_index("ix_referral_redemptions_svc_id", "referral_redemptions", ["svc_id"], unique=False)
    with op.batch_alter_table("referral_commissions", schema=None) as batch_op:
        batch_op.add_column(sa.Column("referee_id", sa.String(length=6), nullable=True))
        batch_op.add_column(sa.Column("purchase_id", sa.String(length=100), nullable=True))
        batch_op.add_column(
            sa.Column("purchase_amount_usdt", sa.Numeric(precision=18, scale=6), nullable=True)
        )
        batch_op.add_column(sa.Column("rate_pct", sa.Numeric(precision=5, scale=2), nullable=True))
        batch_op.create_unique_constraint("uq_referral_commissions_purchase", ["purchase_id"])


def downgrade() -> None:
    with op.batch_alter_table("referral_commissions", schema=None) as batch_op:
        batch_op.drop_constraint("uq_referral_commissions_purchase", type_="unique")
        batch_op.drop_column("rate_pct")
        batch_op.drop_column("purchase_amount_usdt")
        batch_op.drop_column("purchase_id")
        batch_op.drop_column("referee_id")
    op.drop_index("ix_referral_redemptions_svc_id", table_name="referral_redemptions")
    op.drop_table("referral_redemptions")
    op.drop_table("referral_rates")
    op.drop_index("ix_purchases_svc_id", table_name="purchases")
    op.drop_table("purchases")
