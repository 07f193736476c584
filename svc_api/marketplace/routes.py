"""Marketplace operations: ``/user`` (publish, update, unpublish, subscribe, unsubscribe, review, own
listings and subscriptions, a listing's detail) and guest ``/tradingdata`` (browse, a listing, its
reviews).

Example:
    >>> sorted(TRADINGDATA)
    ['marketplace_browse', 'marketplace_listing', 'marketplace_reviews']
"""

from __future__ import annotations

from typing import Any

from svc_api.core.dispatch import Call, Operation
from svc_api.core.fields import position_int, position_str
from svc_api.market import service as market
from svc_api.marketplace import contract as c
from svc_api.marketplace import replies as r
from svc_api.marketplace import service as marketplace


def _after(call: Call, kind: str, *, personal: bool = True) -> tuple[int, str] | None:
    position = call.cursor(kind, personal=personal)
    return None if position is None else (position_int(position, "t"), position_str(position, "k"))


def _position(last: list[Any] | None) -> dict[str, Any] | None:
    return None if last is None else {"t": last[0], "k": last[1]}


def _publish(call: Call, req: c.MarketplacePublish) -> dict[str, Any]:
    return marketplace.publish(
        call.services,
        call.svc_id,
        req.strategy_key,
        description=req.description,
        price_credits=req.monthly_price_credits,
        mode=req.signal_mode,
        requested=req.requested_coins,
        now=call.now,
    )


def _update(call: Call, req: c.MarketplaceUpdate) -> dict[str, Any]:
    return marketplace.update_listing(
        call.store,
        call.svc_id,
        req.listing_id,
        price=req.monthly_price_credits,
        description=req.description,
        now=call.now,
    )


def _unpublish(call: Call, req: c.MarketplaceListingRef) -> dict[str, Any]:
    return marketplace.unpublish(call.store, call.svc_id, req.listing_id, now=call.now)


def _subscribe(call: Call, req: c.MarketplaceSubscribe) -> dict[str, Any]:
    fee = call.services.settings.marketplace_fee_pct
    catalog = market.catalog_of(call.services)  # refuse coins whose timeframe the store cannot serve
    return marketplace.subscribe(
        call.store,
        call.svc_id,
        req.listing_id,
        req.selected_coins,
        now=call.now,
        fee_pct=fee,
        catalog=catalog,
    )


def _unsubscribe(call: Call, req: c.MarketplaceUnsubscribe) -> dict[str, Any]:
    return marketplace.unsubscribe(call.store, call.svc_id, req.subscription_id, now=call.now)


def _review(call: Call, req: c.MarketplaceReview) -> dict[str, Any]:
    secret = call.services.settings.secret_key
    return marketplace.review(
        call.store, call.svc_id, req.listing_id, req.rating, req.comment, secret=secret, now=call.now
    )


def _my_listings(call: Call, req: c.MarketplaceOwnPage) -> dict[str, Any]:
    page, last = marketplace.my_listings(
        call.store, call.svc_id, limit=req.limit, after=_after(call, "listings")
    )
    return call.user_page("listings", "listings", page, last is not None, _position(last))


def _my_subscriptions(call: Call, req: c.MarketplaceOwnPage) -> dict[str, Any]:
    page, last = marketplace.my_subscriptions(
        call.store, call.svc_id, limit=req.limit, after=_after(call, "subs")
    )
    return call.user_page("subs", "subscriptions", page, last is not None, _position(last))


def _detail(call: Call, req: c.MarketplaceListingRef) -> dict[str, Any]:
    return marketplace.listing_detail(call.store, call.principal.svc_id, req.listing_id)


def _browse(call: Call, req: c.MarketplaceBrowseQuery) -> dict[str, Any]:
    # The spec gives a range (1-100), not a maximum that clamps: above it is a 400 (c.MarketplaceBrowseQuery).
    kind = f"browse:{req.sort}"
    page, last = marketplace.browse(
        call.store, coin=req.coin, sort=req.sort, limit=req.limit, after=_after(call, kind, personal=False)
    )
    cursor = call.next_cursor(kind, _position(last), personal=False)
    return {"listings": page, "count": len(page), "next_cursor": cursor, "has_more": last is not None}


