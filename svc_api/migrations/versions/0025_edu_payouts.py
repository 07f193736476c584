"""education payouts: statements, payout instructions, the accounts-payable ledger, FX rates

Revision ID: 0025_edu_payouts
Revises: 0024_edu_uploads
Create Date: 2026-11-25

Frozen once released: never edit a revision that has shipped; change the schema with a new one.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0025_edu_payouts"
down_revision = "0024_edu_uploads"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('edu_payouts',
    sa.Column('payout_id', sa.String(length=24), nullable=False),
    sa.Column('leader_id', sa.String(length=6), nullable=False),
    sa.Column('period', sa.String(length=7), nullable=False),
    sa.Column('currency', sa.String(length=3), nullable=False),
    sa.Column('amount_minor', sa.BigInteger(), nullable=False),
    sa.Column('payout_currency', sa.String(length=3), nullable=False),
    sa.Column('payout_amount_minor', sa.BigInteger(), nullable=False),
    sa.Column('fx_rate_micros', sa.BigInteger(), nullable=True),
    sa.Column('state', sa.String(length=16), nullable=False),
    sa.Column('run_id', sa.String(length=24), nullable=False),
    sa.Column('export_file', sa.String(length=200), nullable=False),
    sa.Column('details', sa.JSON(), nullable=False),
    sa.Column('created_at', sa.BigInteger(), nullable=False),
    sa.ForeignKeyConstraint(['leader_id'], ['accounts.svc_id'], ),
    sa.PrimaryKeyConstraint('payout_id'),
    sa.UniqueConstraint('leader_id', 'period', 'currency')
    )
    op.create_index('ix_edu_payouts_run', 'edu_payouts', ['run_id'], unique=False)
    op.create_table('edu_payout_statements',
    sa.Column('statement_id', sa.String(length=24), nullable=False),
    sa.Column('leader_id', sa.String(length=6), nullable=False),
    sa.Column('period', sa.String(length=7), nullable=False),
    sa.Column('currency', sa.String(length=3), nullable=False),
    sa.Column('period_start', sa.BigInteger(), nullable=False),
    sa.Column('period_end', sa.BigInteger(), nullable=False),
    sa.Column('orders', sa.Integer(), nullable=False),
    sa.Column('refunded_orders', sa.Integer(), nullable=False),
    sa.Column('gross_minor', sa.BigInteger(), nullable=False),
    sa.Column('refunds_minor', sa.BigInteger(), nullable=False),
    sa.Column('commission_minor', sa.BigInteger(), nullable=False),
    sa.Column('fees_minor', sa.BigInteger(), nullable=False),
    sa.Column('net_minor', sa.BigInteger(), nullable=False),
    sa.Column('commission_bp', sa.Integer(), nullable=False),
    sa.Column('fee_bp', sa.Integer(), nullable=False),
    sa.Column('payout_id', sa.String(length=24), nullable=True),
    sa.Column('created_at', sa.BigInteger(), nullable=False),
    sa.ForeignKeyConstraint(['leader_id'], ['accounts.svc_id'], ),
    sa.ForeignKeyConstraint(['payout_id'], ['edu_payouts.payout_id'], ),
    sa.PrimaryKeyConstraint('statement_id'),
    sa.UniqueConstraint('leader_id', 'period', 'currency')
    )
    op.create_index(
        'ix_edu_payout_statements_unpaid', 'edu_payout_statements', ['leader_id', 'payout_id'], unique=False
    )
    op.create_table('edu_payables',
    sa.Column('entry_id', sa.Integer(), autoincrement=True, nullable=False),
    sa.Column('leader_id', sa.String(length=6), nullable=False),
    sa.Column('kind', sa.String(length=16), nullable=False),
    sa.Column('ref_id', sa.String(length=24), nullable=False),
    sa.Column('amount_minor', sa.BigInteger(), nullable=False),
    sa.Column('currency', sa.String(length=3), nullable=False),
    sa.Column('at', sa.BigInteger(), nullable=False),
    sa.ForeignKeyConstraint(['leader_id'], ['accounts.svc_id'], ),
    sa.PrimaryKeyConstraint('entry_id'),
    sa.UniqueConstraint('ref_id', 'kind')
    )
    op.create_index('ix_edu_payables_leader', 'edu_payables', ['leader_id', 'currency'], unique=False)
    op.create_table('edu_fx_rates',
    sa.Column('rate_id', sa.Integer(), autoincrement=True, nullable=False),
    sa.Column('base', sa.String(length=3), nullable=False),
    sa.Column('quote', sa.String(length=3), nullable=False),
    sa.Column('rate_micros', sa.BigInteger(), nullable=False),
    sa.Column('set_at', sa.BigInteger(), nullable=False),
    sa.PrimaryKeyConstraint('rate_id')
    )
    op.create_index('ix_edu_fx_rates_pair', 'edu_fx_rates', ['base', 'quote', 'set_at'], unique=False)


def downgrade() -> None:
    op.drop_index('ix_edu_fx_rates_pair', table_name='edu_fx_rates')
    op.drop_table('edu_fx_rates')
    op.drop_index('ix_edu_payables_leader', table_name='edu_payables')
    op.drop_table('edu_payables')
    op.drop_index('ix_edu_payout_statements_unpaid', table_name='edu_payout_statements')
    op.drop_table('edu_payout_statements')
    op.drop_index('ix_edu_payouts_run', table_name='edu_payouts')
    op.drop_table('edu_payouts')
