"""Plans and what they allow: names, per-minute request limits, the plan in force at a time.

Example:
    >>> effective_plan("pro", license_expires_at=2000, demo_expires_at=0, now=1000)
    'pro'
    >>> RATE_LIMITS["investor"]
    240
"""

from __future__ import annotations

PLANS = ("free", "starter", "plus", "pro", "investor")
RATE_LIMITS = {"free": 30, "starter": 30, "plus": 60, "pro": 120, "investor": 240}


def effective_plan(plan: str, *, license_expires_at: int, demo_expires_at: int, now: int) -> str:
    """The plan in force at ``now``: the stored plan while its licence or demo runs, else ``free``.

    Example:
        >>> effective_plan("plus", license_expires_at=0, demo_expires_at=1500, now=1000)
        'plus'
        >>> effective_plan("pro", license_expires_at=500, demo_expires_at=0, now=1000)
        'free'
    """
    if plan != "free" and max(license_expires_at, demo_expires_at) > now:
        return plan
    return "free"
