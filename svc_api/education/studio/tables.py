"""Tables of the instructor studio: instructor roles, seller profiles and their onboarding, drafts
and submissions for review. Times are integer Unix seconds.

Example:
    >>> sorted(t.name for t in TABLES)[:2]
    ['edu_drafts', 'edu_instructor_roles']
"""

from __future__ import annotations

import sqlalchemy as sa

from svc_api.core.tables import metadata

_ACCOUNT = "accounts.svc_id"

instructor_roles = sa.Table(
    "edu_instructor_roles",
    metadata,
    sa.Column("svc_id", sa.String(6), sa.ForeignKey(_ACCOUNT), primary_key=True),
    sa.Column("role", sa.String(24), nullable=False),
    sa.Column("granted_at", sa.BigInteger, nullable=False),
)

seller_profiles = sa.Table(
    "edu_seller_profiles",
    metadata,
    sa.Column("svc_id", sa.String(6), sa.ForeignKey(_ACCOUNT), primary_key=True),
    sa.Column("country", sa.String(2), nullable=True),
    sa.Column("legal_entity", sa.String(16), nullable=True),
    sa.Column("tax_id", sa.String(16), nullable=True),
    sa.Column("bank_account", sa.String(40), nullable=True),
    sa.Column("swift_bic", sa.String(11), nullable=True),
    sa.Column("payout_currency", sa.String(3), nullable=True),
    sa.Column("e_document_type", sa.String(32), nullable=True),
    sa.Column("contract_accepted_at", sa.BigInteger, nullable=True),
    sa.Column("contract_version", sa.String(16), nullable=True),
    sa.Column("identity_confirmed_at", sa.BigInteger, nullable=True),
    sa.Column("updated_at", sa.BigInteger, nullable=False),
)

onboarding_sessions = sa.Table(
    "edu_onboarding_sessions",
    metadata,
    sa.Column("session_id", sa.String(24), primary_key=True),
    sa.Column("svc_id", sa.String(6), sa.ForeignKey(_ACCOUNT), nullable=False),
    sa.Column("token", sa.String(64), nullable=False, unique=True),
    sa.Column("state", sa.String(16), nullable=False),
    sa.Column("created_at", sa.BigInteger, nullable=False),
    sa.Column("expires_at", sa.BigInteger, nullable=False),
    sa.Column("completed_at", sa.BigInteger, nullable=True),
    sa.Index("ix_edu_onboarding_owner", "svc_id", "state"),
)

drafts = sa.Table(
    "edu_drafts",
    metadata,
    sa.Column("product_id", sa.String(24), sa.ForeignKey("edu_products.product_id"), primary_key=True),
    sa.Column("fields", sa.JSON, nullable=False),
    sa.Column("curriculum", sa.JSON, nullable=True),
    sa.Column("version", sa.Integer, nullable=False),
    sa.Column("curriculum_version", sa.Integer, nullable=False),
    sa.Column("updated_at", sa.BigInteger, nullable=False),
)

submissions = sa.Table(
    "edu_submissions",
    metadata,
    sa.Column("submission_id", sa.String(24), primary_key=True),
    sa.Column("product_id", sa.String(24), sa.ForeignKey("edu_products.product_id"), nullable=False),
    sa.Column("leader_id", sa.String(6), sa.ForeignKey(_ACCOUNT), nullable=False),
    sa.Column("snapshot", sa.JSON, nullable=False),
    sa.Column("state", sa.String(16), nullable=False),
    sa.Column("reason", sa.String(500), nullable=True),
    sa.Column("created_at", sa.BigInteger, nullable=False),
    sa.Column("decided_at", sa.BigInteger, nullable=True),
    sa.Index("ix_edu_submissions_product", "product_id", "state"),
)


TABLES = (instructor_roles, seller_profiles, onboarding_sessions, drafts, submissions)
