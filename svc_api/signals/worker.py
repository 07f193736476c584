"""The signal worker and the marketplace's renewal scheduler, as registered workers.

Both are off when ``SIGNAL_POLL_SECONDS`` is 0 (tests call ``run_once`` themselves).

Example:
    >>> from types import SimpleNamespace
    >>> signal_worker(SimpleNamespace(settings=SimpleNamespace(signal_poll_seconds=0))) is None
    True
"""

from __future__ import annotations

from typing import Any

from svc_api.core.workers import Periodic
from svc_api.marketplace import service as marketplace
from svc_api.signals import service as signals


def signal_worker(services: Any) -> Periodic | None:
    """Evaluates the watched strategies every ``SIGNAL_POLL_SECONDS``."""
    every = services.settings.signal_poll_seconds
    return Periodic("signals", every, lambda: signals.run_once(services)) if every > 0 else None


def renewal_worker(services: Any) -> Periodic | None:
    """Charges the marketplace subscriptions that are due, every ``SIGNAL_POLL_SECONDS``."""
    every, fee = services.settings.signal_poll_seconds, services.settings.marketplace_fee_pct

    def renew() -> int:
        return marketplace.renew_due(services.store, now=services.clock.now(), fee_pct=fee)

    return Periodic("marketplace_renewals", every, renew) if every > 0 else None
