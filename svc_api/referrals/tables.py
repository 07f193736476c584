"""Tables of the referrals domain: commissions earned on referees' purchases, their redemptions, and
per-account commission rates. Money is exact (``Numeric``), never float; times are Unix seconds.

Example:
    >>> sorted(t.name for t in TABLES)
    ['referral_commissions', 'referral_rates', 'referral_redemptions']
"""

from __future__ import annotations

import sqlalchemy as sa

from svc_api.core.tables import metadata

COMMISSION_STATUSES = ("recorded", "reversed")
"""A commission is ``recorded`` when its purchase is applied and ``reversed`` once that is refunded."""

referral_commissions = sa.Table(
    "referral_commissions",
    metadata,
    sa.Column("commission_id", sa.String(40), primary_key=True),
    # The inviter, who earns the commission.
    sa.Column("svc_id", sa.String(6), sa.ForeignKey("accounts.svc_id"), nullable=False, index=True),
    sa.Column("amount_usdt", sa.Numeric(18, 6), nullable=False),
    sa.Column("status", sa.String(16), nullable=False, server_default="recorded"),
    sa.Column("created_at", sa.BigInteger, nullable=False),
    # The referee whose purchase earned it; NULL only on rows written before these columns existed.
    sa.Column("referee_id", sa.String(6), nullable=True),
    # The purchase that earned it, unique across channels (billing passes ``<source>:<purchase_id>``);
    # NULL only on rows written before these columns existed.
    sa.Column("purchase_id", sa.String(100), nullable=True),
    sa.Column("purchase_amount_usdt", sa.Numeric(18, 6), nullable=True),
    sa.Column("rate_pct", sa.Numeric(5, 2), nullable=True),
    # One commission per purchase: the same purchase reported twice records one row.
    sa.UniqueConstraint("purchase_id", name="uq_referral_commissions_purchase"),
)

referral_redemptions = sa.Table(
    "referral_redemptions",
    metadata,
    sa.Column("redemption_id", sa.String(40), primary_key=True),
    sa.Column("svc_id", sa.String(6), sa.ForeignKey("accounts.svc_id"), nullable=False, index=True),
    sa.Column("amount_usdt", sa.Numeric(18, 6), nullable=False),
    sa.Column("credits", sa.BigInteger, nullable=False),
    sa.Column("created_at", sa.BigInteger, nullable=False),
)

referral_rates = sa.Table(
    "referral_rates",
    metadata,
    sa.Column("svc_id", sa.String(6), sa.ForeignKey("accounts.svc_id"), primary_key=True),
    sa.Column("rate_pct", sa.Numeric(5, 2), nullable=False),
)

TABLES = (referral_commissions, referral_redemptions, referral_rates)
