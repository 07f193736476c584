"""The reply models of buying: the storefront's capabilities, an order, a refund request, and the
sandbox provider's decision and callback results.

Example:
    >>> EduSandboxDecision.model_validate({"order_id": "or_1", "outcome": "paid"}).outcome
    'paid'
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from svc_api.education.contract import Money, Shape, Timestamp

_CURRENCY = "^[A-Z]{3}$"


class EduCapabilities(Shape):
    """Storefront flags, read before showing purchase UI."""

    checkout_open: bool
    """False: `POST /checkouts` answers 422 `checkout_closed`."""
    currency: Annotated[str, Field(pattern=_CURRENCY)]
    payment_providers: list[str]
    refund_window_days: Annotated[int, Field(ge=0)]
    bundles: bool
    certificates: bool


class EduOrderItem(Shape):
    """What an order buys."""

    kind: Literal["product", "bundle"]
    id: str


class EduOrder(Shape):
    """An order, as its buyer sees it."""

    order_id: str
    state: Literal["awaiting_payment", "processing", "paid", "failed", "expired", "refunded"]
    """`awaiting_payment` (the checkout page is open) -> `processing` (the buyer decided; the
    provider's callback is on its way) -> `paid` or `failed`; `awaiting_payment` -> `expired`;
    `paid` -> `refunded`. A free item is `paid` at once."""
    item: EduOrderItem
    amount: Money
    checkout_url: str | None
    """Where the buyer pays, while the order is `awaiting_payment`."""
    created_at: Timestamp
    expires_at: Timestamp
    paid_at: int | None
    refundable_until: int | None
    """End of the 15-day refund window."""
    products: list[str]
    """Products the order granted."""
    refund_request_id: str | None


class EduRefundRequest(Shape):
    """A refund request, as its buyer sees it."""

    refund_request_id: str
    order_id: str
    state: Literal["requested", "completed"]
    amount: Money
    reason: str
    created_at: Timestamp
    completed_at: int | None


class EduSandboxDecision(Shape):
    """The buyer's choice on the sandbox page."""

    order_id: str
    outcome: Literal["paid", "declined"]


class EduCallbackResult(Shape):
    """What a provider callback did."""

    order_id: str
    applied: bool
    """False when a repeated delivery changed nothing."""
