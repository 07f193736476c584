"""The request and reply models of the account operations (``/user``).

Example:
    >>> Register.model_validate({"email": "Ana@Example.com", "password": "password1"}).email
    'ana@example.com'
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, Literal

from pydantic import Field

from svc_api.accounts.contacts import check_switches
from svc_api.core.contract import Check, ErrorDoc, Fields, Shape
from svc_api.core.fields import text
from svc_api.core.params import AsSent, Email, Limit, Platform, UserPage

SvcId = Annotated[str, Field(pattern="^[A-Z0-9]{6}$", description="An account's ID.")]
UnixSeconds = Annotated[int, Field(description="Unix seconds.")]


def _password(value: object, name: str) -> str:
    return text(value, name, lo=8, hi=256) or ""


Password = Annotated[
    str, Check(_password, {"type": "string", "minLength": 8, "maxLength": 256}, required=True)
]
ReferralCode = AsSent({"type": ["string", "null"], "description": "An inviter's referral code."})


class Register(Fields):
    """``register``: open an account and its first session."""

    platform: Platform
    email: Email
    password: Password
    referral_code: ReferralCode


class Login(Fields):
    """``login``: open a session (the login budgets answer 429 first)."""

    platform: Platform
    email: AsSent({"type": "string", "format": "email"}, required=True)
    """Checked with the password (one message for a wrong pair)."""
    password: AsSent({"type": "string"}, required=True)


class LoginHistory(Fields):
    """``login_history``: the caller's logins, newest first."""

    limit: Limit(25, 1, 100)
    cursor: AsSent({"type": ["string", "null"], "description": "The previous page's cursor."})


def _switches(value: Mapping[str, Any]) -> dict[str, Any]:
    changes = {k: v for k, v in value.items() if k != "idempotency_key"}
    check_switches(changes)
    return changes


class NotificationChanges(Fields):
    """``notification_settings``: read the switches (no fields) or change any of them."""

    app: bool | None = None
    announcement: bool | None = None
    account: bool | None = None
    bot: bool | None = None
    messenger: bool | None = None
    mail: bool | None = None

    @classmethod
    def prepare(cls, data: Mapping[str, Any]) -> Any:
        """Every sent field but ``idempotency_key`` must be a channel switch with a boolean."""
        return _switches(data)

    def changes(self) -> dict[str, bool]:
        """The switches sent, by name.

        Example:
            >>> NotificationChanges.model_validate({"mail": False}).changes()
            {'mail': False}
        """
        return self.model_dump(exclude_none=True)


IdTokenField = AsSent(
    {"type": "string", "description": "An ID token of OIDC_ISSUER for OIDC_AUDIENCE."}, required=True
)
Nonce = AsSent({"type": ["string", "null"], "description": "The nonce the token must carry, when sent."})


class IdentityLogin(Fields):
    """``identity_login``: an OIDC ID token of the configured issuer."""

    platform: Platform
    id_token: IdTokenField
    nonce: Nonce


class IdentityLink(Fields):
    """``identity_link``: an OIDC ID token of the configured issuer."""

    id_token: IdTokenField
    nonce: Nonce


class SessionGrant(Shape):
    """A new session."""

    svc_id: SvcId
    session_token: str
    """Send as ``Authorization: Bearer <session_token>``."""
    expires_at: UnixSeconds


class LoggedOut(Shape):
    """The session is ended."""

    logged_out: Literal[True]


class Connections(Shape):
    """What the account has linked."""

    exchange: bool
    messenger: bool
    identity_provider: bool


class Commission(Shape):
    """A referral commission."""

    commission_id: str
    amount_usdt: float
    status: Literal["recorded", "reversed"]


class ReferralSummary(Shape):
    """The caller's referral code and commissions."""

    code: str
    commissions: list[Commission]
    """Newest first; a ``reversed`` commission (its purchase was refunded) stays listed."""
    total_commission_usdt: float
    """Sum of the ``recorded`` commissions (reversed ones do not count)."""
    available_commission_usdt: float
    """``total_commission_usdt`` minus what was redeemed; what ``referral_redeem`` can take."""


class StrategySummary(Shape):
    """One of the caller's strategies, in brief."""

    name: str
    status: str
    candle_count: int
    market_type: str
    leverage: int


class NotificationSettings(Shape):
    """The delivery channel switches."""

    app: bool
    announcement: bool
    account: bool
    bot: bool
    messenger: bool
    mail: bool


class Account(Shape):
    """The caller's account."""

    svc_id: SvcId
    plan: Literal["free", "starter", "plus", "pro", "investor"]
    svc_credits: Annotated[float, Field(ge=0)]
    license_expires_at: UnixSeconds
    demo_expires_at: UnixSeconds
    active_own_strategies: Annotated[int, Field(ge=0)]
    community_role: str
    connections: Connections
    notification_settings: NotificationSettings
    referral: ReferralSummary
    strategies: dict[str, StrategySummary]


class LoginRecord(Shape):
    """One login."""

    login_id: str
    ip_address: str
    platform: str
    login_at: UnixSeconds


class LoginHistoryPage(UserPage):
    """A page of logins, newest first."""

    logins: list[LoginRecord]


class IdentityLinked(Shape):
    """The identity is linked to the caller's account."""

    identity_provider: str
    linked: Literal[True]


SIGN_UP_ERRORS = (
    ErrorDoc(
        400,
        "invalid_request",
        "a malformed e-mail, a password not 8-256 characters, an unknown referral code",
    ),
    ErrorDoc(409, "conflict", "an account with this e-mail exists"),
)
LOGIN_ERRORS = (
    ErrorDoc(401, "invalid_login", "a wrong e-mail or password (no `code`: it signs no one out)"),
    ErrorDoc(
        429,
        "too_many_requests",
        "past 10 failed logins of the account in 15 minutes, or 100 attempts of the IP a minute",
    ),
)
IDENTITY_ERRORS = (
    ErrorDoc(401, "invalid_id_token", "the ID token is not valid (signature, issuer, audience, time, nonce)"),
    ErrorDoc(404, "not_found", "login by identity provider is not configured"),
    ErrorDoc(409, "conflict", "another identity is stored for the account"),
    ErrorDoc(503, "service_unavailable", "the issuer cannot be reached"),
)
