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
from svc_api.core.errors import Invalid
from svc_api.core.fields import position_int, position_str
from svc_api.market import service as market
from svc_api.marketplace import service as marketplace

SORTS = ("newest", "price_asc")


def _after(call: Call, kind: str, *, personal: bool = True) -> tuple[int, str] | None:
    position = call.cursor(kind, personal=personal)
    return None if position is None else (position_int(position, "t"), position_str(position, "k"))


def _position(last: list[Any] | None) -> dict[str, Any] | None:
    return None if last is None else {"t": last[0], "k": last[1]}


def _publish(call: Call) -> dict[str, Any]:
    return marketplace.publish(call.services, call.svc_id, call.params, now=call.now)


def _update(call: Call) -> dict[str, Any]:
    return marketplace.update_listing(call.store, call.svc_id, call.params, now=call.now)


def _unpublish(call: Call) -> dict[str, Any]:
    return marketplace.unpublish(call.store, call.svc_id, call.params.get("listing_id"), now=call.now)


def _subscribe(call: Call) -> dict[str, Any]:
    fee = call.services.settings.marketplace_fee_pct
    catalog = market.catalog_of(call.services)  # refuse coins whose timeframe the store cannot serve
    return marketplace.subscribe(
        call.store, call.svc_id, call.params, now=call.now, fee_pct=fee, catalog=catalog
    )


def _unsubscribe(call: Call) -> dict[str, Any]:
    return marketplace.unsubscribe(call.store, call.svc_id, call.params.get("subscription_id"), now=call.now)


def _review(call: Call) -> dict[str, Any]:
    secret = call.services.settings.secret_key
    return marketplace.review(call.store, call.svc_id, call.params, secret=secret, now=call.now)


def _my_listings(call: Call) -> dict[str, Any]:
    limit = call.page(25, 1, 100)
    page, last = marketplace.my_listings(call.store, call.svc_id, limit=limit, after=_after(call, "listings"))
    return call.user_page("listings", "listings", page, last is not None, _position(last))


def _my_subscriptions(call: Call) -> dict[str, Any]:
    limit = call.page(25, 1, 100)
    page, last = marketplace.my_subscriptions(
        call.store, call.svc_id, limit=limit, after=_after(call, "subs")
    )
    return call.user_page("subs", "subscriptions", page, last is not None, _position(last))


def _detail(call: Call) -> dict[str, Any]:
    return marketplace.listing_detail(call.store, call.principal.svc_id, call.params.get("listing_id"))


def _browse(call: Call) -> dict[str, Any]:
    # The spec gives a range (1-100), not a maximum that clamps: above it is a 400.
    limit = call.page(50, 1, 100)
    sort = call.params.get("sort") or "newest"
    if sort not in SORTS:
        raise Invalid(f"sort must be one of {', '.join(SORTS)}, got {sort!r}")
    coin = call.params.get("coin") or None
    if coin is not None and not (coin.isascii() and coin.isalnum()):
        raise Invalid(f"coin must be letters and digits, such as BTC, got {coin[:20]!r}")
    kind = f"browse:{sort}"
    page, last = marketplace.browse(
        call.store, coin=coin, sort=sort, limit=limit, after=_after(call, kind, personal=False)
    )
    cursor = call.next_cursor(kind, _position(last), personal=False)
    return {"listings": page, "count": len(page), "next_cursor": cursor, "has_more": last is not None}


def _listing(call: Call) -> dict[str, Any]:
    return {"ok": True, "data": _detail(call)}


def _reviews(call: Call) -> dict[str, Any]:
    limit = call.page(20, 1, 100, clamp=True)
    listing_id = call.params.get("listing_id")
    kind = f"reviews:{listing_id}"
    page, last = marketplace.listing_reviews(
        call.store, listing_id, limit=limit, after=_after(call, kind, personal=False)
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
    "marketplace_publish": Operation(_publish),
    "marketplace_update_listing": Operation(_update),
    "marketplace_unpublish": Operation(_unpublish),
    "marketplace_subscribe": Operation(_subscribe, idempotent=True),
    "marketplace_unsubscribe": Operation(_unsubscribe),
    "marketplace_review": Operation(_review),
    "marketplace_my_listings": Operation(_my_listings),
    "marketplace_my_subscriptions": Operation(_my_subscriptions),
    "marketplace_listing_detail": Operation(_detail),
}
TRADINGDATA: dict[str, Operation] = {
    "marketplace_browse": Operation(_browse, access="public", inline=True),
    "marketplace_listing": Operation(_listing, access="public"),
    "marketplace_reviews": Operation(_reviews, access="public"),
}
