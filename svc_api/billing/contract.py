"""The request and reply models of ``/user`` ``iap_verify`` (an in-app purchase).

Example:
    >>> IapVerify.model_validate(
    ...     {"platform": "ios", "product_id": "svc_pro_monthly", "transaction_id": "t1", "receipt": "r"}
    ... ).product_id
    'svc_pro_monthly'
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from svc_api.billing.channels import PLATFORMS, iap_platform, iap_product
from svc_api.core.contract import Check, ErrorDoc, Fields, Shape
from svc_api.core.fields import required_text


def _platform(value: object, name: str) -> str:
    return iap_platform(value, name)


def _product(value: object, name: str) -> str:
    return iap_product(value, name)


def _required(value: object, name: str, hi: int) -> str:
    return required_text(value, name, hi=hi)


class IapVerify(Fields):
    """``iap_verify``: a purchase of the caller in an app store, with the store's receipt."""

    platform: Annotated[str, Check(_platform, {"type": "string", "enum": list(PLATFORMS)}, required=True)]
    product_id: Annotated[
        str,
        Check(
            _product,
            {"type": "string", "pattern": "^svc_[a-z]+_(monthly|annual)$", "maxLength": 64},
            required=True,
        ),
    ]
    """``svc_<plan>_monthly`` or ``svc_<plan>_annual``."""
    transaction_id: Annotated[
        str, Check(_required, {"type": "string", "minLength": 1, "maxLength": 64}, required=True, args=(64,))
    ]
    """The store's transaction ID."""
    receipt: Annotated[
        str,
        Check(
            _required, {"type": "string", "minLength": 1, "maxLength": 20000}, required=True, args=(20000,)
        ),
    ]
    """The store's receipt, as the app received it."""


class Purchase(Shape):
    """A purchase applied to the caller's account."""

    source: str
    purchase_id: str
    svc_id: str
    plan: Literal["starter", "plus", "pro", "investor"]
    period: Literal["monthly", "annual"]
    days: int
    amount_usdt: float
    status: Literal["applied", "refunded"]
    license_expires_at: int
    """Unix seconds."""
    commission: dict[str, Any] | None = None
    replayed: bool


IAP_ERRORS = (
    ErrorDoc(
        400,
        "invalid_request",
        "a field of the wrong type or size, an unknown product, or the store does not confirm the purchase",
    ),
    ErrorDoc(
        409,
        "conflict",
        "the `transaction_id` is already applied to another account",
        code="transaction_taken",
    ),
)
