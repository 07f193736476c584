"""The payment channels' doors: the card store's signed webhook, the app stores' server
notifications, and in-app purchases verified server-side.

- ``POST /webhooks/card``: JSON ``{event: order.paid|order.refunded, order_id, product, amount_usd,
  currency, note, email}`` signed with ``X-Signature: sha256=<hex HMAC-SHA256 of the raw body>`` under
  ``CARD_WEBHOOK_SECRET``; a missing or wrong signature is a 401 and nothing is read. The ``svc_id``
  comes from the order note, else the order e-mail.
- ``POST /webhooks/store/{apple|google}``: ``{type: PURCHASE|RENEWAL|REFUND, transaction_id,
  product_id, app_account_token}`` with ``X-Store-Token: <STORE_WEBHOOK_TOKEN>``; the app binds the
  buyer's ``svc_id`` as ``app_account_token``.
- ``/user`` ``iap_verify``: ``{platform: ios|android, product_id, transaction_id, receipt}`` for the
  caller, checked by the verifier ``IAP_VERIFIER`` names (see :mod:`svc_api.billing.verifiers`).

Example:
    >>> signature(b"{}", "s3cret")[:7]
    'sha256='
"""

from __future__ import annotations

import hashlib
import hmac
import json
from decimal import Decimal, InvalidOperation
from typing import Any

from svc_api.billing import payments
from svc_api.billing.verifiers import verifier_for
from svc_api.core.errors import ApiError, Conflict, Invalid, NotFound
from svc_api.core.fields import required_text
from svc_api.core.store import Store

STORES = {"apple": "app_store", "google": "google_play"}
PLATFORMS = {"ios": "app_store", "android": "google_play"}


def signature(body: bytes, secret: str) -> str:
    """The ``X-Signature`` value of ``body`` under ``secret``."""
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def _json(body: bytes) -> dict[str, Any]:
    try:
        data = json.loads(body)
    except ValueError:
        raise Invalid("the body must be a JSON object") from None
    if not isinstance(data, dict):
        raise Invalid("the body must be a JSON object")
    return data


def _amount(value: object) -> Decimal:
    try:
        amount = Decimal(str(value))
    except InvalidOperation:
        amount = Decimal("NaN")
    if not amount.is_finite() or amount < 0:
        raise Invalid("amount_usd must be a number >= 0")
    return amount


def card_webhook(
    store: Store, secret: str | None, body: bytes, signed: str | None, *, now: int
) -> dict[str, Any]:
    """Handle one card-store event (see the module docstring)."""
    if not secret:
        raise NotFound("card webhooks are not configured on this server")
    if not signed or not hmac.compare_digest(signed, signature(body, secret)):
        raise ApiError(401, "invalid_signature", extra={"message": "X-Signature does not match the body"})
    event = _json(body)
    kind = event.get("event")
    order_id = required_text(event.get("order_id"), "order_id", hi=64)
    with store.write() as conn:
        if kind == "order.refunded":
            refunded = payments.refund(conn, source="card", external_id=order_id, now=now)
            return {"received": True, "outcome": "refunded", "purchase": refunded}
        if kind != "order.paid":
            raise Invalid("event must be order.paid or order.refunded")
        note, email = str(event.get("note") or ""), str(event.get("email") or "")
        svc_id = payments.buyer(conn, note, email)
        result = payments.receive(
            conn,
            source="card",
            external_id=order_id,
            svc_id=svc_id,
            product=str(event.get("product") or ""),
            amount=_amount(event.get("amount_usd")),
            currency=str(event.get("currency") or "USD"),
            now=now,
            email=email,
            note=note,
        )
    return {"received": True, **result}


def store_notification(
    store: Store, token: str | None, expected: str | None, platform: str, body: bytes, *, now: int
) -> dict[str, Any]:
    """Handle one app-store server notification: a purchase or renewal applies, a refund takes back."""
    if platform not in STORES:
        raise NotFound(f"no store {platform!r}")
    if not expected:
        raise NotFound("store notifications are not configured on this server")
    if not token or not hmac.compare_digest(token, expected):
        raise ApiError(401, "invalid_signature", extra={"message": "X-Store-Token is wrong"})
    event = _json(body)
    source = STORES[platform]
    transaction = required_text(event.get("transaction_id"), "transaction_id", hi=64)
    kind = event.get("type")
    with store.write() as conn:
        if kind == "REFUND":
            refunded = payments.refund(conn, source=source, external_id=transaction, now=now)
            return {"received": True, "outcome": "refunded", "purchase": refunded}
        if kind not in ("PURCHASE", "RENEWAL"):
            raise Invalid("type must be PURCHASE, RENEWAL or REFUND")
        product = str(event.get("product_id") or "")
        plan_period = payments.product_of(product)
        svc_id = payments.buyer(conn, str(event.get("app_account_token") or ""))
        price = payments.PRICES[plan_period[0]][plan_period[1]] if plan_period else Decimal(0)
        result = payments.receive(
            conn,
            source=source,
            external_id=transaction,
            svc_id=svc_id,
            product=product,
            amount=price,
            currency="USD",
            now=now,
        )
    return {"received": True, **result}


def iap_platform(value: object, name: str = "platform") -> str:
    """The store of an in-app purchase: ``ios`` or ``android``; else 400.

    Example:
        >>> iap_platform(["ios"])
        Traceback (most recent call last):
        ...
        svc_api.core.errors.Invalid: platform must be ios or android
    """
    # A list or an object is unhashable: the type is checked before the table is asked.
    if not isinstance(value, str) or value not in PLATFORMS:
        raise Invalid(f"{name} must be ios or android")
    return value


def iap_product(value: object, name: str = "product_id") -> str:
    """A plan's product ID, ``svc_<plan>_monthly`` or ``svc_<plan>_annual``; else 400.

    Example:
        >>> iap_product("svc_gold_annual")
        Traceback (most recent call last):
        ...
        svc_api.core.errors.Invalid: product_id must be svc_<plan>_monthly or svc_<plan>_annual
    """
    product = required_text(value, name, hi=64)
    if payments.product_of(product) is None:
        raise Invalid(f"{name} must be svc_<plan>_monthly or svc_<plan>_annual")
    return product


def iap_verify(
    store: Store,
    settings: Any,
    svc_id: str,
    platform: str,
    product: str,
    transaction: str,
    receipt: str,
    *,
    now: int,
) -> dict[str, Any]:
    """An in-app purchase of the caller (its fields checked by the request model: the platform by
    :func:`iap_platform`, the product by :func:`iap_product`), verified with the store, applied
    once per transaction.

    A transaction already applied to another account is a 409 ``transaction_taken`` that says
    nothing of that account: replaying the purchase record would hand its ``svc_id``, plan and
    expiry to whoever knows the transaction id.
    """
    plan_period = payments.product_of(product)
    assert plan_period is not None  # iap_product checked it
    if not verifier_for(settings, platform).verify(platform, product, transaction, receipt):
        raise Invalid("the store does not confirm this purchase")
    price = payments.PRICES[plan_period[0]][plan_period[1]]
    with store.write() as conn:
        result = payments.receive(
            conn,
            source=PLATFORMS[platform],
            external_id=transaction,
            svc_id=svc_id,
            product=product,
            amount=price,
            currency="USD",
            now=now,
        )
        if result["purchase"]["svc_id"] != svc_id:
            raise Conflict(
                "this transaction_id is already used: send the receipt of a purchase of your own",
                code="transaction_taken",
            )
    return result["purchase"]
