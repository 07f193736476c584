"""The changelog in the store: its version fields (one row), released versions and entries.

Revision ID: 0016_changelog
Revises: 0015_community
Create Date: 2026-11-25

Frozen once released: never edit a revision that has shipped; change the schema with a new one.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0016_changelog"
down_revision = "0015_community"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "changelog_entries",
        sa.Column("entry_id", sa.String(length=40), nullable=False),
        sa.Column("version", sa.String(length=32), nullable=False),
        sa.Column("version_sort", sa.String(length=32), nullable=False),
        sa.Column("title", sa.String(length=200), nullable=False),
        sa.Column("date", sa.String(length=10), nullable=True),
        sa.Column("items", sa.Text(), nullable=False),
        sa.Column("position", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("entry_id"),
    )
    with op.batch_alter_table("changelog_entries", schema=None) as batch_op:
        batch_op.create_index(
            "ix_changelog_entries_order", ["version_sort", "date", "position"], unique=False
        )

    op.create_table(
        "changelog_releases",
        sa.Column("version", sa.String(length=32), nullable=False),
        sa.Column("version_sort", sa.String(length=32), nullable=False),
        sa.Column("date", sa.String(length=10), nullable=False),
        sa.PrimaryKeyConstraint("version"),
    )
    with op.batch_alter_table("changelog_releases", schema=None) as batch_op:
        batch_op.create_index("ix_changelog_releases_sort", ["version_sort"], unique=False)

    op.create_table(
        "changelog_versions",
        sa.Column("singleton", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("current_version", sa.String(length=32), nullable=True),
        sa.Column("latest_build", sa.BigInteger(), nullable=True),
        sa.Column("min_supported_version", sa.String(length=32), nullable=True),
        sa.PrimaryKeyConstraint("singleton"),
    )


def downgrade() -> None:
    op.drop_table("changelog_versions")
    with op.batch_alter_table("changelog_releases", schema=None) as batch_op:
        batch_op.drop_index("ix_changelog_releases_sort")

    op.drop_table("changelog_releases")
    with op.batch_alter_table("changelog_entries", schema=None) as batch_op:
        batch_op.drop_index("ix_changelog_entries_order")

    op.drop_table("changelog_entries")
