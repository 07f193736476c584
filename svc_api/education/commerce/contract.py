"""The contracts of buying: the checkout and refund bodies (each field's format rule, in the order
they are checked) and the routes' :class:`~svc_api.education.contract.Op`; the reply models are in
:mod:`~svc_api.education.commerce.replies`. Whether the item is on sale, the order is the caller's
or refundable needs the store and is checked by the service.

Example:
    >>> EduCheckoutRequest.parse({"bundle_id": "bn_1"}).item()
    ('bundle', 'bn_1')
    >>> EduCheckoutRequest.parse({"product_id": "pr_1", "bundle_id": "bn_1"})
    Traceback (most recent call last):
    ...
    svc_api.core.errors.Invalid: send exactly one of product_id and bundle_id
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from pydantic import ConfigDict

from svc_api.core.contract import Sent
from svc_api.core.errors import Invalid
from svc_api.education.commerce import replies
from svc_api.education.contract import Annotated, Answer, Check, EduBody, Op
from svc_api.education.fields import text_field
from svc_api.education.money import parse_money

MAX_ID = 24
_CLOSED = {"additionalProperties": False}


class _Listed(EduBody):
    """A body whose unknown-field message lists ``takes`` (the order clients have always read),
    while its rules run in the order they are declared (the order the checks always ran); the
    fields named in ``sees`` get the whole request (:class:`~svc_api.core.contract.Sent`)."""

    takes: ClassVar[tuple[str, ...]] = ()
    sees: ClassVar[tuple[str, ...]] = ()

    @classmethod
    def prepare(cls, data: Mapping[str, Any]) -> Any:
        unknown = sorted(set(data) - set(cls.takes))
        if unknown:
            raise Invalid(f"unknown field {unknown[0]!r}; this operation takes {', '.join(cls.takes)}")
        return super(EduBody, cls).prepare(data) | {n: Sent(data.get(n), data) for n in cls.sees}


def _price(value: object, name: str) -> tuple[int, str] | None:
    return None if value is None else parse_money(value, name)


def _item_id(sent: Sent, name: str) -> str | None:
    request = sent.request
    if name == "product_id" and (request.get("product_id") is None) == (request.get("bundle_id") is None):
        raise Invalid("send exactly one of product_id and bundle_id")
    value = sent.value
    if value is not None and (not isinstance(value, str) or not value or len(value) > MAX_ID):
        raise Invalid("product_id or bundle_id must be an id string")
    return value


_ID = {"type": "string", "minLength": 1, "maxLength": MAX_ID}


class EduCheckoutRequest(_Listed):
    """Exactly one of `product_id` and `bundle_id`."""

    model_config = ConfigDict(
        json_schema_extra={**_CLOSED, "oneOf": [{"required": ["product_id"]}, {"required": ["bundle_id"]}]}
    )
    takes = ("product_id", "bundle_id", "expected_price")
    sees = ("product_id", "bundle_id")

    expected_price: Annotated[
        tuple[int, str] | None,
        Check(
            _price,
            {
                # wrapped: pydantic would resolve a bare $ref among this model's own definitions
                "allOf": [{"$ref": "#/components/schemas/Money"}],
                "description": "The price the buyer saw; another current price is a 422 `price_changed`.",
            },
        ),
    ]
    product_id: Annotated[str | None, Check(_item_id, _ID)]
    bundle_id: Annotated[str | None, Check(_item_id, _ID)]

    def item(self) -> tuple[str, str]:
        """``(kind, id)`` of what is bought: ``product`` or ``bundle``."""
        if self.product_id is not None:
            return "product", self.product_id
        return "bundle", str(self.bundle_id)


def _reason(value: object, name: str) -> str:
    return text_field({name: value}, name, lo=0, hi=500, required=False) or ""


class EduRefundCreate(EduBody):
    """Why the buyer asks for the refund (optional)."""

    model_config = ConfigDict(json_schema_extra=_CLOSED)

    reason: Annotated[str, Check(_reason, {"type": "string", "maxLength": 500})]


class EduPaymentEvent(EduBody):
    """The provider's event, read as the raw bytes it signed (see the route's description)."""


_TOKEN_REJECTED = Answer(401, shared="EduTokenRejected")
_UNAUTHORIZED = Answer(401, shared="EduUnauthorized")
_NONE_TAKEN = Answer(
    400,
    "`invalid_request`: a query parameter (this route takes none), or a NUL character in the path or"
    " the query (refused on every store).",
)
_KEYED = "`idempotency_key_required`, `invalid_idempotency_key`, `invalid_json`"
_KEY_CLASH = (
    "`idempotency_key_reused` (another request under this key); `request_in_progress` (the first"
    " request under this key is still running)"
)
_ORDER = {"order_id": "EduOrderId"}
_SESSION_CLOSED = Answer(409, "`session_closed`: the checkout session is already decided or expired.")
_PROVIDER = ({},)
"""The sandbox's page and the provider's callback: anyone (the token or the signature is the proof)."""

CAPABILITIES = Op(
    "edu_capabilities",
    "Storefront flags (is checkout open, currency, providers, refund window); read before showing"
    " purchase UI.",
    replies.EduCapabilities,
    done="The capabilities.",
    errors=(_NONE_TAKEN, _TOKEN_REJECTED),
)
CHECKOUT = Op(
    "edu_checkout_create",
    "Open a checkout session (an order) for a product or a bundle.",
    replies.EduOrder,
    description="The reply's `checkout_url` is the provider's hosted page (the sandbox's own page by"
    " default); poll `GET /orders/{order_id}` until `paid`. A free item is `paid` at once.",
    body=EduCheckoutRequest,
    status=201,
    done="The order, `awaiting_payment` (or `paid` when free).",
    errors=(
        Answer(
            400,
            f"{_KEYED} (the body is not a JSON object); `invalid_request`: an unknown field, not exactly one"
            " of `product_id` and `bundle_id`, an id that is not a string of at most 24 characters, an"
            " `expected_price` that is not `{amount_minor: integer, currency}` (a decimal amount"
            " included), a query parameter.",
        ),
        _UNAUTHORIZED,
        Answer(
            409,
            "`already_owned`: the buyer already holds everything the item grants; `checkout_open`: an"
            " order of the buyer for this item is still awaiting payment (its id in `order_id`);"
            f" {_KEY_CLASH}.",
        ),
        Answer(
            422,
            "`checkout_closed`: checkout is closed (see `/commerce/capabilities`); `not_purchasable`: the"
            " item is unknown, not on sale (a draft, unpublished, or a bundle holding one), or the buyer's"
            " own; `price_changed`: `expected_price` differs from the current price.",
        ),
    ),
)
ORDER = Op(
    "edu_order",
    "An order's state, for its buyer only; poll it after checkout.",
    replies.EduOrder,
    path=_ORDER,
    done="The order.",
    errors=(
        _NONE_TAKEN,
        _UNAUTHORIZED,
        Answer(403, "`not_owner`: the order is someone else's."),
        Answer(404, "`not_found`: no order has this id."),
    ),
)
REFUND = Op(
    "edu_refund_create",
    "Refund a paid order within 15 days of payment; the refund completes at once and access ends.",
    replies.EduRefundRequest,
    body=EduRefundCreate,
    path=_ORDER,
    status=201,
    done="The refund request, `completed`.",
    errors=(
        Answer(
            400,
            f"{_KEYED}; `invalid_request`: an unknown field, a `reason` that is not a string of at most 500"
            " characters, a query parameter.",
        ),
        _UNAUTHORIZED,
        Answer(403, "`not_owner`: the order is unknown or someone else's (its existence is not revealed)."),
        Answer(
            409,
            "`already_requested`: the order already has a refund request; `idempotency_key_reused`,"
            " `request_in_progress`.",
        ),
        Answer(
            422,
            "`not_refundable`: the order is not paid (awaiting payment, failed, expired, refunded), is"
            " free, or holds a product its instructor sells without refunds; `outside_refund_window`: more"
            " than 15 days since payment.",
        ),
    ),
)
REFUND_REQUEST = Op(
    "edu_refund",
    "A refund request's state, for its buyer only.",
    replies.EduRefundRequest,
    path={**_ORDER, "refund_request_id": {"schema": {"$ref": "#/components/schemas/EduId"}}},
    done="The refund request.",
    errors=(
        _NONE_TAKEN,
        _UNAUTHORIZED,
        Answer(403, "`not_owner`: the refund request is someone else's."),
        Answer(404, "`not_found`: no refund request has this id, or it is not of this order."),
    ),
)
SANDBOX_PAGE = Op(
    "edu_sandbox_page",
    "The sandbox payment provider's hosted checkout page (HTML with Pay and Decline).",
    None,
    description="Served by the service for the embedded sandbox provider; `checkout_url` of an order"
    " points here.",
    path={
        "token": {
            "description": "The checkout session token.",
            "schema": {"$ref": "#/components/schemas/EduId"},
        }
    },
    done="The checkout page.",
    content={"text/html": {"schema": {"type": "string"}}},
    security=_PROVIDER,
    errors=(
        _TOKEN_REJECTED,
        Answer(404, "`not_found`: no checkout session has this token."),
        _SESSION_CLOSED,
    ),
)
SANDBOX_DECIDE = Op(
    "edu_sandbox_decide",
    "The buyer's choice on the sandbox page; the provider's signed callback follows (retried until"
    " accepted).",
    replies.EduSandboxDecision,
    description="No `Idempotency-Key`: this is the provider's page, not a client operation.",
    path={
        "token": {"schema": {"$ref": "#/components/schemas/EduId"}},
        "choice": {"schema": {"enum": ["approve", "decline"]}},
    },
    done="The order moves to `processing`, then `paid` (approve) or `failed` (decline).",
    security=_PROVIDER,
    errors=(
        _TOKEN_REJECTED,
        Answer(
            404,
            "`not_found`: no checkout session has this token, or the choice is neither `approve` nor"
            " `decline`.",
        ),
        _SESSION_CLOSED,
    ),
)
CALLBACK = Op(
    "edu_payment_callback",
    "The payment provider's signed callback (a payment outcome); idempotent.",
    replies.EduCallbackResult,
    description="The sandbox signs the raw JSON body `{event_id, order_id, outcome: paid|declined, amount,"
    " at}` with HMAC-SHA256 under a key derived from the service secret (header `X-Sandbox-Signature`,"
    " hex). A repeated or concurrent delivery grants nothing more (`applied: false`). No"
    " `Idempotency-Key`.",
    body=EduPaymentEvent,
    parameters=(
        {"name": "X-Sandbox-Signature", "in": "header", "required": False, "schema": {"type": "string"}},
    ),
    done="The callback was applied (or was already).",
    security=_PROVIDER,
    errors=(
        Answer(400, "`invalid_request`: a correctly signed body that is not a payment event."),
        Answer(
            401,
            "`invalid_signature`: the signature is missing or does not match; `session_expired`: a"
            " rejected token was sent.",
        ),
        Answer(404, "`not_found`: the event names an unknown order."),
    ),
)
