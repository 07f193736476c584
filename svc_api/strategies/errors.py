"""The failures of the strategies domain, each carrying its status and body (see svc_api.core.errors).

Example:
    >>> StrategyNotActive("still generating").body()
    {'error': 'strategy_not_active', 'message': 'still generating'}
"""

from __future__ import annotations

from svc_api.core.errors import Conflict, DomainError, Invalid

GENERATION_RETRY_AFTER = 5
"""Seconds a caller at the generation cap is told to wait."""


class StrategyNotActive(Conflict):
    """The strategy exists but its current version is not ``active`` (still generating, or failed)."""

    error = "strategy_not_active"


class GenerationBusy(DomainError):
    """The caller already has the maximum number of generations running (429 with Retry-After).

    Example:
        >>> busy = GenerationBusy(2, 2)
        >>> busy.status, busy.in_progress, busy.retry_after
        (429, 2, 5)
    """

    status = 429
    error = "too_many_requests"
    reason = "strategy_generation_in_progress"

    def __init__(self, in_progress: int, max_concurrent: int) -> None:
        super().__init__(
            f"{in_progress} strategy generation(s) already in progress (maximum {max_concurrent}); "
            "retry when one finishes",
            retry_after=GENERATION_RETRY_AFTER,
            extra={"in_progress": in_progress, "max_concurrent": max_concurrent},
        )
        self.in_progress = in_progress
        self.max_concurrent = max_concurrent


class DeleteUnavailable(DomainError):
    """A store needed to delete a strategy's backtests failed: nothing was deleted (503).

    Example:
        >>> DeleteUnavailable("retry shortly").status
        503
    """

    status = 503
    error = "service_unavailable"


class NotEligible(Invalid):
    """No requested coin qualifies for ``public``; ``rejected_coins`` says why for each.

    Example:
        >>> NotEligible("none", {"BTC": "no_backtest"}).body()["rejected_coins"]
        {'BTC': 'no_backtest'}
    """

    def __init__(self, message: str, rejected_coins: dict[str, str]) -> None:
        super().__init__(message, extra={"eligible_coins": [], "rejected_coins": rejected_coins})
        self.rejected_coins = rejected_coins
