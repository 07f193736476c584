"""The order reconciler (and the paper exchange's fills) as a registered worker, every
``EXCHANGE_POLL_SECONDS`` (off at 0: tests run it themselves).

Example:
    >>> from types import SimpleNamespace
    >>> reconciler_worker(SimpleNamespace(settings=SimpleNamespace(exchange_poll_seconds=0))) is None
    True
"""

from __future__ import annotations

from typing import Any

from svc_api.core.workers import Periodic
from svc_api.exchange import service as exchange


def reconciler_worker(services: Any) -> Periodic | None:
    """Settles orders of unknown outcome, follows placed ones, fills paper OCO legs."""
    every = services.settings.exchange_poll_seconds
    return (
        Periodic("exchange_reconciler", every, lambda: exchange.run_reconciler(services))
        if every > 0
        else None
    )
