"""The request and reply models of the referral operations (``/user``).

Example:
    >>> SetInviter.model_validate({"inviter_id": " ab12cd "}).inviter_id
    'AB12CD'
"""

from __future__ import annotations

from decimal import Decimal
from typing import Annotated, Literal

from pydantic import Field

from svc_api.core.contract import Check, ErrorDoc, Fields, Shape
from svc_api.referrals.inviters import INVITER_WINDOW_DAYS, inviter_id_of
from svc_api.referrals.service import REDEEM_TYPES, redeem_amount, redeem_type_of

Plan = Literal["free", "starter", "plus", "pro", "investor"]


def _inviter(value: object, name: str) -> str:
    return inviter_id_of(value)


def _amount(value: object, name: str) -> Decimal:
    return redeem_amount(value)


class SetInviter(Fields):
    """``set_inviter``: name the account that invited the caller."""

    inviter_id: Annotated[
        str,
        Check(
            _inviter,
            {
                "type": "string",
                "pattern": "^\\s*[A-Za-z0-9]{6}\\s*$",
                "description": "The inviter's account ID.",
            },
            required=True,
        ),
    ]


class ReferralRedeem(Fields):
    """``referral_redeem``: turn available commission into credits."""

    redeem_type: Annotated[
        str, Check(redeem_type_of, {"type": "string", "enum": list(REDEEM_TYPES)}, required=True)
    ]
    amount: Annotated[
        Decimal,
        Check(
            _amount,
            {
                "type": "number",
                "minimum": 1,
                "maximum": 1_000_000_000,
                "description": "USDT (at most 4 decimals), at most the available commission.",
            },
            required=True,
        ),
    ]


class InviterSet(Shape):
    """The inviter is named (the reply also carries the top-level ``timestamp``)."""

    inviter_id: Annotated[str, Field(pattern="^[A-Z0-9]{6}$")]
    message: str


class Referral(Shape):
    """An account that named the caller as inviter."""

    svc_id_masked: Annotated[str, Field(pattern="^[A-Z0-9]{2}\\*{2}[A-Z0-9]{2}$")]
    """First two and last two characters visible (``AB**CD``)."""
    joined_at: int
    """Unix seconds."""
    plan: Plan
    """The plan in force."""


class ReferralList(Shape):
    """The caller's referrals."""

    referrals: list[Referral]
    """Accounts that named the caller as inviter, newest first."""
    count: Annotated[int, Field(ge=0)]


class ReferralRedeemed(Shape):
    """The commission is turned into credits."""

    redeem_type: Literal["credits"]
    amount: Annotated[float, Field(ge=1.0)]
    status: Literal["completed"]
    credits_added: Annotated[float, Field(ge=1.0)]


SET_INVITER_ERRORS = (
    ErrorDoc(400, "invalid_request", "not 6 letters or digits, or the caller's own ID"),
    ErrorDoc(403, "forbidden", f"more than {INVITER_WINDOW_DAYS} days after the caller registered"),
    ErrorDoc(404, "not_found", "no account has this ID"),
    ErrorDoc(409, "conflict", "an inviter is already set"),
)
REDEEM_ERRORS = (
    ErrorDoc(
        400,
        "invalid_request",
        "not `credits`, below 1 USDT, more than 4 decimals or above the available commission",
    ),
)
