"""Login budgets: guessing a password is slowed per account, and one client's failures do not lock
out the other people behind its address.

- per account (the e-mail as given, case-folded): 10 failed logins in a moving 15 minutes; past
  that every login of that e-mail is a 429 until the oldest failure leaves the window, a right
  password included (otherwise the budget would not stop a guesser who finds it);
- per client IP: :data:`IP_ATTEMPTS` login attempts a minute, right or wrong, far more than one
  person needs (a few typos) and room for an office or a carrier NAT; it bounds the
  password-hashing work one address can ask for. The rate limiter counts it, instead of the
  guest's general 20 a minute that one client behind a shared address used to exhaust for everyone
  there (``Operation.per_ip_limit``), so the ``X-RateLimit-*`` headers of a login tell this budget.

``RATE_LIMIT_SCALE`` scales both; the counters live where the rate limiter's do (memory, or Redis
under ``RATE_LIMIT_PREFIX``), and a Redis that cannot be reached answers 503, never unlimited
guessing.

Example:
    >>> from svc_api.settings import Settings
    >>> throttle = LoginThrottle.from_settings(Settings(database_url="sqlite://", secret_key=b"k" * 32))
    >>> throttle.per_account.amount, IP_ATTEMPTS
    (10, 100)
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any, TypeVar

import limits.errors

from svc_api.core.errors import ApiError, Unauthenticated, rate_limited
from svc_api.core.ratecounters import Budget

ACCOUNT_FAILURES, ACCOUNT_WINDOW = 10, 15 * 60
IP_ATTEMPTS = 100
"""Login attempts a minute per client IP (before ``RATE_LIMIT_SCALE``), counted by the rate limiter."""
T = TypeVar("T")


def _account_key(email: object) -> str | None:
    """A digest of the e-mail (no address is kept in the limiter's storage); None when not text."""
    if not isinstance(email, str) or not email.strip():
        return None
    return hashlib.sha256(email.strip().casefold().encode("utf-8", "surrogatepass")).hexdigest()[:32]


class LoginThrottle:
    """The per-account login budget (see the module docstring; the per-IP one is the limiter's)."""

    def __init__(self, per_account: Budget, retry_after: float = 5.0) -> None:
        self.per_account = per_account
        self.retry_after = retry_after

    @classmethod
    def from_settings(cls, settings: Any) -> LoginThrottle:
        """The budgets of the service settings (scale, Redis URL and key prefix of the limiter)."""
        scale = float(getattr(settings, "rate_limit_scale", 1.0))
        where = {
            "storage_url": getattr(settings, "redis_url", None),
            "key_prefix": str(getattr(settings, "rate_limit_prefix", "svc-ratelimit")),
        }
        return cls(
            Budget("login-account", max(1, round(ACCOUNT_FAILURES * scale)), ACCOUNT_WINDOW, **where),
            retry_after=float(getattr(settings, "store_retry_after", 5)),
        )

    def attempt(self, email: object, login: Callable[[], T]) -> T:
        """Run ``login`` within the account's budget: 429 when it has none left; a wrong password
        (401) is counted against the account."""
        account = _account_key(email)
        try:
            if account is not None:
                wait = self.per_account.wait("account", account)
                if wait:
                    raise rate_limited(wait, "too many failed logins for this account; try again later")
        except limits.errors.StorageError as exc:
            raise self._unavailable() from exc
        try:
            return login()
        except Unauthenticated:
            if account is not None:
                try:
                    self.per_account.spend("account", account)
                except limits.errors.StorageError as exc:
                    raise self._unavailable() from exc
            raise

    def _unavailable(self) -> ApiError:
        return ApiError(
            503, "service_unavailable", reason="temporarily_unavailable", retry_after=self.retry_after
        )
