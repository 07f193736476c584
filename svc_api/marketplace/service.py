"""The marketplace: what routes, the signal worker and the strategies domain ask of it.

Each use case runs in its own transaction here; the rules live in :mod:`~svc_api.marketplace.listings`,
:mod:`~svc_api.marketplace.subscriptions` and :mod:`~svc_api.marketplace.reviews`. At import the
marketplace registers its strategy hooks: editing a strategy cancels its subscriptions, rolling it
back or making it private (it is no longer public) unpublishes its listing, and a listed strategy
cannot be deleted.

Example:
    >>> with store.read() as conn:
    ...     signal_recipients(conn, "AB12CD", "rsidip", "BTC"), listed_coins(conn, "AB12CD", "rsidip")
    ([], [])
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from sqlalchemy.engine import Connection

from svc_api.core.errors import NotFound
from svc_api.core.money import to_units
from svc_api.core.store import Store
from svc_api.marketplace import listings, queries, reviews, subscriptions
from svc_api.strategies import service as strategies


def signal_recipients(conn: Connection, svc_id: str, strategy_name: str, coin: str) -> list[str]:
    """Subscribers of a strategy's active listing bound to ``coin``."""
    return queries.recipients(conn, svc_id, strategy_name, coin)


def signal_recipients_of(
    conn: Connection, strategies: Sequence[tuple[str, str]]
) -> dict[tuple[str, str, str], list[str]]:
    """:func:`signal_recipients` of many strategies ``(svc_id, strategy_name)`` at once, keyed by
    ``(svc_id, strategy_name, coin)``."""
    return queries.recipients_of(conn, strategies)


def listed_coins(conn: Connection, svc_id: str, strategy_name: str) -> list[str]:
    """The coins of a strategy's active listing (none when it is not listed)."""
    found = queries.listed_coins(conn, svc_id, strategy_name)
    return [] if found is None else list(json.loads(found))


def listed_coins_of_all(conn: Connection) -> dict[tuple[str, str], list[str]]:
    """:func:`listed_coins` of every listed strategy at once, keyed by ``(svc_id, strategy_name)``."""
    return {
        (r.svc_id, r.strategy_key): list(json.loads(r.listed_coins))
        for r in queries.active_listed_coins(conn)
    }


def record_deliveries(
    conn: Connection, users: list[str], owner: str, strategy_name: str, units: int, share: int
) -> None:
    """Count a signal delivered to subscribers on their subscriptions (and what each paid)."""
    queries.add_signal_charges(conn, owner, strategy_name, users, units, share)


def publish(
    services: Any,
    svc_id: str,
    strategy_key: str,
    *,
    description: str,
    price_credits: float,
    mode: str,
    requested: list[str],
    now: int,
) -> dict[str, Any]:
    """``marketplace_publish`` (the fields checked by its request model)."""
    with services.store.write() as conn:
        return listings.publish(
            services,
            conn,
            svc_id,
            strategy_key,
            description=description,
            price=to_units(price_credits),
            mode=mode,
            requested=requested,
            now=now,
        )


def update_listing(
    store: Store, svc_id: str, listing_id: str, *, price: Any, description: Any, now: int
) -> dict[str, Any]:
    """``marketplace_update_listing``; ``price`` and ``description`` as sent (None: unchanged),
    checked once the listing is known to be the caller's."""
    with store.write() as conn:
        return listings.update(conn, svc_id, listing_id, price=price, description=description, now=now)


def unpublish(store: Store, svc_id: str, listing_id: str, *, now: int) -> dict[str, Any]:
    """``marketplace_unpublish``."""
    with store.write() as conn:
        return listings.unpublish(conn, svc_id, listing_id, now=now)


def subscribe(
    store: Store,
    svc_id: str,
    listing_id: str,
    coins: list[str],
    *,
    now: int,
    fee_pct: float,
    catalog: Any = None,
) -> dict[str, Any]:
    """``marketplace_subscribe`` (all or nothing); with the data store's ``catalog``, a selected coin
    whose candles of the listing's timeframe cannot be served is refused (400)."""
    servable = None if catalog is None else (lambda coin, tf: listings.serves(catalog, coin, tf))
    with store.write() as conn:
        return subscriptions.subscribe(
            conn, svc_id, listing_id, coins, now=now, fee_pct=fee_pct, servable=servable
        )


def unsubscribe(store: Store, svc_id: str, subscription_id: str, *, now: int) -> dict[str, Any]:
    """``marketplace_unsubscribe``."""
    with store.write() as conn:
        return subscriptions.unsubscribe(conn, svc_id, subscription_id, now=now)


