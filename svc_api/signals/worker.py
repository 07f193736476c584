"""The signal worker and the marketplace's renewal scheduler, as registered workers.

Both are off when ``SIGNAL_POLL_SECONDS`` is 0 (tests call ``run_once`` themselves).

Example:
    >>> from types import SimpleNamespace
    >>> signal_worker(SimpleNamespace(settings=SimpleNamespace(signal_poll_seconds=0))) is None
    True
"""

from __future__ import annotations

import contextlib
from typing import Any

from svc_api.core.store import StoreUnavailable
from svc_api.core.workers import Periodic
from svc_api.marketplace import service as marketplace
from svc_api.signals import partitions
from svc_api.signals import service as signals


class SignalWorker(Periodic):
    """The periodic signal pass; a clean stop gives this process's coins back to the other workers
    at once (:mod:`svc_api.signals.partitions`) instead of after its lease."""

    def __init__(self, services: Any, every: float) -> None:
        super().__init__("signals", every, lambda: signals.run_once(services))
        self.services = services

    def stop(self) -> None:
        """Stop after the current pass, then release this worker's lease."""
        super().stop()
        with contextlib.suppress(StoreUnavailable):  # else the lease runs out by itself
            partitions.release(self.services)


def signal_worker(services: Any) -> Periodic | None:
    """Evaluates the watched strategies every ``SIGNAL_POLL_SECONDS``."""
    every = services.settings.signal_poll_seconds
    return SignalWorker(services, every) if every > 0 else None


def renewal_worker(services: Any) -> Periodic | None:
    """Charges the marketplace subscriptions that are due, every ``SIGNAL_POLL_SECONDS``."""
    every, fee = services.settings.signal_poll_seconds, services.settings.marketplace_fee_pct

    def renew() -> int:
        return marketplace.renew_due(services.store, now=services.clock.now(), fee_pct=fee)

    return Periodic("marketplace_renewals", every, renew) if every > 0 else None
