"""The payout scheduler, as a registered worker: every ``EDU_PAYOUT_CHECK_SECONDS`` it checks the
date and, between the 20th and 30th of a month (UTC), runs the payouts of the month before. A run
pays each seller, period and currency at most once, so the checks after the first of a month pay only
what became payable since (a profile completed, an FX rate set).

Example:
    >>> from svc_api.settings import Settings
    >>> from svc_api.core.services import Services
    >>> settings = Settings(database_url="sqlite://", secret_key=b"k" * 32, edu_payout_check_seconds=0)
    >>> payout_worker(Services(settings)) is None
    True
"""

from __future__ import annotations

from typing import Any

from svc_api.core.workers import Periodic
from svc_api.education.payouts import figures
from svc_api.education.payouts import service as payouts


def scheduled_run(services: Any) -> dict[str, Any]:
    """The month's payout run when today is in the window; otherwise why not."""
    now = int(services.clock.now())
    low, high = payouts.WINDOW_DAYS
    if not low <= figures.day_of(now) <= high:
        return {"skipped": f"payout runs happen between the {low}th and {high}th of a month"}
    policy = payouts.Policy.from_settings(services.settings)
    return payouts.payout_run(services.store, policy, services.settings.var_dir, period=None, now=now)


def payout_worker(services: Any) -> Periodic | None:
    """Check every ``EDU_PAYOUT_CHECK_SECONDS`` (None when 0)."""
    every = float(services.settings.edu_payout_check_seconds)
    if every <= 0:
        return None
    return Periodic("edu_payouts", every, lambda: scheduled_run(services))
