"""object deletions: object-store keys whose store row was deleted, waiting for the retention worker
to delete the object itself (row first, object after: no visible row ever points to a missing object)

Revision ID: 0028_object_deletions
Revises: 0027_signal_workers
Create Date: 2026-12-01

Frozen once released: never edit a revision that has shipped; change the schema with a new one.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0028_object_deletions"
down_revision = "0027_signal_workers"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "object_deletions",
        sa.Column("key", sa.String(1024), primary_key=True),
        sa.Column("queued_at", sa.BigInteger(), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("object_deletions")