def review(
    store: Store, svc_id: str, listing_id: str, rating: int, comment: str, *, secret: bytes, now: int
) -> dict[str, Any]:
    """``marketplace_review``."""
    with store.write() as conn:
        return reviews.review(conn, svc_id, listing_id, rating, comment, secret=secret, now=now)


def renew_due(store: Store, *, now: int, fee_pct: float) -> int:
    """Renew every subscription due (each period charged once); how many."""
    with store.write() as conn:
        return subscriptions.renew_due(conn, now=now, fee_pct=fee_pct)


def browse(
    store: Store, *, coin: str | None, sort: str, limit: int, after: Any
) -> tuple[list[dict[str, Any]], Any]:
    """A page of active listings and the position after it (None on the last page)."""
    with store.read() as conn:
        rows = queries.browse(conn, coin=coin, sort=sort, limit=limit + 1, after=after)
    page = rows[:limit]
    key = (
        (lambda r: [int(r.created_at), r.listing_id])
        if sort == "newest"
        else (lambda r: [int(r.monthly_price_units), r.listing_id])
    )
    return [listings.summary_of(r) for r in page], (key(page[-1]) if len(rows) > limit else None)


def listing_detail(store: Store, svc_id: str | None, listing_id: str) -> dict[str, Any]:
    """A listing's detail for the caller; a removed listing is 404 except to its owner."""
    with store.read() as conn:
        row = listings.find(conn, listing_id)
        if row.status != "active" and row.svc_id != svc_id:
            raise NotFound(f"listing {listing_id!r} not found")
        sub = (
            None
            if svc_id is None
            else queries.subscription(conn, subscriptions.subscription_id_of(svc_id, row.listing_id))
        )
    detail = listings.summary_of(row) | {
        "description": row.description,
        "leverage": int(row.leverage),
        "created_at": int(row.created_at),
        "is_owner": row.svc_id == svc_id,
        "subscription_status": "" if sub is None else sub.status,
        "selected_coins": [] if sub is None or sub.status != "active" else json.loads(sub.selected_coins),
    }
    if row.svc_id == svc_id:
        detail |= {"status": row.status, "total_credits_earned": listings.own_of(row)["total_credits_earned"]}
    return detail


def my_listings(store: Store, svc_id: str, *, limit: int, after: Any) -> tuple[list[dict[str, Any]], Any]:
    """A page of the caller's listings."""
    with store.read() as conn:
        rows = queries.own_listings(conn, svc_id, limit=limit + 1, after=after)
    page = rows[:limit]
    return [listings.own_of(r) for r in page], (
        [int(page[-1].created_at), page[-1].listing_id] if len(rows) > limit else None
    )


def my_subscriptions(
    store: Store, svc_id: str, *, limit: int, after: Any
) -> tuple[list[dict[str, Any]], Any]:
    """A page of the caller's subscriptions."""
    with store.read() as conn:
        rows = queries.own_subscriptions(conn, svc_id, limit=limit + 1, after=after)
    page = rows[:limit]
    last = [int(page[-1].created_at), page[-1].subscription_id] if len(rows) > limit else None
    return [subscriptions.entry_of(r) for r in page], last


def listing_reviews(
    store: Store, listing_id: Any, *, limit: int, after: Any
) -> tuple[list[dict[str, Any]], Any]:
    """A page of a listing's reviews (404 unknown or removed listing)."""
    with store.read() as conn:
        row = listings.find(conn, listing_id)
        if row.status != "active":
            raise NotFound(f"listing {listing_id!r} not found")
        rows = queries.reviews(conn, row.listing_id, limit=limit + 1, after=after)
    page = rows[:limit]
    return [reviews.entry_of(r) for r in page], (
        [int(page[-1].created_at), page[-1].review_id] if len(rows) > limit else None
    )


def _cancel_for_strategy(conn: Connection, svc_id: str, name: str, now: int) -> int:
    row = queries.active_listing_of(conn, svc_id, name)
    return (
        0
        if row is None
        else subscriptions.cancel_all(conn, row.listing_id, now=now, why="the strategy changed")
    )


def _withdraw_for_strategy(conn: Connection, svc_id: str, name: str, now: int) -> int:
    # a listing sells a public strategy's signals: once the strategy is private (rolled back or made
    # private) nothing is sold any more, so the listing is unpublished rather than left active
    row = queries.active_listing_of(conn, svc_id, name)
    if row is None:
        return 0
    why = "the strategy is no longer public"
    return int(listings.remove(conn, row, now=now, why=why)["subscriptions_cancelled"])


strategies.register_marketplace_hooks(
    withdraw_listing=_withdraw_for_strategy,
    cancel_subscriptions=_cancel_for_strategy,
    has_active_listing=lambda conn, svc_id, name: queries.active_listing_of(conn, svc_id, name) is not None,
)