def _listing(call: Call, req: c.MarketplaceListingRef) -> dict[str, Any]:
    return {"ok": True, "data": _detail(call, req)}


def _reviews(call: Call, req: c.MarketplaceReviewsQuery) -> dict[str, Any]:
    listing_id = req.listing_id
    kind = f"reviews:{listing_id}"
    page, last = marketplace.listing_reviews(
        call.store, listing_id, limit=req.limit, after=_after(call, kind, personal=False)
    )
    cursor = call.next_cursor(kind, _position(last), personal=False)
    return {
        "listing_id": listing_id,
        "reviews": page,
        "count": len(page),
        "next_cursor": cursor,
        "has_more": last is not None,
    }


USER: dict[str, Operation] = {
    "marketplace_publish": Operation(
        _publish,
        request=c.MarketplacePublish,
        reply=r.ListingPublished,
        summary="List a strategy's signals for a monthly price.",
        errors=c.PUBLISH_ERRORS,
    ),
    "marketplace_update_listing": Operation(
        _update,
        request=c.MarketplaceUpdate,
        reply=r.ListingUpdated,
        summary="Change a listing's price (cancelling its subscriptions) or description.",
        errors=c.UPDATE_ERRORS,
    ),
    "marketplace_unpublish": Operation(
        _unpublish,
        request=c.MarketplaceListingRef,
        reply=r.ListingRemoved,
        summary="Unpublish a listing, cancelling every subscription.",
        errors=c.UNPUBLISH_ERRORS,
    ),
    "marketplace_subscribe": Operation(
        _subscribe,
        idempotent=True,
        request=c.MarketplaceSubscribe,
        reply=r.Subscribed,
        summary="Subscribe to a listing's coins, the first month charged at once.",
        errors=c.SUBSCRIBE_ERRORS,
    ),
    "marketplace_unsubscribe": Operation(
        _unsubscribe,
        request=c.MarketplaceUnsubscribe,
        reply=r.Unsubscribed,
        summary="Cancel a subscription.",
        errors=c.UNSUBSCRIBE_ERRORS,
    ),
    "marketplace_review": Operation(
        _review,
        request=c.MarketplaceReview,
        reply=r.Reviewed,
        summary="Review a listing one subscribes or subscribed to.",
        errors=c.REVIEW_ERRORS,
    ),
    "marketplace_my_listings": Operation(
        _my_listings,
        request=c.MarketplaceOwnPage,
        reply=r.OwnListingsPage,
        summary="The caller's listings, newest first.",
    ),
    "marketplace_my_subscriptions": Operation(
        _my_subscriptions,
        request=c.MarketplaceOwnPage,
        reply=r.SubscriptionsPage,
        summary="The caller's subscriptions, newest first.",
    ),
    "marketplace_listing_detail": Operation(
        _detail,
        request=c.MarketplaceListingRef,
        reply=r.ListingDetail,
        summary="A listing's detail for the caller.",
        errors=(c.NOT_FOUND,),
    ),
}
TRADINGDATA: dict[str, Operation] = {
    "marketplace_browse": Operation(
        _browse,
        access="public",
        inline=True,
        request=c.MarketplaceBrowseQuery,
        reply=r.MarketplaceBrowse,
        summary="The active listings, newest or cheapest first.",
    ),
    "marketplace_listing": Operation(
        _listing,
        access="public",
        request=c.MarketplaceListingRef,
        reply=r.MarketplaceListing,
        summary="A listing's detail.",
        errors=(c.NOT_FOUND,),
    ),
    "marketplace_reviews": Operation(
        _reviews,
        access="public",
        request=c.MarketplaceReviewsQuery,
        reply=r.MarketplaceReviews,
        summary="A listing's reviews, newest first.",
        errors=(c.NOT_FOUND,),
    ),
}
