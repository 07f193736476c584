"""The request and reply models of the credits operation (``/user`` ``credits_history``).

Example:
    >>> CreditsHistory.model_validate({"limit": "10"}).limit
    10
"""

from __future__ import annotations

from svc_api.core.contract import Fields, Shape
from svc_api.core.params import AsSent, Limit, UserPage
from svc_api.credits.service import Action, EntryType


class CreditsHistory(Fields):
    """``credits_history``: the caller's ledger, newest first."""

    limit: Limit(50, 1, 100)
    cursor: AsSent({"type": ["string", "null"], "description": "The previous page's cursor."})


class CreditTransaction(Shape):
    """One ledger entry."""

    transaction_id: str
    type: EntryType
    amount: float
    action: Action
    description: str
    timestamp: int
    """Unix seconds."""


class CreditsHistoryPage(UserPage):
    """A page of the caller's ledger, newest first."""

    transactions: list[CreditTransaction]
