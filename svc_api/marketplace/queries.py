"""Every SQL statement of the marketplace domain.

Example:
    >>> with store.read() as conn:
    ...     listing(conn, "lst_x") is None, recipients(conn, "AB12CD", "rsidip", "BTC")
    (True, [])
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Row

from svc_api.core.bulk import key_filters
from svc_api.core.prepared import Prepared
from svc_api.marketplace.tables import (
    marketplace_bindings,
    marketplace_listings,
    marketplace_reviews,
    marketplace_subscriptions,
)

_l, _s, _b, _r = (
    marketplace_listings.c,
    marketplace_subscriptions.c,
    marketplace_bindings.c,
    marketplace_reviews.c,
)


# ---- listings -------------------------------------------------------------------------------------


def listing(conn: Connection, listing_id: str) -> Row[Any] | None:
    """One listing with its subscriber and signal counters (counted from their rows)."""
    return conn.execute(_with_counts().where(_l.listing_id == listing_id)).first()


def active_listing_of(conn: Connection, svc_id: str, strategy_key: str) -> Row[Any] | None:
    """The active listing of a strategy, if any."""
    return conn.execute(
        sa.select(marketplace_listings).where(_l.active_key == f"{svc_id}:{strategy_key}")
    ).first()


def listings_count(conn: Connection, svc_id: str, strategy_key: str) -> int:
    """How many listings a strategy ever had."""
    query = sa.select(sa.func.count()).where(_l.svc_id == svc_id, _l.strategy_key == strategy_key)
    return int(conn.execute(query).scalar() or 0)


def insert_listing(conn: Connection, values: Mapping[str, Any]) -> None:
    """A new listing."""
    conn.execute(marketplace_listings.insert().values(**values))


def update_listing(conn: Connection, listing_id: str, values: Mapping[str, Any]) -> None:
    """Change a listing."""
    conn.execute(sa.update(marketplace_listings).where(_l.listing_id == listing_id).values(**values))


def _with_counts() -> Any:
    subs = (
        sa.select(sa.func.count())
        .where(_s.listing_id == _l.listing_id, _s.status == "active")
        .scalar_subquery()
    )
    signals = sa.select(sa.func.coalesce(sa.func.sum(_s.signals_received), 0)).where(
        _s.listing_id == _l.listing_id
    )
    # the creator's shares (after the platform fee), as credited on the creator's ledger; the
    # subscribers' gross spend is credits_spent_units
    earned = sa.select(sa.func.coalesce(sa.func.sum(_s.creator_units), 0)).where(
        _s.listing_id == _l.listing_id
    )
    return sa.select(
        marketplace_listings,
        subs.label("subscriber_count"),
        signals.scalar_subquery().label("total_signals_delivered"),
        earned.scalar_subquery().label("earned_units"),
    )


def browse(
    conn: Connection, *, coin: str | None, sort: str, limit: int, after: tuple[Any, str] | None
) -> list[Any]:
    """Active listings, newest first (``sort=newest``) or by price (``price_asc``), keyset-paged."""
    params: dict[str, Any] = {"limit": limit}
    if coin is not None:
        params["pattern"] = f'%"{coin}"%'
    if after is not None:
        params.update(t=after[0], k=after[1])
    return _browse(coin is not None, sort, after is not None).all(conn, params)


@functools.cache
def _browse(coin: bool, sort: str, after: bool) -> Prepared:
    # One statement per shape, compiled once: building the listing select with its three counting
    # subqueries cost more than SQLite's answer on every marketplace_browse.
    query = _with_counts().where(_l.status == "active")
    if coin:
        query = query.where(_l.listed_coins.like(sa.bindparam("pattern", type_=sa.String())))
    column = _l.created_at if sort == "newest" else _l.monthly_price_units
    if after:
        bound = sa.tuple_(sa.bindparam("t"), sa.bindparam("k"))
        keyed = sa.tuple_(column, _l.listing_id)
        query = query.where(keyed < bound if sort == "newest" else keyed > bound)
    order = (column.desc(), _l.listing_id.desc()) if sort == "newest" else (column.asc(), _l.listing_id.asc())
    return Prepared(query.order_by(*order).limit(sa.bindparam("limit")))


def own_listings(
    conn: Connection, svc_id: str, *, limit: int, after: tuple[int, str] | None
) -> list[Row[Any]]:
    """The caller's listings (active and removed), newest first."""
    query = _with_counts().where(_l.svc_id == svc_id)
    if after is not None:
        query = query.where(sa.tuple_(_l.created_at, _l.listing_id) < sa.tuple_(*after))
    return list(conn.execute(query.order_by(_l.created_at.desc(), _l.listing_id.desc()).limit(limit)))


