"""The reply models of the marketplace operations (the names the API description has always used).

Example:
    >>> Unsubscribed.model_validate(
    ...     {"status": "cancelled", "subscription_id": "sub_1", "bindings_removed": 1}).bindings_removed
    1
"""

from __future__ import annotations

from typing import Literal

from svc_api.core.contract import Shape
from svc_api.core.params import UserPage

SignalMode = Literal["full", "signal_only"]


class ListingSummary(Shape):
    """A listing as browse shows it (the creator masked)."""

    listing_id: str
    strategy_name: str
    """``<strategy>_<creator id>``."""
    owner: str
    """Masked: the first two and last two characters."""
    market_type: str
    timeframe: str
    signal_mode: SignalMode
    listed_coins: list[str]
    billing_period: Literal["monthly"]
    monthly_price_credits: float
    total_pnl_pct: float
    win_rate_pct: float
    subscriber_count: int
    total_signals_delivered: int
    status: Literal["active", "removed"] | None = None
    """The owner's only: ``removed`` once unpublished, and also once its strategy is no longer
    public (``strategy_rollback`` or ``strategy_visibility`` private unpublish it: no new
    subscribers, its subscriptions cancelled, out of browse)."""
    total_credits_earned: float | None = None
    """The owner's only: what the creator received from this listing after the platform fee
    (``MARKETPLACE_FEE_PCT``): the sum of the creator's ``marketplace_signal`` ledger rows for its
    months and signals (4 of a 5-credit charge at the default 20 %), not the subscribers' gross
    spend."""


class ListingDetail(ListingSummary):
    """A listing's detail for the caller."""

    description: str
    leverage: int
    created_at: int
    """Unix seconds."""
    is_owner: bool
    subscription_status: str
    """The caller's subscription: ``active``, ``cancelled``, ``lapsed``, or empty when none."""
    selected_coins: list[str]
    """The coins of the caller's active subscription."""


class ListingBacktestSummary(Shape):
    """The ``full_range`` result a coin was listed on."""

    pnl_pct: float
    win_rate: float
    trades: int


class ListingPublished(Shape):
    """The new listing."""

    listing_id: str
    strategy_key: str
    strategy_name: str
    display_strategy_name: str
    status: Literal["active"]
    listed_coins: list[str]
    rejected_coins: dict[
        str, Literal["negative_pnl", "insufficient_trades", "no_data", "timeframe_unavailable"]
    ]
    """Each requested coin not listed, and why."""
    monthly_price_credits: float
    billing_period: Literal["monthly"]
    signal_mode: SignalMode
    backtest_summary: dict[str, ListingBacktestSummary]
    """By listed coin (empty in ``signal_only`` mode)."""


class ListingUpdated(Shape):
    """What changed."""

    listing_id: str
    updated_fields: list[Literal["monthly_price_credits", "description"]]
    subscriptions_cancelled: int
    """A new price cancels every active subscription."""
    note: str


class ListingRemoved(Shape):
    """The listing is unpublished."""

    status: Literal["removed"]
    subscriptions_cancelled: int
    bindings_removed: int


class Subscribed(Shape):
    """The new subscription, its first month charged."""

    subscription_id: str
    """The same for a user and a listing after a cancel and a new subscribe."""
    listing_id: str
    strategy_name: str
    active_coins: list[str]
    billing_period: Literal["monthly"]
    monthly_price_credits: float
    credits_charged: float
    next_charge_at: int
    """Unix seconds."""
    expires_at: int
    """Unix seconds."""
    bindings_created: int


class Unsubscribed(Shape):
    """The subscription is cancelled."""

    status: Literal["cancelled"]
    subscription_id: str
    bindings_removed: int


class Reviewed(Shape):
    """The review is stored."""

    listing_id: str
    rating: int
    avg_rating: float
    review_count: int


class MarketplaceSubscription(Shape):
    """One of the caller's subscriptions."""

    subscription_id: str
    listing_id: str
    creator_svc_id: str
    strategy_name: str | None = None
    selected_coins: list[str]
    status: Literal["active", "cancelled", "lapsed"]
    billing_period: Literal["monthly"]
    monthly_price_credits: float
    signals_received: int
    credits_spent: float
    next_charge_at: int
    expires_at: int
    created_at: int


class ListingReview(Shape):
    """A review of a listing (the reviewer is never shown)."""

    review_id: str
    """A keyed hash; never the reviewer's account."""
    rating: int
    comment: str
    timestamp: int
    """Unix seconds."""


class OwnListingsPage(UserPage):
    """A page of the caller's listings, newest first."""

    listings: list[ListingSummary]


class SubscriptionsPage(UserPage):
    """A page of the caller's subscriptions, newest first."""

    subscriptions: list[MarketplaceSubscription]


class MarketplaceBrowse(Shape):
    """A page of active listings."""

    listings: list[ListingSummary]
    count: int
    next_cursor: str | None
    """Opaque; null on the last page."""
    has_more: bool


class MarketplaceListing(Shape):
    """A listing's detail, enveloped."""

    ok: Literal[True]
    data: ListingDetail


class MarketplaceReviews(Shape):
    """A page of a listing's reviews, newest first."""

    listing_id: str
    reviews: list[ListingReview]
    count: int
    next_cursor: str | None
    """Opaque; null on the last page."""
    has_more: bool
