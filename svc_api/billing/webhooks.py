"""The contracts of the payment webhooks: ``POST /webhooks/card`` (a signed card-store event) and
``POST /webhooks/store/{platform}`` (an app store's server notification), with their reply model.
Each reads its own raw body: the signature or the token is checked before anything is parsed.

Example:
    >>> WebhookReply.model_validate({"received": True, "outcome": "queued"}).outcome
    'queued'
"""

from __future__ import annotations

from typing import Literal

from svc_api.billing.contract import Purchase
from svc_api.core.contract import Answer, Op, Shape

_ANY_JSON = {"required": False, "content": {"application/json": {"schema": {"type": "object"}}}}


class WebhookReply(Shape):
    """What a payment webhook answers: applied, refunded or queued for an operator."""

    received: Literal[True]
    outcome: Literal["applied", "queued", "refunded"]
    purchase: Purchase | None = None
    payment_id: str | None = None
    reason: str | None = None


_ANSWERS = (
    Answer(202, "Queued for an operator.", reply=WebhookReply),
    *(Answer(status, shared="Error") for status in (400, 401, 404)),
)


CARD = Op(
    "card_webhook",
    "A card-store order event, signed.",
    WebhookReply,
    description="JSON `{event: order.paid|order.refunded, order_id, product (svc_<plan>_monthly|annual),"
    " amount_usd, currency, note, email}` with `X-Signature: sha256=<hex HMAC-SHA256 of the raw body under"
    " CARD_WEBHOOK_SECRET>`. The buyer is a `svc_id` in the note, else the account of the e-mail. Applied"
    " once per `order_id`: 200; no account found, a note naming several existing accounts, an unknown"
    " product or an amount below the list price waits for an operator (`svc admin payments`): 202. A refund"
    " takes back the days the order bought. 401 missing or wrong signature (nothing is read), 400 malformed"
    " event, 404 unknown order to refund or webhooks not configured.",
    done="Applied or refunded.",
    errors=_ANSWERS,
    tag="payments",
    parameters=({"name": "X-Signature", "in": "header", "required": False, "schema": {"type": "string"}},),
    request=_ANY_JSON,
)
STORE = Op(
    "store_webhook",
    "An app store's server notification (purchase, renewal, refund).",
    WebhookReply,
    description="`{type: PURCHASE|RENEWAL|REFUND, transaction_id, product_id, app_account_token}` with"
    " `X-Store-Token: <STORE_WEBHOOK_TOKEN>`; the app binds the buyer's `svc_id` as `app_account_token`."
    " Applied once per transaction; a refund takes back its days. 401 wrong token, 400 malformed, 404"
    " unknown store or transaction, or notifications not configured.",
    path={"platform": {"schema": {"enum": ["apple", "google"]}}},
    done="Applied or refunded.",
    errors=_ANSWERS,
    tag="payments",
    parameters=({"name": "X-Store-Token", "in": "header", "required": False, "schema": {"type": "string"}},),
    request=_ANY_JSON,
)
