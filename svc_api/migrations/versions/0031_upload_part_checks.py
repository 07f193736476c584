"""upload part checks: the SHA-256 a client reports with a part's receipt, and how many completes of
an upload found parts whose bytes disagree with it (bounded re-sends before the upload fails)

Revision ID: 0031_upload_part_checks
Revises: 0030_limit_overrides
Create Date: 2026-12-02

Frozen once released: never edit a revision that has shipped; change the schema with a new one.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0031_upload_part_checks"
down_revision = "0030_limit_overrides"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("edu_upload_parts", sa.Column("sha256", sa.String(64), nullable=True))
    op.add_column("edu_uploads", sa.Column("part_failures", sa.Integer(), nullable=False, server_default="0"))


def downgrade() -> None:
    op.drop_column("edu_uploads", "part_failures")
    op.drop_column("edu_upload_parts", "sha256")
