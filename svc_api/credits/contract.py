"""The request and reply models of the credits operation (``/user`` ``credits_history``).

Example:
    >>> CreditsHistory.model_validate({"limit": "10"}).limit
    10
"""

from __future__ import annotations

from typing import Literal

from svc_api.core.contract import Fields, Shape
from svc_api.core.params import AsSent, Limit, UserPage


class CreditsHistory(Fields):
    """``credits_history``: the caller's ledger, newest first."""

    limit: Limit(50, 1, 100)
    cursor: AsSent({"type": ["string", "null"], "description": "The previous page's cursor."})


class CreditTransaction(Shape):
    """One ledger entry."""

    transaction_id: str
    type: Literal["adjustment", "spend", "deposit"]
    amount: float
    action: Literal[
        "deposit",
        "backtest",
        "credit_adjustment",
        "strategy_generate",
        "strategy_refund",
        "marketplace_signal",
    ]
    description: str
    timestamp: int
    """Unix seconds."""


class CreditsHistoryPage(UserPage):
    """A page of the caller's ledger, newest first."""

    transactions: list[CreditTransaction]
