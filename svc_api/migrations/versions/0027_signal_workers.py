"""signal workers: the worker processes that share the signal passes, each with a lease renewed at
every pass, so that the coins are split between the live ones and a dead one's are taken over

Revision ID: 0027_signal_workers
Revises: 0026_edu_integrity
Create Date: 2026-12-01

Frozen once released: never edit a revision that has shipped; change the schema with a new one.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0027_signal_workers"
down_revision = "0026_edu_integrity"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "signal_workers",
        sa.Column("holder", sa.String(120), primary_key=True),
        sa.Column("alive_until", sa.BigInteger(), nullable=False),
        sa.Column("started_at", sa.BigInteger(), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("signal_workers")
