"""The failures of the backtests domain that carry their own body (see svc_api.core.errors).

Example:
    >>> LaunchRejected("backtest_concurrency_limit", "3 running").retry_after
    10
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from svc_api.core.errors import DomainError

RETRY_AFTER = {"backtest_concurrency_limit": 10, "backtest_capacity_exceeded": 2}
"""Seconds a client is told to wait, per reason a launch is refused."""


class LaunchRejected(DomainError):
    """A launch refused for load (429 with ``Retry-After``); ``reason`` is also the ``error``.

    Example:
        >>> LaunchRejected("backtest_capacity_exceeded", "busy").body()
        {'error': 'backtest_capacity_exceeded', 'reason': 'backtest_capacity_exceeded', 'retry_after': 2, \
'message': 'busy'}
    """

    status = 429

    def __init__(self, reason: str, message: str, extra: Mapping[str, Any] | None = None) -> None:
        super().__init__(message, reason=reason, retry_after=RETRY_AFTER[reason], extra=extra)
        self.error = reason
