"""education studio: instructor roles, seller profiles, onboarding, drafts, submissions, answers

Revision ID: 0023_edu_studio
Revises: 0022_education
Create Date: 2026-11-25

Frozen once released: never edit a revision that has shipped; change the schema with a new one.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0023_edu_studio"
down_revision = "0022_education"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('edu_instructor_roles',
    sa.Column('svc_id', sa.String(length=6), nullable=False),
    sa.Column('role', sa.String(length=24), nullable=False),
    sa.Column('granted_at', sa.BigInteger(), nullable=False),
    sa.ForeignKeyConstraint(['svc_id'], ['accounts.svc_id'], ),
    sa.PrimaryKeyConstraint('svc_id')
    )
    op.create_table('edu_onboarding_sessions',
    sa.Column('session_id', sa.String(length=24), nullable=False),
    sa.Column('svc_id', sa.String(length=6), nullable=False),
    sa.Column('token', sa.String(length=64), nullable=False),
    sa.Column('state', sa.String(length=16), nullable=False),
    sa.Column('created_at', sa.BigInteger(), nullable=False),
    sa.Column('expires_at', sa.BigInteger(), nullable=False),
    sa.Column('completed_at', sa.BigInteger(), nullable=True),
    sa.ForeignKeyConstraint(['svc_id'], ['accounts.svc_id'], ),
    sa.PrimaryKeyConstraint('session_id'),
    sa.UniqueConstraint('token')
    )
    op.create_index('ix_edu_onboarding_owner', 'edu_onboarding_sessions', ['svc_id', 'state'], unique=False)
    op.create_table('edu_seller_profiles',
    sa.Column('svc_id', sa.String(length=6), nullable=False),
    sa.Column('country', sa.String(length=2), nullable=True),
    sa.Column('legal_entity', sa.String(length=16), nullable=True),
    sa.Column('tax_id', sa.String(length=16), nullable=True),
    sa.Column('bank_account', sa.String(length=40), nullable=True),
    sa.Column('swift_bic', sa.String(length=11), nullable=True),
    sa.Column('payout_currency', sa.String(length=3), nullable=True),
    sa.Column('e_document_type', sa.String(length=32), nullable=True),
    sa.Column('contract_accepted_at', sa.BigInteger(), nullable=True),
    sa.Column('contract_version', sa.String(length=16), nullable=True),
    sa.Column('identity_confirmed_at', sa.BigInteger(), nullable=True),
    sa.Column('updated_at', sa.BigInteger(), nullable=False),
    sa.ForeignKeyConstraint(['svc_id'], ['accounts.svc_id'], ),
    sa.PrimaryKeyConstraint('svc_id')
    )
    op.create_table('edu_drafts',
    sa.Column('product_id', sa.String(length=24), nullable=False),
    sa.Column('fields', sa.JSON(), nullable=False),
    sa.Column('curriculum', sa.JSON(), nullable=True),
    sa.Column('version', sa.Integer(), nullable=False),
    sa.Column('curriculum_version', sa.Integer(), nullable=False),
    sa.Column('updated_at', sa.BigInteger(), nullable=False),
    sa.ForeignKeyConstraint(['product_id'], ['edu_products.product_id'], ),
    sa.PrimaryKeyConstraint('product_id')
    )
    op.create_table('edu_submissions',
    sa.Column('submission_id', sa.String(length=24), nullable=False),
    sa.Column('product_id', sa.String(length=24), nullable=False),
    sa.Column('leader_id', sa.String(length=6), nullable=False),
    sa.Column('snapshot', sa.JSON(), nullable=False),
    sa.Column('state', sa.String(length=16), nullable=False),
    sa.Column('reason', sa.String(length=500), nullable=True),
    sa.Column('created_at', sa.BigInteger(), nullable=False),
    sa.Column('decided_at', sa.BigInteger(), nullable=True),
    sa.ForeignKeyConstraint(['leader_id'], ['accounts.svc_id'], ),
    sa.ForeignKeyConstraint(['product_id'], ['edu_products.product_id'], ),
    sa.PrimaryKeyConstraint('submission_id')
    )
    op.create_index('ix_edu_submissions_product', 'edu_submissions', ['product_id', 'state'], unique=False)
    op.create_table('edu_answers',
    sa.Column('answer_id', sa.String(length=24), nullable=False),
    sa.Column('question_id', sa.String(length=24), nullable=False),
    sa.Column('svc_id', sa.String(length=6), nullable=False),
    sa.Column('body', sa.String(length=4000), nullable=False),
    sa.Column('created_at', sa.BigInteger(), nullable=False),
    sa.ForeignKeyConstraint(['question_id'], ['edu_questions.question_id'], ),
    sa.ForeignKeyConstraint(['svc_id'], ['accounts.svc_id'], ),
    sa.PrimaryKeyConstraint('answer_id')
    )
    op.create_index('ix_edu_answers_question', 'edu_answers', ['question_id', 'created_at'], unique=False)
    op.add_column('edu_bundles', sa.Column('version', sa.Integer(), server_default='1', nullable=False))


def downgrade() -> None:
    op.drop_column('edu_bundles', 'version')
    op.drop_index('ix_edu_answers_question', table_name='edu_answers')
    op.drop_table('edu_answers')
    op.drop_index('ix_edu_submissions_product', table_name='edu_submissions')
    op.drop_table('edu_submissions')
    op.drop_table('edu_drafts')
    op.drop_table('edu_seller_profiles')
    op.drop_index('ix_edu_onboarding_owner', table_name='edu_onboarding_sessions')
    op.drop_table('edu_onboarding_sessions')
    op.drop_table('edu_instructor_roles')
