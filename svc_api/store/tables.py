"""SQLAlchemy Core tables of the accounts side of the service.

Times are integer Unix seconds. Credits are integers of the smallest unit (see
:data:`svc_api.domains.credits.CREDIT_SCALE`), never floats. Tables are created by the versioned
migrations of :mod:`svc_api.store.migrations`, not by ``metadata.create_all``.

Example:
    >>> [t for t in ("accounts", "api_keys", "credit_transactions") if t in metadata.tables]
    ['accounts', 'api_keys', 'credit_transactions']
"""

from __future__ import annotations

import sqlalchemy as sa

metadata = sa.MetaData()

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

api_keys = sa.Table(
    "api_keys",
    metadata,
    sa.Column("api_key", sa.String(48), primary_key=True),
    sa.Column("svc_id", sa.String(6), sa.ForeignKey("accounts.svc_id"), nullable=False, index=True),
    # Equal to svc_id while the key is active, NULL once revoked: the unique constraint is the
    # "one active key per user" rule, enforced by the database even under concurrent requests.
    sa.Column("active_owner", sa.String(6), nullable=True, unique=True),
    sa.Column("secret_hash", sa.String(64), nullable=False),
    sa.Column("label", sa.String(64), nullable=False),
    sa.Column("permissions", sa.String(128), nullable=False),
    sa.Column("created_at", sa.BigInteger, nullable=False),
    sa.Column("revoked_at", sa.BigInteger, nullable=True),
)

credit_transactions = sa.Table(
    "credit_transactions",
    metadata,
    sa.Column("transaction_id", sa.String(40), primary_key=True),
    sa.Column("svc_id", sa.String(6), sa.ForeignKey("accounts.svc_id"), nullable=False),
    sa.Column("seq", sa.BigInteger, nullable=False),
    sa.Column("type", sa.String(16), nullable=False),
    sa.Column("amount", sa.BigInteger, nullable=False),
    sa.Column("balance_after", sa.BigInteger, nullable=False),
    sa.Column("action", sa.String(32), nullable=False),
    sa.Column("description", sa.String(500), nullable=False),
    sa.Column("reason", sa.String(500), nullable=True),
    sa.Column("idempotency_key", sa.String(128), nullable=True),
    sa.Column("created_at", sa.BigInteger, nullable=False),
    sa.UniqueConstraint("svc_id", "seq", name="uq_credit_seq"),
    sa.UniqueConstraint("svc_id", "idempotency_key", name="uq_credit_idempotency"),
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

referral_commissions = sa.Table(
    "referral_commissions",
    metadata,
    sa.Column("commission_id", sa.String(40), primary_key=True),
    sa.Column("svc_id", sa.String(6), sa.ForeignKey("accounts.svc_id"), nullable=False, index=True),
    sa.Column("amount_usdt", sa.Numeric(18, 6), nullable=False),
    sa.Column("status", sa.String(16), nullable=False, server_default="recorded"),
    sa.Column("created_at", sa.BigInteger, nullable=False),
)

notifications = sa.Table(
    "notifications",
    metadata,
    sa.Column("id", sa.String(40), primary_key=True),
    sa.Column("svc_id", sa.String(6), sa.ForeignKey("accounts.svc_id"), nullable=False),
    sa.Column("title", sa.String(200), nullable=False),
    sa.Column("body", sa.String(2000), nullable=False),
    sa.Column("event_type", sa.String(64), nullable=False),
    sa.Column("created_at", sa.BigInteger, nullable=False),
    sa.Column("read_at", sa.BigInteger, nullable=True),
    sa.Index("ix_notifications_recent", "svc_id", "created_at", "id"),
)

platform_notifications = sa.Table(
    "platform_notifications",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("title", sa.String(200), nullable=False),
    sa.Column("body", sa.String(2000), nullable=False),
    sa.Column("type", sa.String(32), nullable=False, server_default="announcement"),
    sa.Column("created_at", sa.BigInteger, nullable=False, index=True),
)

idempotency_keys = sa.Table(
    "idempotency_keys",
    metadata,
    sa.Column("principal", sa.String(64), primary_key=True),
    sa.Column("key", sa.String(128), primary_key=True),
    sa.Column("fingerprint", sa.String(64), nullable=False),
    sa.Column("state", sa.String(16), nullable=False),
    sa.Column("status_code", sa.Integer, nullable=True),
    sa.Column("content_type", sa.String(100), nullable=True),
    sa.Column("body", sa.LargeBinary, nullable=True),
    sa.Column("created_at", sa.BigInteger, nullable=False),
)

# The other domains' tables live in their own modules on the same metadata; importing them here
# means every table is known wherever the metadata is used (migrations, tests).
from svc_api.store import backtest_tables, market_tables, strategy_tables  # noqa: E402,F401
