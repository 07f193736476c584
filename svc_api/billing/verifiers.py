"""Who confirms an in-app purchase, server-side (``IAP_VERIFIER``):

- ``sandbox`` (embedded default): a receipt ``sandbox:<transaction_id>:<product_id>`` is a purchase;
- ``apple``: the App Store Server API, ``GET {APPLE_API_URL}/inApps/v1/transactions/{transaction_id}``
  with ``Authorization: Bearer {APPLE_API_TOKEN}``; the reply's ``signedTransactionInfo`` is a JWS
  whose payload names ``transactionId`` and ``productId`` (its certificate chain is not checked here:
  the TLS connection to Apple is what is trusted; documented);
- ``google``: the Google Play Developer API, ``GET {GOOGLE_API_URL}/androidpublisher/v3/applications/
  {GOOGLE_PACKAGE}/purchases/subscriptionsv2/tokens/{receipt}`` with ``Authorization: Bearer
  {GOOGLE_API_TOKEN}``: an active or cancelled-but-paid subscription whose line items include the
  product.

A store that cannot be reached is a 503 and nothing is granted.

Example:
    >>> SandboxVerifier().verify("ios", "svc_pro_monthly", "t1", "sandbox:t1:svc_pro_monthly")
    True
"""

from __future__ import annotations

import base64
import json
from typing import Any

import httpx

from svc_api.core.errors import ApiError

PAID_STATES = {
    "SUBSCRIPTION_STATE_ACTIVE",
    "SUBSCRIPTION_STATE_IN_GRACE_PERIOD",
    "SUBSCRIPTION_STATE_CANCELED",
}


def _unavailable(store: str) -> ApiError:
    detail = {"message": f"the {store} could not confirm the purchase now; nothing was granted"}
    return ApiError(503, "service_unavailable", reason="store_unavailable", retry_after=30, extra=detail)


class SandboxVerifier:
    """The embedded verifier."""

    name = "sandbox"

    def verify(self, platform: str, product_id: str, transaction_id: str, receipt: str) -> bool:
        """Whether the receipt names this transaction and product."""
        return receipt == f"sandbox:{transaction_id}:{product_id}"


class _Http:
    def __init__(self, base_url: str, token: str, store: str, timeout: float = 10.0) -> None:
        self.base_url, self.token, self.store, self.timeout = base_url.rstrip("/"), token, store, timeout

    def get(self, path: str) -> dict[str, Any] | None:
        """The JSON at ``path``; None on 404 (no such purchase); 503 when the store gives no answer."""
        try:
            reply = httpx.get(
                f"{self.base_url}{path}",
                headers={"Authorization": f"Bearer {self.token}"},
                timeout=self.timeout,
            )
        except httpx.HTTPError:
            raise _unavailable(self.store) from None
        if reply.status_code in (400, 404):
            return None
        if reply.status_code != 200:
            raise _unavailable(self.store)
        try:
            body = reply.json()
        except ValueError:
            raise _unavailable(self.store) from None
        return body if isinstance(body, dict) else None


class AppleVerifier:
    """The App Store Server API (see the module docstring)."""

    name = "apple"

    def __init__(self, base_url: str, token: str) -> None:
        self.http = _Http(base_url, token, "App Store")

    def verify(self, platform: str, product_id: str, transaction_id: str, receipt: str) -> bool:
        """Whether Apple holds this transaction of this product (and it was not revoked)."""
        if platform != "ios":
            return False
        body = self.http.get(f"/inApps/v1/transactions/{transaction_id}")
        signed = (body or {}).get("signedTransactionInfo")
        if not isinstance(signed, str) or signed.count(".") != 2:
            return False
        part = signed.split(".")[1]
        try:
            payload = json.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)))
        except ValueError:
            return False
        return (
            payload.get("transactionId") == transaction_id
            and payload.get("productId") == product_id
            and not payload.get("revocationDate")
        )


class GoogleVerifier:
    """The Google Play Developer API (see the module docstring)."""

    name = "google"

    def __init__(self, base_url: str, token: str, package: str) -> None:
        self.http, self.package = _Http(base_url, token, "Google Play store"), package

    def verify(self, platform: str, product_id: str, transaction_id: str, receipt: str) -> bool:
        """Whether Google holds a paid subscription of this product under the purchase token."""
        if platform != "android":
            return False
        path = f"/androidpublisher/v3/applications/{self.package}/purchases/subscriptionsv2/tokens/{receipt}"
        body = self.http.get(path) or {}
        products = {item.get("productId") for item in body.get("lineItems", []) if isinstance(item, dict)}
        return body.get("subscriptionState") in PAID_STATES and product_id in products


def verifier_for(settings: Any, platform: str) -> Any:
    """The verifier of ``platform`` under ``IAP_VERIFIER`` (``stores``: Apple for iOS, Google for
    Android; ``sandbox``: the sandbox for both).

    Example:
        >>> from types import SimpleNamespace
        >>> verifier_for(SimpleNamespace(iap_verifier="sandbox"), "ios").name
        'sandbox'
    """
    if settings.iap_verifier == "sandbox":
        return SandboxVerifier()
    if settings.iap_verifier != "stores":
        raise ValueError(f"IAP_VERIFIER must be sandbox or stores, got {settings.iap_verifier!r}")
    if platform == "ios":
        return AppleVerifier(settings.apple_api_url, settings.apple_api_token or "")
    return GoogleVerifier(settings.google_api_url, settings.google_api_token or "", settings.google_package)
