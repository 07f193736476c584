"""education integrity: when a reading lesson's furthest page last grew (the reading pace), and
when a certificate was revoked (a refund)

Revision ID: 0026_edu_integrity
Revises: 0025_edu_payouts
Create Date: 2026-12-01

Frozen once released: never edit a revision that has shipped; change the schema with a new one.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0026_edu_integrity"
down_revision = "0025_edu_payouts"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("edu_lesson_progress", sa.Column("furthest_at", sa.BigInteger(), nullable=True))
    op.add_column("edu_certificates", sa.Column("revoked_at", sa.BigInteger(), nullable=True))


def downgrade() -> None:
    op.drop_column("edu_certificates", "revoked_at")
    op.drop_column("edu_lesson_progress", "furthest_at")
