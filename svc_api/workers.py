"""The registry of the service's background workers: every worker of every domain is named here.

``create_app``'s lifespan starts them in each server process (unless ``SVC_RUN_WORKERS=0``, for
deployments that run ``svc worker`` separately) and ``GET /healthz`` reports each one.

Example:
    >>> REGISTRY.names()[-2:]
    ['edu_uploads', 'retention']
"""

from __future__ import annotations

from svc_api.backtests.worker import RunnerWorker
from svc_api.bot.worker import bot_worker
from svc_api.community.service import purge_worker
from svc_api.core.leases import LeaseWorker
from svc_api.core.workers import Registry
from svc_api.education.commerce.worker import payment_callback_worker
from svc_api.education.payouts.worker import payout_worker
from svc_api.education.uploads.processing import upload_worker
from svc_api.exchange.worker import reconciler_worker
from svc_api.market.feed import feed_worker
from svc_api.notifications.worker import fanout_worker, outbox_worker
from svc_api.retention.worker import retention_worker
from svc_api.signals.worker import renewal_worker, signal_worker
from svc_api.strategies.worker import GenerationWorker
from svc_api.trends.refresh import start_for

REGISTRY = Registry()
REGISTRY.register("market_feed", feed_worker)
REGISTRY.register("strategy_generation", GenerationWorker)
REGISTRY.register("backtest_runner", RunnerWorker)
REGISTRY.register("trend_refresh", start_for)
REGISTRY.register("idempotency_leases", LeaseWorker)
REGISTRY.register("signals", signal_worker)
REGISTRY.register("marketplace_renewals", renewal_worker)
REGISTRY.register("notification_fanout", fanout_worker)
REGISTRY.register("notification_outbox", outbox_worker)
REGISTRY.register("messenger_bot", bot_worker)
REGISTRY.register("community_purge", purge_worker)
REGISTRY.register("exchange_reconciler", reconciler_worker)
REGISTRY.register("edu_payment_callbacks", payment_callback_worker)
REGISTRY.register("edu_payouts", payout_worker)
REGISTRY.register("edu_uploads", upload_worker)
REGISTRY.register("retention", retention_worker)
