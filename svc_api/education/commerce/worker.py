"""The payment provider's callback retries, as a registered worker.

Example:
    >>> from svc_api.settings import Settings
    >>> from svc_api.core.services import Services
    >>> settings = Settings(database_url="sqlite://", secret_key=b"k" * 32, edu_payment_poll_seconds=0)
    >>> payment_callback_worker(Services(settings)) is None
    True
"""

from __future__ import annotations

from typing import Any

from svc_api.core.workers import Periodic
from svc_api.education.commerce import service as commerce
from svc_api.education.commerce.provider import provider_for


def payment_callback_worker(services: Any) -> Periodic | None:
    """Deliver due provider callbacks every ``EDU_PAYMENT_POLL_SECONDS`` (None when 0)."""
    every = float(services.settings.edu_payment_poll_seconds)
    if every <= 0:
        return None
    provider = provider_for(services.settings)
    return Periodic(
        "edu_payment_callbacks",
        every,
        lambda: commerce.deliver_due(services.store, provider, now=services.clock.now()),
    )
