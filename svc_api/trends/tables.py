"""Tables of the trends domain: stored trend signals and who tracks them.

A trend signal is keyed by the four fields a client sends to track it: symbol, timeframe, the signal
candle's open time (Unix seconds) and the way. ``expires_at`` (Unix seconds of market time, see
:mod:`svc_api.trends.service`) is NULL while at least one user tracks the signal.

Example:
    >>> [t.name for t in TABLES]
    ['trend_signals', 'trend_signal_tracks']
"""

from __future__ import annotations

import sqlalchemy as sa

from svc_api.core.tables import metadata

trend_signals = sa.Table(
    "trend_signals",
    metadata,
    sa.Column("symbol", sa.String(32), primary_key=True),
    sa.Column("timeframe", sa.String(8), primary_key=True),
    sa.Column("ts", sa.BigInteger, primary_key=True, autoincrement=False),
    sa.Column("way", sa.String(8), primary_key=True),
    sa.Column("market", sa.String(32), nullable=False),
    sa.Column("is_return_to_trend", sa.Boolean, nullable=False),
    sa.Column("detected_at", sa.BigInteger, nullable=False),
    sa.Column("expires_at", sa.BigInteger, nullable=True, index=True),
    sa.Index("ix_trend_signals_recent", "ts", "symbol", "timeframe", "way"),
)

trend_signal_tracks = sa.Table(
    "trend_signal_tracks",
    metadata,
    sa.Column("svc_id", sa.String(6), sa.ForeignKey("accounts.svc_id"), primary_key=True),
    sa.Column("symbol", sa.String(32), primary_key=True),
    sa.Column("timeframe", sa.String(8), primary_key=True),
    sa.Column("ts", sa.BigInteger, primary_key=True, autoincrement=False),
    sa.Column("way", sa.String(8), primary_key=True),
    sa.Column("created_at", sa.BigInteger, nullable=False),
    sa.ForeignKeyConstraint(
        ["symbol", "timeframe", "ts", "way"],
        ["trend_signals.symbol", "trend_signals.timeframe", "trend_signals.ts", "trend_signals.way"],
        name="fk_trend_tracks_signal",
        ondelete="CASCADE",
    ),
    sa.Index("ix_trend_tracks_signal", "symbol", "timeframe", "ts", "way"),
)

TABLES = (trend_signals, trend_signal_tracks)