def listed_coins(conn: Connection, svc_id: str, strategy_key: str) -> str | None:
    """The listed coins (JSON) of a strategy's active listing."""
    query = sa.select(_l.listed_coins).where(_l.active_key == f"{svc_id}:{strategy_key}")
    return conn.execute(query).scalar()


def active_listed_coins(conn: Connection) -> list[Row[Any]]:
    """``(svc_id, strategy_key, listed_coins)`` of every active listing."""
    query = sa.select(_l.svc_id, _l.strategy_key, _l.listed_coins).where(_l.active_key.is_not(None))
    return list(conn.execute(query))


# ---- subscriptions --------------------------------------------------------------------------------


def subscription(conn: Connection, subscription_id: str) -> Row[Any] | None:
    """One subscription."""
    return conn.execute(
        sa.select(marketplace_subscriptions).where(_s.subscription_id == subscription_id)
    ).first()


def upsert_subscription(conn: Connection, exists: bool, values: Mapping[str, Any]) -> None:
    """Insert a subscription, or reactivate the cancelled one of the same id."""
    if exists:
        key = values["subscription_id"]
        conn.execute(sa.update(marketplace_subscriptions).where(_s.subscription_id == key).values(**values))
    else:
        conn.execute(marketplace_subscriptions.insert().values(**values))


def set_subscription(conn: Connection, subscription_id: str, values: Mapping[str, Any], **where: Any) -> bool:
    """Change a subscription (only where its columns equal ``where``); True when it changed."""
    conds = [_s.subscription_id == subscription_id, *(_s[k] == v for k, v in where.items())]
    return bool(
        conn.execute(sa.update(marketplace_subscriptions).where(*conds).values(**values)).rowcount == 1
    )


def active_subscriptions_of_listing(conn: Connection, listing_id: str) -> list[Row[Any]]:
    """Active subscriptions of a listing."""
    query = sa.select(marketplace_subscriptions).where(_s.listing_id == listing_id, _s.status == "active")
    return list(conn.execute(query))


def active_count(conn: Connection, svc_id: str) -> int:
    """How many active subscriptions ``svc_id`` holds."""
    query = sa.select(sa.func.count()).where(_s.svc_id == svc_id, _s.status == "active")
    return int(conn.execute(query).scalar() or 0)


def own_subscriptions(
    conn: Connection, svc_id: str, *, limit: int, after: tuple[int, str] | None
) -> list[Row[Any]]:
    """The caller's subscriptions, newest first."""
    query = (
        sa.select(marketplace_subscriptions, _l.strategy_name)
        .join(marketplace_listings, _l.listing_id == _s.listing_id)
        .where(_s.svc_id == svc_id)
    )
    if after is not None:
        query = query.where(sa.tuple_(_s.created_at, _s.subscription_id) < sa.tuple_(*after))
    return list(conn.execute(query.order_by(_s.created_at.desc(), _s.subscription_id.desc()).limit(limit)))


def due(conn: Connection, now: int, limit: int) -> list[Row[Any]]:
    """Active subscriptions whose next charge is due."""
    query = sa.select(marketplace_subscriptions).where(_s.status == "active", _s.next_charge_at <= now)
    return list(conn.execute(query.order_by(_s.next_charge_at, _s.subscription_id).limit(limit)))


def add_charge(
    conn: Connection, subscription_id: str, units: int, creator_units: int, *, signal: bool
) -> None:
    """Count a charge (a delivered signal, or a month) on a subscription: what the subscriber paid and
    the creator's share of it."""
    values = {
        "credits_spent_units": _s.credits_spent_units + units,
        "creator_units": _s.creator_units + creator_units,
    }
    if signal:
        values["signals_received"] = _s.signals_received + 1
    conn.execute(
        sa.update(marketplace_subscriptions).where(_s.subscription_id == subscription_id).values(**values)
    )


