"""The request models of the marketplace operations (``/user`` and guest ``/tradingdata``); their
reply models are in :mod:`~svc_api.marketplace.replies`.

Each model lists its fields in the order the service checked them by hand, each with that check.
A check that runs after a look-up (the new price of ``marketplace_update_listing`` after the
listing's owner, the ``listing_id`` of ``marketplace_reviews`` after its cursor) stays in the
service and is documented with ``AsSent``.

Example:
    >>> MarketplaceReview.model_validate({"listing_id": "lst_1", "rating": 4.0}).rating
    4
    >>> MarketplaceBrowseQuery.model_validate({"sort": "cheapest"})
    Traceback (most recent call last):
    ...
    svc_api.core.errors.Invalid: sort must be one of newest, price_asc, got 'cheapest'
"""

from __future__ import annotations

from typing import Annotated, Any

from svc_api.core.contract import Check, ErrorDoc, Fields
from svc_api.core.errors import Invalid
from svc_api.core.fields import string_list
from svc_api.core.params import AsSent, Cursor, Limit
from svc_api.marketplace.listings import description_of, price_of
from svc_api.marketplace.reviews import comment_of
from svc_api.strategies import service as strategies

SORTS = ("newest", "price_asc")
SIGNAL_MODES = ("full", "signal_only")


def required_id(value: object, name: str) -> str:
    """A listing or subscription id: a non-empty string (400 ``<name> is required`` otherwise).

    Example:
        >>> required_id("", "listing_id")
        Traceback (most recent call last):
        ...
        svc_api.core.errors.Invalid: listing_id is required
    """
    if not isinstance(value, str) or not value:
        raise Invalid(f"{name} is required")
    return value


def _price(value: object, name: str) -> float:
    price_of(value)  # the 1-1000 check; the service converts to credit units
    return value  # type: ignore[return-value]


def _signal_mode(value: object, name: str) -> str:
    if value not in SIGNAL_MODES:
        raise Invalid(f"signal_mode must be 'full' or 'signal_only', got {value!r}")
    return str(value)


def _requested(value: object, name: str) -> list[str]:
    coins = string_list(value, name)
    if not coins:
        raise Invalid(f"{name} must name at least one coin")
    return coins


def _rating(value: object, name: str) -> int:
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or value != int(value)
        or not 1 <= value <= 5
    ):
        raise Invalid("rating must be a whole number from 1 to 5")
    return int(value)


def _sort(value: object, name: str) -> str:
    sort = value or "newest"
    if sort not in SORTS:
        raise Invalid(f"sort must be one of {', '.join(SORTS)}, got {sort!r}")
    return str(sort)


def _coin(value: Any, name: str) -> str | None:
    coin = value or None
    if coin is not None and not (coin.isascii() and coin.isalnum()):
        raise Invalid(f"coin must be letters and digits, such as BTC, got {coin[:20]!r}")
    return coin


ListingId = Annotated[
    str,
    Check(required_id, {"type": "string", "minLength": 1, "description": "A listing's ID."}, required=True),
]
Description = Annotated[
    str,
    Check(
        lambda value, name: description_of(value),
        {"type": "string", "maxLength": 500, "description": "At most 500 characters, no HTML."},
    ),
]
Price = Annotated[
    float,
    Check(
        _price,
        {"type": "number", "minimum": 1, "maximum": 1000, "description": "The fixed monthly prepaid fee."},
        required=True,
    ),
]
IdempotencyKey = AsSent(
    {
        "type": "string",
        "minLength": 16,
        "maxLength": 128,
        "pattern": "^[A-Za-z0-9._:-]{16,128}$",
        "description": "Replays the stored reply for a retry of the same request.",
    }
)


class MarketplacePublish(Fields):
    """``marketplace_publish``: list a strategy's signals."""

    strategy_key: Annotated[
        str,
        Check(
            strategies.check_name,
            {"type": "string", "minLength": 4, "maxLength": 20, "pattern": "^[a-z0-9]{4,20}$"},
            required=True,
        ),
    ]
    """The caller's strategy (4-20 lowercase letters and digits)."""
    description: Description
    monthly_price_credits: Price
    signal_mode: Annotated[str, Check(_signal_mode, {"enum": list(SIGNAL_MODES)}, required=True)]
    """``full`` lists the coins its latest ``full_range`` made money on; ``signal_only`` every coin."""
    requested_coins: Annotated[
        list[str],
        Check(_requested, {"type": "array", "minItems": 1, "items": {"type": "string"}}, required=True),
    ]


