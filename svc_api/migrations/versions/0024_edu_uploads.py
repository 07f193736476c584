"""education uploads: multipart uploads of instructors' media and their parts

Revision ID: 0024_edu_uploads
Revises: 0023_edu_studio
Create Date: 2026-11-26

Frozen once released: never edit a revision that has shipped; change the schema with a new one.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0024_edu_uploads"
down_revision = "0023_edu_studio"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('edu_uploads',
    sa.Column('upload_id', sa.String(length=24), nullable=False),
    sa.Column('leader_id', sa.String(length=6), nullable=False),
    sa.Column('kind', sa.String(length=8), nullable=False),
    sa.Column('filename', sa.String(length=255), nullable=False),
    sa.Column('content_type', sa.String(length=100), nullable=False),
    sa.Column('size_bytes', sa.BigInteger(), nullable=False),
    sa.Column('sha256', sa.String(length=64), nullable=False),
    sa.Column('part_size', sa.BigInteger(), nullable=False),
    sa.Column('part_count', sa.Integer(), nullable=False),
    sa.Column('object_key', sa.String(length=300), nullable=False),
    sa.Column('store_upload_id', sa.String(length=1024), nullable=False),
    sa.Column('status', sa.String(length=16), nullable=False),
    sa.Column('lease_until', sa.BigInteger(), nullable=False),
    sa.Column('claimed_by', sa.String(length=80), nullable=True),
    sa.Column('claim_until', sa.BigInteger(), nullable=True),
    sa.Column('attempts', sa.Integer(), server_default='0', nullable=False),
    sa.Column('media', sa.JSON(), nullable=True),
    sa.Column('error_code', sa.String(length=40), nullable=True),
    sa.Column('error_message', sa.String(length=300), nullable=True),
    sa.Column('retryable', sa.Boolean(), nullable=True),
    sa.Column('created_at', sa.BigInteger(), nullable=False),
    sa.Column('updated_at', sa.BigInteger(), nullable=False),
    sa.ForeignKeyConstraint(['leader_id'], ['accounts.svc_id'], ),
    sa.PrimaryKeyConstraint('upload_id')
    )
    op.create_index(
        'ix_edu_uploads_leader', 'edu_uploads', ['leader_id', 'created_at', 'upload_id'], unique=False
    )
    op.create_index('ix_edu_uploads_status', 'edu_uploads', ['status', 'lease_until'], unique=False)
    op.create_table('edu_upload_parts',
    sa.Column('upload_id', sa.String(length=24), nullable=False),
    sa.Column('part_number', sa.Integer(), autoincrement=False, nullable=False),
    sa.Column('etag', sa.String(length=80), nullable=False),
    sa.Column('size_bytes', sa.BigInteger(), nullable=False),
    sa.Column('received_at', sa.BigInteger(), nullable=False),
    sa.ForeignKeyConstraint(['upload_id'], ['edu_uploads.upload_id'], ),
    sa.PrimaryKeyConstraint('upload_id', 'part_number')
    )


def downgrade() -> None:
    op.drop_table('edu_upload_parts')
    op.drop_index('ix_edu_uploads_status', table_name='edu_uploads')
    op.drop_index('ix_edu_uploads_leader', table_name='edu_uploads')
    op.drop_table('edu_uploads')
