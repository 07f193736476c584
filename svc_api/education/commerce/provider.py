"""The payment provider behind checkouts: one interface, and the sandbox, the embedded default, that
behaves like a hosted checkout.

The sandbox serves its own checkout page (``GET /education/v1/sandbox/checkout/{token}``) where the
buyer approves or declines. Either way it sends the service a callback: a JSON event signed with
HMAC-SHA256 (header ``X-Sandbox-Signature``), kept in an outbox and retried with back-off until the
service accepts it, exactly as a hosted provider retries its webhooks. A refund through the sandbox
always succeeds.

Example:
    >>> sandbox = SandboxProvider(b"k" * 32)
    >>> payload = sandbox.event("ev_1", "or_1", "paid", 1999, "USD", at=1_700_000_000)
    >>> sandbox.verify(payload, sandbox.sign(payload)), sandbox.verify(payload, "00")
    (True, False)
"""

from __future__ import annotations

import hashlib
import hmac
import json
from typing import Any, Protocol

OUTCOMES = ("paid", "declined")


class ProviderError(Exception):
    """The provider refused or could not be reached (the operation may be retried)."""


class PaymentProvider(Protocol):
    """What the service needs of a payment provider."""

    name: str

    def checkout_url(self, token: str) -> str:
        """Where the buyer pays for the checkout session ``token``."""
        ...

    def sign(self, payload: bytes) -> str:
        """The signature the provider puts on a callback."""
        ...

    def verify(self, payload: bytes, signature: str | None) -> bool:
        """Whether a callback really comes from the provider."""
        ...

    def refund(self, order_id: str, amount_minor: int, currency: str) -> str:
        """Refund a paid order in full; the provider's refund reference."""
        ...


class SandboxProvider:
    """The embedded hosted checkout (see the module docstring)."""

    name = "sandbox"

    def __init__(self, secret: bytes) -> None:
        # A key of its own, derived from the service secret: no other HMAC of the service verifies here.
        self._key = hmac.new(secret, b"edu-sandbox-provider", hashlib.sha256).digest()

    def checkout_url(self, token: str) -> str:
        return f"/education/v1/sandbox/checkout/{token}"

    def sign(self, payload: bytes) -> str:
        return hmac.new(self._key, payload, hashlib.sha256).hexdigest()

    def verify(self, payload: bytes, signature: str | None) -> bool:
        return signature is not None and hmac.compare_digest(self.sign(payload), signature)

    def refund(self, order_id: str, amount_minor: int, currency: str) -> str:
        return f"sandbox-refund-{order_id}"

    @staticmethod
    def event(
        event_id: str, order_id: str, outcome: str, amount_minor: int, currency: str, *, at: int
    ) -> bytes:
        """The callback body of one payment outcome."""
        body: dict[str, Any] = {
            "event_id": event_id,
            "order_id": order_id,
            "outcome": outcome,
            "amount": {"amount_minor": amount_minor, "currency": currency},
            "at": at,
        }
        return json.dumps(body, separators=(",", ":"), sort_keys=True).encode()


def provider_for(settings: Any) -> PaymentProvider:
    """The provider the settings name (only the sandbox ships today).

    Example:
        >>> from svc_api.settings import Settings
        >>> provider_for(Settings(database_url="sqlite://", secret_key=b"k" * 32)).name
        'sandbox'
    """
    return SandboxProvider(bytes(settings.secret_key))
