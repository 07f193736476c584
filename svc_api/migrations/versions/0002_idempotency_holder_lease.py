"""in-flight idempotency keys record their holder and lease

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-24

Frozen once released: never edit a revision that has shipped; change the schema with a new one.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("idempotency_keys", schema=None) as batch_op:
        batch_op.add_column(sa.Column("holder", sa.String(length=128), nullable=True))
        batch_op.add_column(sa.Column("lease_until", sa.BigInteger(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("idempotency_keys", schema=None) as batch_op:
        batch_op.drop_column("lease_until")
        batch_op.drop_column("holder")
