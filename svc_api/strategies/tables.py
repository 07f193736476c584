"""Tables of user strategies: one row per strategy, one row per version (migration 3).

A strategy's status is the status of its current version. Every version keeps the conditions as
written, the compiled program (``Strategy.to_json()``) and its candle count once generated, or the
compiler's error when generation failed. ``credits_per_signal`` is in credit units
(:data:`svc_api.credits.service.CREDIT_SCALE`).

Example:
    >>> sorted(c.name for c in strategies.primary_key)
    ['name', 'svc_id']
    >>> sorted(c.name for c in strategy_versions.primary_key)
    ['name', 'svc_id', 'version']
"""

from __future__ import annotations

import sqlalchemy as sa

from svc_api.core.tables import metadata

strategies = sa.Table(
    "strategies",
    metadata,
    sa.Column("svc_id", sa.String(6), sa.ForeignKey("accounts.svc_id"), primary_key=True),
    sa.Column("name", sa.String(20), primary_key=True),
    sa.Column("current_version", sa.Integer, nullable=False),
    sa.Column("visibility", sa.String(8), nullable=False, server_default="private"),
    sa.Column("credits_per_signal", sa.BigInteger, nullable=False, server_default="0"),
    sa.Column("public_timeframe", sa.String(8), nullable=True),
    sa.Column("public_coins", sa.Text, nullable=False, server_default="[]"),
    sa.Column("leverage", sa.Integer, nullable=False, server_default="1"),
    sa.Column("created_at", sa.BigInteger, nullable=False),
    sa.Column("updated_at", sa.BigInteger, nullable=False),
)

strategy_versions = sa.Table(
    "strategy_versions",
    metadata,
    sa.Column("svc_id", sa.String(6), primary_key=True),
    sa.Column("name", sa.String(20), primary_key=True),
    sa.Column("version", sa.Integer, primary_key=True, autoincrement=False),
    # Unique per generation, even when a deleted name is created again: keys the refund.
    sa.Column("generation_id", sa.String(32), nullable=False, unique=True),
    sa.Column("status", sa.String(16), nullable=False),
    sa.Column("market_type", sa.String(8), nullable=False),
    sa.Column("position_side", sa.String(8), nullable=False),
    sa.Column("signal_mode", sa.String(16), nullable=False),
    sa.Column("timeframe", sa.String(8), nullable=False),
    sa.Column("entry_condition", sa.Text, nullable=False),
    sa.Column("tp_condition", sa.Text, nullable=True),
    sa.Column("sl_condition", sa.Text, nullable=True),
    sa.Column("exit_condition", sa.Text, nullable=True),
    sa.Column("program_json", sa.Text, nullable=True),
    sa.Column("candle_count", sa.Integer, nullable=True),
    sa.Column("error", sa.Text, nullable=True),
    sa.Column("cost_units", sa.BigInteger, nullable=False, server_default="0"),
    sa.Column("refunded", sa.Boolean, nullable=False, server_default=sa.false()),
    sa.Column("attempts", sa.Integer, nullable=False, server_default="0"),
    sa.Column("claimed_by", sa.String(32), nullable=True),
    sa.Column("claimed_at", sa.BigInteger, nullable=True),
    sa.Column("rolled_back_from", sa.Integer, nullable=True),
    sa.Column("created_at", sa.BigInteger, nullable=False),
    sa.Column("updated_at", sa.BigInteger, nullable=False),
    sa.ForeignKeyConstraint(["svc_id", "name"], ["strategies.svc_id", "strategies.name"], ondelete="CASCADE"),
    sa.Index("ix_strategy_versions_status", "status", "claimed_at"),
)
