"""baseline: accounts, keys, credits, notifications, strategies, backtests, market and trend tables

Revision ID: 0001
Revises: (none)
Create Date: 2026-11-24

Frozen once released: never edit a revision that has shipped; change the schema with a new one.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "accounts",
        sa.Column("svc_id", sa.String(length=6), nullable=False),
        sa.Column("email", sa.String(length=320), nullable=False),
        sa.Column("password_hash", sa.String(length=128), nullable=False),
        sa.Column("password_salt", sa.String(length=64), nullable=False),
        sa.Column("referral_code", sa.String(length=16), nullable=False),
        sa.Column("inviter_id", sa.String(length=6), nullable=True),
        sa.Column("plan", sa.String(length=16), server_default="free", nullable=False),
        sa.Column("license_expires_at", sa.BigInteger(), server_default="0", nullable=False),
        sa.Column("demo_expires_at", sa.BigInteger(), server_default="0", nullable=False),
        sa.Column("credits", sa.BigInteger(), server_default="0", nullable=False),
        sa.Column("ledger_seq", sa.BigInteger(), server_default="0", nullable=False),
        sa.Column("community_role", sa.String(length=16), server_default="member", nullable=False),
        sa.Column("exchange_linked", sa.Boolean(), server_default=sa.false(), nullable=False),
        sa.Column("messenger_linked", sa.Boolean(), server_default=sa.false(), nullable=False),
        sa.Column("identity_linked", sa.Boolean(), server_default=sa.false(), nullable=False),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
        sa.CheckConstraint("credits >= 0", name="ck_accounts_credits_nonnegative"),
        sa.PrimaryKeyConstraint("svc_id"),
        sa.UniqueConstraint("email"),
        sa.UniqueConstraint("referral_code"),
    )
    op.create_table(
        "idempotency_keys",
        sa.Column("principal", sa.String(length=64), nullable=False),
        sa.Column("key", sa.String(length=128), nullable=False),
        sa.Column("fingerprint", sa.String(length=64), nullable=False),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column("status_code", sa.Integer(), nullable=True),
        sa.Column("content_type", sa.String(length=100), nullable=True),
        sa.Column("body", sa.LargeBinary(), nullable=True),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("principal", "key"),
    )
    op.create_table(
        "platform_notifications",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("title", sa.String(length=200), nullable=False),
        sa.Column("body", sa.String(length=2000), nullable=False),
        sa.Column("type", sa.String(length=32), server_default="announcement", nullable=False),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index(
        op.f("ix_platform_notifications_created_at"), "platform_notifications", ["created_at"], unique=False
    )
    op.create_table(
        "trend_signals",
        sa.Column("symbol", sa.String(length=32), nullable=False),
        sa.Column("timeframe", sa.String(length=8), nullable=False),
        sa.Column("ts", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("way", sa.String(length=8), nullable=False),
        sa.Column("market", sa.String(length=32), nullable=False),
        sa.Column("is_return_to_trend", sa.Boolean(), nullable=False),
        sa.Column("detected_at", sa.BigInteger(), nullable=False),
        sa.Column("expires_at", sa.BigInteger(), nullable=True),
        sa.PrimaryKeyConstraint("symbol", "timeframe", "ts", "way"),
    )
    op.create_index(op.f("ix_trend_signals_expires_at"), "trend_signals", ["expires_at"], unique=False)
    op.create_index(
        "ix_trend_signals_recent", "trend_signals", ["ts", "symbol", "timeframe", "way"], unique=False
    )
    op.create_table(
        "api_keys",
        sa.Column("api_key", sa.String(length=48), nullable=False),
        sa.Column("svc_id", sa.String(length=6), nullable=False),
        sa.Column("active_owner", sa.String(length=6), nullable=True),
        sa.Column("secret_hash", sa.String(length=64), nullable=False),
        sa.Column("label", sa.String(length=64), nullable=False),
        sa.Column("permissions", sa.String(length=128), nullable=False),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
        sa.Column("revoked_at", sa.BigInteger(), nullable=True),
        sa.ForeignKeyConstraint(
            ["svc_id"],
            ["accounts.svc_id"],
        ),
        sa.PrimaryKeyConstraint("api_key"),
        sa.UniqueConstraint("active_owner"),
    )
    op.create_index(op.f("ix_api_keys_svc_id"), "api_keys", ["svc_id"], unique=False)
    op.create_table(
        "backtest_jobs",
        sa.Column("job_id", sa.String(length=40), nullable=False),
        sa.Column("svc_id", sa.String(length=6), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("strategy_name", sa.String(length=64), nullable=False),
        sa.Column("strategy_version", sa.Integer(), nullable=True),
        sa.Column("coins", sa.Text(), nullable=False),
        sa.Column("coins_key", sa.String(length=2000), nullable=False),
        sa.Column("market", sa.String(length=32), nullable=True),
        sa.Column("timeframe", sa.String(length=8), nullable=False),
        sa.Column("params", sa.Text(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("progress_pct", sa.Float(), server_default="0", nullable=False),
        sa.Column("coin_progress", sa.Text(), nullable=True),
        sa.Column("chunks", sa.Integer(), nullable=False),
        sa.Column("cost_credits", sa.BigInteger(), nullable=False),
        sa.Column("estimated_seconds", sa.Float(), nullable=False),
        sa.Column("error", sa.String(length=2000), nullable=True),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
        sa.Column("started_at", sa.Float(), nullable=True),
        sa.Column("finished_at", sa.Float(), nullable=True),
        sa.Column("heartbeat_at", sa.Float(), nullable=True),
        sa.Column("result_key", sa.String(length=300), nullable=True),
        sa.Column("total_trades", sa.Integer(), nullable=True),
        sa.Column("win_rate", sa.Float(), nullable=True),
        sa.Column("total_return_pct", sa.Float(), nullable=True),
        sa.Column("returns_by_coin", sa.Text(), nullable=True),
        sa.ForeignKeyConstraint(
            ["svc_id"],
            ["accounts.svc_id"],
        ),
        sa.PrimaryKeyConstraint("job_id"),
    )
    op.create_index(
        "ix_backtest_jobs_recent", "backtest_jobs", ["svc_id", "created_at", "job_id"], unique=False
    )
    op.create_index("ix_backtest_jobs_status", "backtest_jobs", ["status"], unique=False)
    op.create_table(
        "credit_transactions",
        sa.Column("transaction_id", sa.String(length=40), nullable=False),
        sa.Column("svc_id", sa.String(length=6), nullable=False),
        sa.Column("seq", sa.BigInteger(), nullable=False),
        sa.Column("type", sa.String(length=16), nullable=False),
        sa.Column("amount", sa.BigInteger(), nullable=False),
        sa.Column("balance_after", sa.BigInteger(), nullable=False),
        sa.Column("action", sa.String(length=32), nullable=False),
        sa.Column("description", sa.String(length=500), nullable=False),
        sa.Column("reason", sa.String(length=500), nullable=True),
        sa.Column("idempotency_key", sa.String(length=128), nullable=True),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
        sa.ForeignKeyConstraint(
            ["svc_id"],
            ["accounts.svc_id"],
        ),
        sa.PrimaryKeyConstraint("transaction_id"),
        sa.UniqueConstraint("svc_id", "idempotency_key", name="uq_credit_idempotency"),
        sa.UniqueConstraint("svc_id", "seq", name="uq_credit_seq"),
    )
    op.create_table(
        "favorite_coins",
        sa.Column("svc_id", sa.String(length=6), nullable=False),
        sa.Column("symbol", sa.String(length=32), nullable=False),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
        sa.ForeignKeyConstraint(
            ["svc_id"],
            ["accounts.svc_id"],
        ),
        sa.PrimaryKeyConstraint("svc_id", "symbol"),
    )
    op.create_table(
        "logins",
        sa.Column("login_id", sa.String(length=32), nullable=False),
        sa.Column("svc_id", sa.String(length=6), nullable=False),
        sa.Column("ip_address", sa.String(length=64), nullable=False),
        sa.Column("platform", sa.String(length=32), nullable=False),
        sa.Column("login_at", sa.BigInteger(), nullable=False),
        sa.ForeignKeyConstraint(
            ["svc_id"],
            ["accounts.svc_id"],
        ),
        sa.PrimaryKeyConstraint("login_id"),
        sa.UniqueConstraint("svc_id", "ip_address", name="uq_logins_origin"),
    )
    op.create_index("ix_logins_recent", "logins", ["svc_id", "login_at", "login_id"], unique=False)
    op.create_table(
        "notification_settings",
        sa.Column("svc_id", sa.String(length=6), nullable=False),
        sa.Column("app", sa.Boolean(), server_default=sa.true(), nullable=False),
        sa.Column("announcement", sa.Boolean(), server_default=sa.true(), nullable=False),
        sa.Column("account", sa.Boolean(), server_default=sa.true(), nullable=False),
        sa.Column("bot", sa.Boolean(), server_default=sa.true(), nullable=False),
        sa.Column("messenger", sa.Boolean(), server_default=sa.true(), nullable=False),
        sa.Column("mail", sa.Boolean(), server_default=sa.true(), nullable=False),
        sa.ForeignKeyConstraint(
            ["svc_id"],
            ["accounts.svc_id"],
        ),
        sa.PrimaryKeyConstraint("svc_id"),
    )
    op.create_table(
        "notifications",
        sa.Column("id", sa.String(length=40), nullable=False),
        sa.Column("svc_id", sa.String(length=6), nullable=False),
        sa.Column("title", sa.String(length=200), nullable=False),
        sa.Column("body", sa.String(length=2000), nullable=False),
        sa.Column("event_type", sa.String(length=64), nullable=False),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
        sa.Column("read_at", sa.BigInteger(), nullable=True),
        sa.ForeignKeyConstraint(
            ["svc_id"],
            ["accounts.svc_id"],
        ),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_notifications_recent", "notifications", ["svc_id", "created_at", "id"], unique=False)
    op.create_table(
        "plan_grants",
        sa.Column("grant_id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("svc_id", sa.String(length=6), nullable=False),
        sa.Column("plan", sa.String(length=16), nullable=False),
        sa.Column("days", sa.Integer(), nullable=False),
        sa.Column("demo", sa.Boolean(), nullable=False),
        sa.Column("expires_at", sa.BigInteger(), nullable=False),
        sa.Column("source", sa.String(length=64), nullable=False),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
        sa.ForeignKeyConstraint(
            ["svc_id"],
            ["accounts.svc_id"],
        ),
        sa.PrimaryKeyConstraint("grant_id"),
    )
    op.create_index(op.f("ix_plan_grants_svc_id"), "plan_grants", ["svc_id"], unique=False)
    op.create_table(
        "referral_commissions",
        sa.Column("commission_id", sa.String(length=40), nullable=False),
        sa.Column("svc_id", sa.String(length=6), nullable=False),
        sa.Column("amount_usdt", sa.Numeric(precision=18, scale=6), nullable=False),
        sa.Column("status", sa.String(length=16), server_default="recorded", nullable=False),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
        sa.ForeignKeyConstraint(
            ["svc_id"],
            ["accounts.svc_id"],
        ),
        sa.PrimaryKeyConstraint("commission_id"),
    )
    op.create_index(op.f("ix_referral_commissions_svc_id"), "referral_commissions", ["svc_id"], unique=False)
    op.create_table(
        "sessions",
        sa.Column("token_hash", sa.String(length=64), nullable=False),
        sa.Column("svc_id", sa.String(length=6), nullable=False),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
        sa.Column("expires_at", sa.BigInteger(), nullable=False),
        sa.ForeignKeyConstraint(
            ["svc_id"],
            ["accounts.svc_id"],
        ),
        sa.PrimaryKeyConstraint("token_hash"),
    )
    op.create_index(op.f("ix_sessions_svc_id"), "sessions", ["svc_id"], unique=False)
    op.create_table(
        "strategies",
        sa.Column("svc_id", sa.String(length=6), nullable=False),
        sa.Column("name", sa.String(length=20), nullable=False),
        sa.Column("current_version", sa.Integer(), nullable=False),
        sa.Column("visibility", sa.String(length=8), server_default="private", nullable=False),
        sa.Column("credits_per_signal", sa.BigInteger(), server_default="0", nullable=False),
        sa.Column("public_timeframe", sa.String(length=8), nullable=True),
        sa.Column("public_coins", sa.Text(), server_default="[]", nullable=False),
        sa.Column("leverage", sa.Integer(), server_default="1", nullable=False),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
        sa.Column("updated_at", sa.BigInteger(), nullable=False),
        sa.ForeignKeyConstraint(
            ["svc_id"],
            ["accounts.svc_id"],
        ),
        sa.PrimaryKeyConstraint("svc_id", "name"),
    )
    op.create_table(
        "trend_signal_tracks",
        sa.Column("svc_id", sa.String(length=6), nullable=False),
        sa.Column("symbol", sa.String(length=32), nullable=False),
        sa.Column("timeframe", sa.String(length=8), nullable=False),
        sa.Column("ts", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("way", sa.String(length=8), nullable=False),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
        sa.ForeignKeyConstraint(
            ["svc_id"],
            ["accounts.svc_id"],
        ),
        sa.ForeignKeyConstraint(
            ["symbol", "timeframe", "ts", "way"],
            ["trend_signals.symbol", "trend_signals.timeframe", "trend_signals.ts", "trend_signals.way"],
            name="fk_trend_tracks_signal",
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("svc_id", "symbol", "timeframe", "ts", "way"),
    )
    op.create_index(
        "ix_trend_tracks_signal", "trend_signal_tracks", ["symbol", "timeframe", "ts", "way"], unique=False
    )
    op.create_table(
        "strategy_versions",
        sa.Column("svc_id", sa.String(length=6), nullable=False),
        sa.Column("name", sa.String(length=20), nullable=False),
        sa.Column("version", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("generation_id", sa.String(length=32), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("market_type", sa.String(length=8), nullable=False),
        sa.Column("position_side", sa.String(length=8), nullable=False),
        sa.Column("signal_mode", sa.String(length=16), nullable=False),
        sa.Column("timeframe", sa.String(length=8), nullable=False),
        sa.Column("entry_condition", sa.Text(), nullable=False),
        sa.Column("tp_condition", sa.Text(), nullable=True),
        sa.Column("sl_condition", sa.Text(), nullable=True),
        sa.Column("program_json", sa.Text(), nullable=True),
        sa.Column("candle_count", sa.Integer(), nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("cost_units", sa.BigInteger(), server_default="0", nullable=False),
        sa.Column("refunded", sa.Boolean(), server_default=sa.false(), nullable=False),
        sa.Column("attempts", sa.Integer(), server_default="0", nullable=False),
        sa.Column("claimed_by", sa.String(length=32), nullable=True),
        sa.Column("claimed_at", sa.BigInteger(), nullable=True),
        sa.Column("rolled_back_from", sa.Integer(), nullable=True),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
        sa.Column("updated_at", sa.BigInteger(), nullable=False),
        sa.ForeignKeyConstraint(
            ["svc_id", "name"], ["strategies.svc_id", "strategies.name"], ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("svc_id", "name", "version"),
        sa.UniqueConstraint("generation_id"),
    )
    op.create_index(
        "ix_strategy_versions_status", "strategy_versions", ["status", "claimed_at"], unique=False
    )


def downgrade() -> None:
    op.drop_index("ix_strategy_versions_status", table_name="strategy_versions")
    op.drop_table("strategy_versions")
    op.drop_index("ix_trend_tracks_signal", table_name="trend_signal_tracks")
    op.drop_table("trend_signal_tracks")
    op.drop_table("strategies")
    op.drop_index(op.f("ix_sessions_svc_id"), table_name="sessions")
    op.drop_table("sessions")
    op.drop_index(op.f("ix_referral_commissions_svc_id"), table_name="referral_commissions")
    op.drop_table("referral_commissions")
    op.drop_index(op.f("ix_plan_grants_svc_id"), table_name="plan_grants")
    op.drop_table("plan_grants")
    op.drop_index("ix_notifications_recent", table_name="notifications")
    op.drop_table("notifications")
    op.drop_table("notification_settings")
    op.drop_index("ix_logins_recent", table_name="logins")
    op.drop_table("logins")
    op.drop_table("favorite_coins")
    op.drop_table("credit_transactions")
    op.drop_index("ix_backtest_jobs_status", table_name="backtest_jobs")
    op.drop_index("ix_backtest_jobs_recent", table_name="backtest_jobs")
    op.drop_table("backtest_jobs")
    op.drop_index(op.f("ix_api_keys_svc_id"), table_name="api_keys")
    op.drop_table("api_keys")
    op.drop_index("ix_trend_signals_recent", table_name="trend_signals")
    op.drop_index(op.f("ix_trend_signals_expires_at"), table_name="trend_signals")
    op.drop_table("trend_signals")
    op.drop_index(op.f("ix_platform_notifications_created_at"), table_name="platform_notifications")
    op.drop_table("platform_notifications")
    op.drop_table("idempotency_keys")
    op.drop_table("accounts")