class MarketplaceUpdate(Fields):
    """``marketplace_update_listing``: a new price (it cancels the subscriptions) or description."""

    listing_id: ListingId
    monthly_price_credits: AsSent(
        {"type": ["number", "null"], "minimum": 1, "maximum": 1000, "description": "A new monthly price."}
    )
    """Checked after the listing is found to be the caller's."""
    description: AsSent({"type": ["string", "null"], "maxLength": 500, "description": "No HTML."})
    """Checked after the listing is found to be the caller's."""


class MarketplaceListingRef(Fields):
    """An operation on one listing: ``marketplace_unpublish``, ``marketplace_listing_detail``,
    ``marketplace_listing``."""

    listing_id: ListingId


class MarketplaceSubscribe(Fields):
    """``marketplace_subscribe``: the coins of a listing to receive signals of (all or nothing)."""

    listing_id: ListingId
    selected_coins: Annotated[
        list[str],
        Check(
            lambda value, name: string_list(value, name, what="coin names"),
            {"type": "array", "minItems": 1, "items": {"type": "string"}},
            required=True,
        ),
    ]
    """Distinct coins of the listing's ``listed_coins`` (checked against the listing)."""
    idempotency_key: IdempotencyKey


class MarketplaceUnsubscribe(Fields):
    """``marketplace_unsubscribe``."""

    subscription_id: Annotated[str, Check(required_id, {"type": "string", "minLength": 1}, required=True)]


class MarketplaceReview(Fields):
    """``marketplace_review``: by a present or past subscriber, once."""

    rating: Annotated[int, Check(_rating, {"type": "integer", "minimum": 1, "maximum": 5}, required=True)]
    comment: Annotated[
        str,
        Check(
            lambda value, name: comment_of(value),
            {"type": "string", "minLength": 10, "maxLength": 500, "description": "No links, no markup."},
        ),
    ]
    listing_id: ListingId


class MarketplaceOwnPage(Fields):
    """``marketplace_my_listings``, ``marketplace_my_subscriptions``: a page of the caller's own."""

    limit: Limit(25, 1, 100)
    cursor: Cursor


class MarketplaceBrowseQuery(Fields):
    """``marketplace_browse``: the active listings."""

    limit: Limit(50, 1, 100)
    sort: Annotated[str, Check(_sort, {"enum": list(SORTS), "default": "newest"})]
    coin: Annotated[
        str | None,
        Check(
            _coin, {"type": "string", "pattern": "^[A-Za-z0-9]+$", "description": "Listings of this coin."}
        ),
    ]
    cursor: Cursor


class MarketplaceReviewsQuery(Fields):
    """``marketplace_reviews``: a listing's reviews, newest first."""

    limit: Limit(20, 1, 100, clamp=True)
    cursor: Cursor
    listing_id: AsSent({"type": "string", "minLength": 1, "description": "A listing's ID."}, required=True)
    """Checked after the cursor (which belongs to the listing's list)."""


NOT_FOUND = ErrorDoc(404, "not_found", "no such listing, or it was removed and the caller is not its owner")
NOT_OWNER = ErrorDoc(403, "forbidden", "the listing is not the caller's")
PUBLISH_ERRORS = (
    ErrorDoc(
        400,
        "invalid_request",
        "an invalid field, a strategy listed already, no `full_range` result (full mode), no coin listable",
    ),
    ErrorDoc(404, "not_found", "no such strategy"),
)
UPDATE_ERRORS = (
    ErrorDoc(
        400, "invalid_request", "nothing to update, an invalid price or description, the listing not active"
    ),
    NOT_OWNER,
    NOT_FOUND,
)
UNPUBLISH_ERRORS = (ErrorDoc(400, "invalid_request", "the listing is not active"), NOT_OWNER, NOT_FOUND)
SUBSCRIBE_ERRORS = (
    ErrorDoc(
        400,
        "invalid_request",
        "coins not of the listing or past the plan's limit, one's own listing, the listing not active, "
        "a coin whose timeframe cannot be served (`reason: timeframe_unavailable`)",
    ),
    ErrorDoc(
        402, "insufficient_credits", "the balance is below `monthly_price_credits`", "insufficient_credits"
    ),
    ErrorDoc(403, "forbidden", "no valid license, or the plan's active strategies are used up"),
    NOT_FOUND,
    ErrorDoc(409, "conflict", "an active subscription to the listing exists"),
)
UNSUBSCRIBE_ERRORS = (
    ErrorDoc(404, "not_found", "no such subscription of the caller's"),
    ErrorDoc(409, "conflict", "the subscription is already cancelled or lapsed"),
)
REVIEW_ERRORS = (
    ErrorDoc(
        400,
        "invalid_request",
        "a rating not 1-5, a comment not 10-500 characters or with links or markup, one's own listing",
    ),
    ErrorDoc(403, "forbidden", "the caller never subscribed to the listing"),
    NOT_FOUND,
    ErrorDoc(409, "conflict", "the caller has reviewed the listing already"),
)
