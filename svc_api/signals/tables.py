"""Tables of live signals: what each active strategy watches and how far it was evaluated, the
signals themselves (waiting for entry, open, closed), who received each one, and the worker
processes sharing the passes (their leases).

Example:
    >>> sorted(t.name for t in TABLES)
    ['signal_deliveries', 'signal_watches', 'signal_workers', 'signals']
"""

from __future__ import annotations

import sqlalchemy as sa

from svc_api.core.tables import metadata

signal_watches = sa.Table(
    "signal_watches",
    metadata,
    sa.Column("svc_id", sa.String(6), sa.ForeignKey("accounts.svc_id"), primary_key=True),
    sa.Column("strategy_name", sa.String(20), primary_key=True),
    sa.Column("coin", sa.String(30), primary_key=True),
    sa.Column("symbol", sa.String(30), nullable=False),
    sa.Column("market", sa.String(30), nullable=False),
    sa.Column("timeframe", sa.String(8), nullable=False),
    sa.Column("version", sa.Integer, nullable=False),
    # The first candle (open time, ms) of the range the watch simulates: the signal of the newest
    # order placed, from which the engine's state is known to be flat (see signals.evaluate).
    sa.Column("anchor_ms", sa.BigInteger, nullable=False),
    sa.Column("evaluated_ms", sa.BigInteger, nullable=False),  # the newest candle evaluated
    sa.Column("updated_at", sa.BigInteger, nullable=False),
)

signals = sa.Table(
    "signals",
    metadata,
    sa.Column("position_key", sa.String(40), primary_key=True),
    sa.Column("svc_id", sa.String(6), sa.ForeignKey("accounts.svc_id"), nullable=False),
    sa.Column("strategy_name", sa.String(20), nullable=False),
    sa.Column("version", sa.Integer, nullable=False),
    sa.Column("coin", sa.String(30), nullable=False),
    sa.Column("symbol", sa.String(30), nullable=False),
    sa.Column("market", sa.String(30), nullable=False),
    sa.Column("timeframe", sa.String(8), nullable=False),
    sa.Column("side", sa.String(8), nullable=False),
    sa.Column("signal_mode", sa.String(16), nullable=False),
    sa.Column("signal_ms", sa.BigInteger, nullable=False),
    sa.Column("limit_price", sa.Float, nullable=False),
    sa.Column("tp_price", sa.Float, nullable=False),
    sa.Column("sl_price", sa.Float, nullable=False),
    sa.Column("status", sa.String(8), nullable=False),  # waiting | open | closed
    sa.Column("fill_ms", sa.BigInteger, nullable=True),
    sa.Column("entry_price", sa.Float, nullable=True),
    sa.Column("exit_ms", sa.BigInteger, nullable=True),
    sa.Column("exit_price", sa.Float, nullable=True),
    sa.Column("reason", sa.String(16), nullable=True),
    sa.Column("result", sa.String(16), nullable=True),
    sa.Column("closed_key", sa.String(40), nullable=True),
    sa.Column("created_at", sa.BigInteger, nullable=False),
    sa.Column("closed_at", sa.BigInteger, nullable=True),
    sa.Index("ix_signals_owner", "svc_id", "status", "created_at"),
    sa.Index("ix_signals_closed", "svc_id", "closed_at"),
)

signal_deliveries = sa.Table(
    "signal_deliveries",
    metadata,
    sa.Column(
        "position_key",
        sa.String(40),
        sa.ForeignKey("signals.position_key", ondelete="CASCADE"),
        primary_key=True,
    ),
    sa.Column("svc_id", sa.String(6), sa.ForeignKey("accounts.svc_id"), primary_key=True),
    sa.Column("charged_units", sa.BigInteger, nullable=False, server_default="0"),
    sa.Column("closed_sent", sa.Boolean, nullable=False, server_default=sa.false()),
    sa.Column("created_at", sa.BigInteger, nullable=False),
    sa.Index("ix_signal_deliveries_user", "svc_id", "position_key"),
)

signal_workers = sa.Table(
    "signal_workers",
    metadata,
    sa.Column("holder", sa.String(120), primary_key=True),  # host:pid:start of a worker process
    sa.Column("alive_until", sa.BigInteger, nullable=False),  # its lease: renewed at every pass
    sa.Column("started_at", sa.BigInteger, nullable=False),
)

TABLES = (signal_watches, signals, signal_deliveries, signal_workers)
