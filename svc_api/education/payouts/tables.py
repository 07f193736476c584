"""Tables of sales and payouts: monthly statements per seller and currency, payout instructions
(unique per seller, period and currency), the accounts-payable ledger (a ``statement`` entry of each
statement's net, a ``payout`` entry of minus each payout) and the FX rates the payout run converts
with. ``education/tables.py`` lists them with every other subdomain's.

Example:
    >>> payouts.c.payout_id.primary_key, sorted(c.name for c in fx_rates.c)[:2]
    (True, ['base', 'quote'])
"""

from __future__ import annotations

import sqlalchemy as sa

from svc_api.core.tables import metadata

_ACCOUNT = "accounts.svc_id"

payout_statements = sa.Table(
    "edu_payout_statements",
    metadata,
    sa.Column("statement_id", sa.String(24), primary_key=True),
    sa.Column("leader_id", sa.String(6), sa.ForeignKey(_ACCOUNT), nullable=False),
    sa.Column("period", sa.String(7), nullable=False),
    sa.Column("currency", sa.String(3), nullable=False),
    sa.Column("period_start", sa.BigInteger, nullable=False),
    sa.Column("period_end", sa.BigInteger, nullable=False),
    sa.Column("orders", sa.Integer, nullable=False),
    sa.Column("refunded_orders", sa.Integer, nullable=False),
    sa.Column("gross_minor", sa.BigInteger, nullable=False),
    sa.Column("refunds_minor", sa.BigInteger, nullable=False),
    sa.Column("commission_minor", sa.BigInteger, nullable=False),
    sa.Column("fees_minor", sa.BigInteger, nullable=False),
    sa.Column("net_minor", sa.BigInteger, nullable=False),
    sa.Column("commission_bp", sa.Integer, nullable=False),
    sa.Column("fee_bp", sa.Integer, nullable=False),
    sa.Column("payout_id", sa.String(24), sa.ForeignKey("edu_payouts.payout_id"), nullable=True),
    sa.Column("created_at", sa.BigInteger, nullable=False),
    sa.UniqueConstraint("leader_id", "period", "currency"),
    sa.Index("ix_edu_payout_statements_unpaid", "leader_id", "payout_id"),
)

payouts = sa.Table(
    "edu_payouts",
    metadata,
    sa.Column("payout_id", sa.String(24), primary_key=True),
    sa.Column("leader_id", sa.String(6), sa.ForeignKey(_ACCOUNT), nullable=False),
    sa.Column("period", sa.String(7), nullable=False),
    sa.Column("currency", sa.String(3), nullable=False),
    sa.Column("amount_minor", sa.BigInteger, nullable=False),
    sa.Column("payout_currency", sa.String(3), nullable=False),
    sa.Column("payout_amount_minor", sa.BigInteger, nullable=False),
    sa.Column("fx_rate_micros", sa.BigInteger, nullable=True),
    sa.Column("state", sa.String(16), nullable=False),
    sa.Column("run_id", sa.String(24), nullable=False),
    sa.Column("export_file", sa.String(200), nullable=False),
    sa.Column("details", sa.JSON, nullable=False),
    sa.Column("created_at", sa.BigInteger, nullable=False),
    sa.UniqueConstraint("leader_id", "period", "currency"),
    sa.Index("ix_edu_payouts_run", "run_id"),
)

payables = sa.Table(
    "edu_payables",
    metadata,
    sa.Column("entry_id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("leader_id", sa.String(6), sa.ForeignKey(_ACCOUNT), nullable=False),
    sa.Column("kind", sa.String(16), nullable=False),
    sa.Column("ref_id", sa.String(24), nullable=False),
    sa.Column("amount_minor", sa.BigInteger, nullable=False),
    sa.Column("currency", sa.String(3), nullable=False),
    sa.Column("at", sa.BigInteger, nullable=False),
    sa.UniqueConstraint("ref_id", "kind"),
    sa.Index("ix_edu_payables_leader", "leader_id", "currency"),
)

fx_rates = sa.Table(
    "edu_fx_rates",
    metadata,
    sa.Column("rate_id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("base", sa.String(3), nullable=False),
    sa.Column("quote", sa.String(3), nullable=False),
    sa.Column("rate_micros", sa.BigInteger, nullable=False),
    sa.Column("set_at", sa.BigInteger, nullable=False),
    sa.Index("ix_edu_fx_rates_pair", "base", "quote", "set_at"),
)
