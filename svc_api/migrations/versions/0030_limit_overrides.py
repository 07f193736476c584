"""rate-limit overrides: an operator-set per-minute limit of one account, for all its requests or for
one endpoint group (backtest launches, key generation, checkout)

Revision ID: 0030_limit_overrides
Revises: 0028_object_deletions
Create Date: 2026-12-02

Frozen once released: never edit a revision that has shipped; change the schema with a new one.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0030_limit_overrides"
down_revision = "0029_bot"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "rate_limit_overrides",
        sa.Column("svc_id", sa.String(6), sa.ForeignKey("accounts.svc_id"), primary_key=True),
        sa.Column("endpoint", sa.String(32), primary_key=True),
        sa.Column("per_minute", sa.Integer(), nullable=False),
        sa.Column("reason", sa.String(500), nullable=False),
        sa.Column("set_at", sa.BigInteger(), nullable=False),
        sa.CheckConstraint("per_minute > 0", name="ck_rate_limit_overrides_positive"),
    )


def downgrade() -> None:
    op.drop_table("rate_limit_overrides")