def add_signal_charges(
    conn: Connection, owner: str, strategy_key: str, svc_ids: list[str], units: int, creator_units: int
) -> None:
    """Count one delivered signal (and its price and the creator's share) on the active subscriptions
    of ``svc_ids`` to a strategy's listing."""
    listing = sa.select(_l.listing_id).where(_l.active_key == f"{owner}:{strategy_key}").scalar_subquery()
    for among in key_filters(conn, _s.svc_id, svc_ids):
        conn.execute(
            sa.update(marketplace_subscriptions)
            .where(_s.listing_id == listing, _s.status == "active", among)
            .values(
                signals_received=_s.signals_received + 1,
                credits_spent_units=_s.credits_spent_units + units,
                creator_units=_s.creator_units + creator_units,
            )
        )


def subscription_for(conn: Connection, svc_id: str, owner: str, strategy_key: str) -> str | None:
    """The id of ``svc_id``'s active subscription to the active listing of a strategy."""
    query = (
        sa.select(_s.subscription_id)
        .join(marketplace_listings, _l.listing_id == _s.listing_id)
        .where(_s.svc_id == svc_id, _s.status == "active", _l.active_key == f"{owner}:{strategy_key}")
    )
    return conn.execute(query).scalar()


# ---- bindings -------------------------------------------------------------------------------------


def bind(conn: Connection, subscription_id: str, listing_id: str, svc_id: str, coins: Sequence[str]) -> None:
    """Bind a subscription to its coins."""
    rows = [
        {"subscription_id": subscription_id, "coin": c, "listing_id": listing_id, "svc_id": svc_id}
        for c in coins
    ]
    if rows:
        conn.execute(marketplace_bindings.insert(), rows)


def unbind(conn: Connection, subscription_id: str) -> int:
    """Remove a subscription's bindings; how many."""
    return int(
        conn.execute(sa.delete(marketplace_bindings).where(_b.subscription_id == subscription_id)).rowcount
    )


def recipients(conn: Connection, svc_id: str, strategy_key: str, coin: str) -> list[str]:
    """Subscribers bound to ``coin`` on the active listing of a strategy."""
    query = (
        sa.select(_b.svc_id)
        .join(marketplace_listings, _l.listing_id == _b.listing_id)
        .where(_l.active_key == f"{svc_id}:{strategy_key}", _b.coin == coin)
        .order_by(_b.svc_id)
    )
    return [r.svc_id for r in conn.execute(query)]


def recipients_of(
    conn: Connection, strategies: Sequence[tuple[str, str]]
) -> dict[tuple[str, str, str], list[str]]:
    """:func:`recipients` of many strategies ``(svc_id, strategy_key)``, keyed by ``(svc_id,
    strategy_key, coin)`` (coins nobody is bound to are absent)."""
    out: dict[tuple[str, str, str], list[str]] = {}
    for among in key_filters(conn, _l.active_key, [f"{svc_id}:{key}" for svc_id, key in strategies]):
        query = (
            sa.select(_l.svc_id.label("owner"), _l.strategy_key, _b.coin, _b.svc_id)
            .join(marketplace_listings, _l.listing_id == _b.listing_id)
            .where(among)
            .order_by(_b.svc_id)
        )
        for r in conn.execute(query):
            out.setdefault((r.owner, r.strategy_key, r.coin), []).append(r.svc_id)
    return out


# ---- reviews --------------------------------------------------------------------------------------


def insert_review(conn: Connection, values: Mapping[str, Any]) -> None:
    """A new review (a second of one user on one listing violates the key)."""
    conn.execute(marketplace_reviews.insert().values(**values))


def rating(conn: Connection, listing_id: str) -> tuple[float, int]:
    """Average rating and number of reviews of a listing."""
    row = conn.execute(
        sa.select(sa.func.avg(_r.rating), sa.func.count()).where(_r.listing_id == listing_id)
    ).one()
    return (float(row[0] or 0.0), int(row[1]))


def reviews(
    conn: Connection, listing_id: str, *, limit: int, after: tuple[int, str] | None
) -> list[Row[Any]]:
    """Reviews of a listing, newest first."""
    query = sa.select(marketplace_reviews).where(_r.listing_id == listing_id)
    if after is not None:
        query = query.where(sa.tuple_(_r.created_at, _r.review_id) < sa.tuple_(*after))
    return list(conn.execute(query.order_by(_r.created_at.desc(), _r.review_id.desc()).limit(limit)))


def ever_subscribed(conn: Connection, svc_id: str, listing_id: str) -> bool:
    """Whether ``svc_id`` has or had a subscription to the listing."""
    query = sa.select(sa.func.count()).where(_s.svc_id == svc_id, _s.listing_id == listing_id)
    return bool(conn.execute(query).scalar())
