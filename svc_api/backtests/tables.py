"""The backtest jobs table: one row per launched job, the truth about its state.

A row is written at launch (``status`` ``running``, credits already charged) and updated by the job
runner: progress while it runs, then ``completed`` with the object key of its result, or ``failed``
with the error (and the refund). ``coins`` is a JSON list of data symbols; ``coins_key`` is the same
list as ``,BTCUSDT,ETHUSDT,`` so that a coin filter is one ``LIKE`` on both databases. Times:
``created_at`` integer Unix seconds (the history cursor), the others float seconds.

Example:
    >>> "backtest_jobs" in metadata.tables
    True
"""

from __future__ import annotations

import sqlalchemy as sa

from svc_api.core.tables import metadata

backtest_jobs = sa.Table(
    "backtest_jobs",
    metadata,
    sa.Column("job_id", sa.String(40), primary_key=True),
    sa.Column("svc_id", sa.String(6), sa.ForeignKey("accounts.svc_id"), nullable=False),
    sa.Column("kind", sa.String(16), nullable=False),
    sa.Column("strategy_name", sa.String(64), nullable=False),
    sa.Column("strategy_version", sa.Integer, nullable=True),
    sa.Column("coins", sa.Text, nullable=False),
    sa.Column("coins_key", sa.String(2000), nullable=False),
    sa.Column("market", sa.String(32), nullable=True),
    sa.Column("timeframe", sa.String(8), nullable=False),
    sa.Column("params", sa.Text, nullable=False),
    sa.Column("status", sa.String(16), nullable=False),
    sa.Column("progress_pct", sa.Float, nullable=False, server_default="0"),
    sa.Column("coin_progress", sa.Text, nullable=True),
    sa.Column("chunks", sa.Integer, nullable=False),
    sa.Column("cost_credits", sa.BigInteger, nullable=False),
    sa.Column("estimated_seconds", sa.Float, nullable=False),
    sa.Column("error", sa.String(2000), nullable=True),
    sa.Column("created_at", sa.BigInteger, nullable=False),
    sa.Column("started_at", sa.Float, nullable=True),
    sa.Column("finished_at", sa.Float, nullable=True),
    sa.Column("heartbeat_at", sa.Float, nullable=True),
    # The process running the job (core.liveness.HOLDER): a job of a process known dead is failed
    # and refunded at once on start-up, without waiting for its heartbeat to go stale.
    sa.Column("runner", sa.String(128), nullable=True),
    sa.Column("result_key", sa.String(300), nullable=True),
    sa.Column("total_trades", sa.Integer, nullable=True),
    sa.Column("win_rate", sa.Float, nullable=True),
    sa.Column("total_return_pct", sa.Float, nullable=True),
    sa.Column("returns_by_coin", sa.Text, nullable=True),
    sa.Index("ix_backtest_jobs_recent", "svc_id", "created_at", "job_id"),
    sa.Index("ix_backtest_jobs_status", "status"),
)
