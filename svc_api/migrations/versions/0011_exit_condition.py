"""strategy versions keep an exit condition in words

Revision ID: 0011_exit_condition
Revises: 0003
Create Date: 2026-11-25

Frozen once released: never edit a revision that has shipped; change the schema with a new one.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0011_exit_condition"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("strategy_versions", schema=None) as batch_op:
        batch_op.add_column(sa.Column("exit_condition", sa.Text(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("strategy_versions", schema=None) as batch_op:
        batch_op.drop_column("exit_condition")
