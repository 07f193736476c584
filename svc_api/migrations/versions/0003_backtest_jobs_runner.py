"""backtest jobs record their runner process

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-25

Frozen once released: never edit a revision that has shipped; change the schema with a new one.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("backtest_jobs", schema=None) as batch_op:
        batch_op.add_column(sa.Column("runner", sa.String(length=128), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("backtest_jobs", schema=None) as batch_op:
        batch_op.drop_column("runner")
