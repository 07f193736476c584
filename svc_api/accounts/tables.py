"""Tables of the accounts domain: accounts (with the ``inviter_id`` link the referrals domain reads),
their notification switches, sessions, logins and plan grants. Times are integer Unix seconds;
credits are integers of the smallest unit.

Example:
    >>> sorted(t.name for t in TABLES)
    ['accounts', 'identities', 'logins', 'notification_settings', 'plan_grants', 'sessions']
"""

from __future__ import annotations

import sqlalchemy as sa

from svc_api.core.tables import metadata

accounts = sa.Table(
    "accounts",
    metadata,
    sa.Column("svc_id", sa.String(6), primary_key=True),
    sa.Column("email", sa.String(320), nullable=False, unique=True),
    sa.Column("password_hash", sa.String(128), nullable=False),
    sa.Column("password_salt", sa.String(64), nullable=False),
    sa.Column("referral_code", sa.String(16), nullable=False, unique=True),
    sa.Column("inviter_id", sa.String(6), nullable=True),
    sa.Column("plan", sa.String(16), nullable=False, server_default="free"),
    sa.Column("license_expires_at", sa.BigInteger, nullable=False, server_default="0"),
    sa.Column("demo_expires_at", sa.BigInteger, nullable=False, server_default="0"),
    sa.Column("credits", sa.BigInteger, nullable=False, server_default="0"),
    sa.Column("ledger_seq", sa.BigInteger, nullable=False, server_default="0"),
    sa.Column("community_role", sa.String(16), nullable=False, server_default="member"),
    sa.Column("exchange_linked", sa.Boolean, nullable=False, server_default=sa.false()),
    sa.Column("messenger_linked", sa.Boolean, nullable=False, server_default=sa.false()),
    sa.Column("identity_linked", sa.Boolean, nullable=False, server_default=sa.false()),
    sa.Column("created_at", sa.BigInteger, nullable=False),
    sa.CheckConstraint("credits >= 0", name="ck_accounts_credits_nonnegative"),
)

NOTIFICATION_CHANNELS = ("app", "announcement", "account", "bot", "messenger", "mail")
"""The delivery channels a user switches on or off: one boolean column each below."""

notification_settings = sa.Table(
    "notification_settings",
    metadata,
    sa.Column("svc_id", sa.String(6), sa.ForeignKey("accounts.svc_id"), primary_key=True),
    sa.Column("app", sa.Boolean, nullable=False, server_default=sa.true()),
    sa.Column("announcement", sa.Boolean, nullable=False, server_default=sa.true()),
    sa.Column("account", sa.Boolean, nullable=False, server_default=sa.true()),
    sa.Column("bot", sa.Boolean, nullable=False, server_default=sa.true()),
    sa.Column("messenger", sa.Boolean, nullable=False, server_default=sa.true()),
    sa.Column("mail", sa.Boolean, nullable=False, server_default=sa.true()),
)

sessions = sa.Table(
    "sessions",
    metadata,
    sa.Column("token_hash", sa.String(64), primary_key=True),
    sa.Column("svc_id", sa.String(6), sa.ForeignKey("accounts.svc_id"), nullable=False, index=True),
    sa.Column("created_at", sa.BigInteger, nullable=False),
    sa.Column("expires_at", sa.BigInteger, nullable=False),
)

logins = sa.Table(
    "logins",
    metadata,
    sa.Column("login_id", sa.String(32), primary_key=True),
    sa.Column("svc_id", sa.String(6), sa.ForeignKey("accounts.svc_id"), nullable=False),
    sa.Column("ip_address", sa.String(64), nullable=False),
    sa.Column("platform", sa.String(32), nullable=False),
    sa.Column("login_at", sa.BigInteger, nullable=False),
    sa.UniqueConstraint("svc_id", "ip_address", name="uq_logins_origin"),
    sa.Index("ix_logins_recent", "svc_id", "login_at", "login_id"),
)

plan_grants = sa.Table(
    "plan_grants",
    metadata,
    sa.Column("grant_id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("svc_id", sa.String(6), sa.ForeignKey("accounts.svc_id"), nullable=False, index=True),
    sa.Column("plan", sa.String(16), nullable=False),
    sa.Column("days", sa.Integer, nullable=False),
    sa.Column("demo", sa.Boolean, nullable=False),
    sa.Column("expires_at", sa.BigInteger, nullable=False),
    sa.Column("source", sa.String(64), nullable=False),
    sa.Column("created_at", sa.BigInteger, nullable=False),
)

identities = sa.Table(
    "identities",
    metadata,
    # An identity-provider subject (``iss`` + ``sub`` of its ID tokens) linked to one account.
    sa.Column("issuer", sa.String(255), primary_key=True),
    sa.Column("subject", sa.String(255), primary_key=True),
    sa.Column("svc_id", sa.String(6), sa.ForeignKey("accounts.svc_id"), nullable=False, unique=True),
    sa.Column("linked_at", sa.BigInteger, nullable=False),
)

TABLES = (accounts, identities, notification_settings, sessions, logins, plan_grants)
