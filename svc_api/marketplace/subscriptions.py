"""Subscriptions: subscribe (the first month charged at once), unsubscribe, monthly renewals, and
the cancellations a creator's change causes.

Rules of ``marketplace_subscribe``, in order: a valid license (403), the listing exists (404) and is
active (400), not one's own (400), ``selected_coins`` a non-empty subset of ``listed_coins`` (400)
within the plan's coins per strategy (400), no active subscription to it already (409), the plan's
active strategies (own active strategies plus subscriptions; 403), the balance (402). The account
row is locked first, so concurrent calls by one user take turns: one subscription, one charge.

Money (ours, ``docs/api.md``): the monthly price goes to the creator less the platform fee, as a
signal's price does, with ledger action ``marketplace_signal``. A renewal charges once per period at
``next_charge_at`` (a compare-and-set on that column, so two schedulers never both charge); a
subscriber who cannot pay it is ``lapsed`` (bindings removed, notified), and so, uncharged, is one
whose month would buy no signals: the subscriber's licence has run out, or the creator's plan no
longer lets the strategy produce signals. A cancellation the
subscriber did not ask for (price change, unpublish, strategy edit or rollback) refunds nothing: the
month already paid bought the signals delivered until then.

Example:
    >>> subscription_id_of("AB12CD", "lst_1")
    'sub_87473239973a4ea3f534d18695c33858'
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from typing import Any

from sqlalchemy.engine import Connection

from svc_api.accounts import service as accounts
from svc_api.core.errors import Conflict, Forbidden, InsufficientCredits, Invalid, NotFound
from svc_api.core.money import from_units
from svc_api.credits import service as credits
from svc_api.marketplace import queries
from svc_api.notifications import service as notifications
from svc_api.strategies import service as strategies

PERIOD_SECONDS = 30 * 86_400


def subscription_id_of(svc_id: str, listing_id: str) -> str:
    """The subscription id of a user and a listing (the same after a cancel and a new subscribe)."""
    return "sub_" + hashlib.sha256(f"{svc_id}|{listing_id}".encode()).hexdigest()[:32]


def subscribe(
    conn: Connection,
    svc_id: str,
    listing_id: str,
    coins: list[str],
    *,
    now: int,
    fee_pct: float,
    servable: Callable[[str, str], bool] | None = None,
) -> dict[str, Any]:
    """``marketplace_subscribe`` in the caller's transaction (all or nothing): ``coins``, a list
    of strings, are checked against the listing and the plan here.

    ``servable(coin, timeframe)`` tells whether the data store can serve a coin's candles of the
    listing's timeframe; a selected coin it cannot serve is refused (400 ``timeframe_unavailable``)
    before anything is charged, since no signal of it could ever be delivered.
    """
    strategies.lock_account(conn, svc_id)
    plan = accounts.current_plan(conn, svc_id, now=now)
    if plan == "free":
        raise Forbidden("a valid license is required to subscribe; your plan has expired or was never bought")
    row = queries.listing(conn, listing_id)
    if row is None or (row.status != "active" and row.svc_id != svc_id):
        raise NotFound(f"listing {listing_id!r} not found")
    if row.status != "active":
        raise Invalid("this listing is not active")
    if row.svc_id == svc_id:
        raise Invalid("you cannot subscribe to your own listing")
    listed = json.loads(row.listed_coins)
    if not coins or len(set(coins)) != len(coins) or any(c not in listed for c in coins):
        raise Invalid(f"selected_coins must be distinct coins of this listing: {', '.join(listed)}")
    if len(coins) > strategies.MAX_COINS.get(plan, 0):
        raise Invalid(f"your {plan} plan allows {strategies.MAX_COINS.get(plan, 0)} coins per strategy")
    dead = [c for c in coins if servable is not None and not servable(c, row.timeframe)]
    if dead:
        raise Invalid(
            f"no {row.timeframe} candles can be served for {', '.join(dead)}: this listing would "
            "deliver no signals of them",
            reason="timeframe_unavailable",
            extra={"coins": dead, "timeframe": row.timeframe},
        )
    sub_id = subscription_id_of(svc_id, listing_id)
    old = queries.subscription(conn, sub_id)
    if old is not None and old.status == "active":
        raise Conflict("you already subscribe to this listing")
    used, most = (
        queries.active_count(conn, svc_id) + strategies.live_count(conn, svc_id),
        strategies.MAX_ACTIVE[plan],
    )
    if used >= most:
        raise Forbidden(f"your {plan} plan allows {most} active strategies and subscriptions together")
    period = 1 if old is None else int(old.periods_charged) + 1
    values = {
        "subscription_id": sub_id,
        "listing_id": listing_id,
        "svc_id": svc_id,
        "creator_svc_id": row.svc_id,
        "selected_coins": json.dumps(coins),
        "status": "active",
        "monthly_price_units": row.monthly_price_units,
        "periods_charged": period,
        "next_charge_at": now + PERIOD_SECONDS,
        "expires_at": now + PERIOD_SECONDS,
        "created_at": now if old is None else old.created_at,
        "updated_at": now,
    }
    queries.upsert_subscription(conn, old is not None, values)
    paid = _charge(conn, sub_id, svc_id, row, period, fee_pct, now)
    queries.bind(conn, sub_id, listing_id, svc_id, coins)
    return {
        "subscription_id": sub_id,
        "listing_id": listing_id,
        "strategy_name": row.strategy_name,
        "active_coins": coins,
        "billing_period": "monthly",
        "monthly_price_credits": from_units(row.monthly_price_units),
        "credits_charged": from_units(paid),
        "next_charge_at": now + PERIOD_SECONDS,
        "expires_at": now + PERIOD_SECONDS,
        "bindings_created": len(coins),
    }


def _charge(
    conn: Connection, sub_id: str, svc_id: str, row: Any, period: int, fee_pct: float, now: int
) -> int:
    units = int(row.monthly_price_units)
    paid = credits.pay_with_fee(
        conn,
        svc_id,
        row.svc_id,
        units,
        fee_pct,
        "marketplace_signal",
        f"subscription {row.strategy_name}, month {period}",
        f"{sub_id}:{period}",
        now=now,
    )
    if not paid["replayed"]:
        queries.add_charge(conn, sub_id, units, int(paid["payee_share"]), signal=False)
    return units


def unsubscribe(conn: Connection, svc_id: str, subscription_id: str, *, now: int) -> dict[str, Any]:
    """``marketplace_unsubscribe``: the caller's active subscription becomes ``cancelled``."""
    row = queries.subscription(conn, subscription_id)
    if row is None or row.svc_id != svc_id:
        raise NotFound(f"subscription {subscription_id!r} not found")
    if row.status != "active":
        raise Conflict(f"this subscription is already {row.status}")
    removed = _end(conn, row, "cancelled", now)
    return {"status": "cancelled", "subscription_id": subscription_id, "bindings_removed": removed}


def _end(conn: Connection, row: Any, status: str, now: int) -> int:
    queries.set_subscription(conn, row.subscription_id, {"status": status, "updated_at": now})
    return queries.unbind(conn, row.subscription_id)


def cancel_all(conn: Connection, listing_id: str, *, now: int, why: str) -> int:
    """Cancel every active subscription of a listing (bindings removed, subscribers notified)."""
    rows = queries.active_subscriptions_of_listing(conn, listing_id)
    for row in rows:
        _end(conn, row, "cancelled", now)
        notifications.notify(
            conn,
            row.svc_id,
            "Subscription cancelled",
            f"The creator's listing changed: {why}.",
            "subscription_cancelled",
            now=now,
        )
    return len(rows)


def renew_due(conn: Connection, *, now: int, fee_pct: float, limit: int = 100) -> int:
    """Charge the subscriptions whose period has ended, each once; how many were renewed."""
    renewed = 0
    for row in queries.due(conn, now, limit):
        listing = queries.listing(conn, row.listing_id)
        why_not = _not_worth_renewing(conn, row.svc_id, listing, now)
        if why_not is not None:
            if _end_if_due(conn, row, now):
                notifications.notify(
                    conn, row.svc_id, "Subscription lapsed", why_not, "subscription_lapsed", now=now
                )
            continue
        step = {
            "next_charge_at": row.next_charge_at + PERIOD_SECONDS,
            "expires_at": row.next_charge_at + PERIOD_SECONDS,
            "periods_charged": row.periods_charged + 1,
            "updated_at": now,
        }
        if not queries.set_subscription(
            conn, row.subscription_id, step, next_charge_at=row.next_charge_at, status="active"
        ):
            continue  # another scheduler renewed it first
        try:
            with conn.begin_nested():
                _charge(conn, row.subscription_id, row.svc_id, listing, row.periods_charged + 1, fee_pct, now)
            renewed += 1
        except InsufficientCredits:
            _end(conn, row, "lapsed", now)
            notifications.notify(
                conn,
                row.svc_id,
                "Subscription lapsed",
                f"Your balance did not cover the month of {listing.strategy_name}.",
                "subscription_lapsed",
                now=now,
            )
    return renewed


def _not_worth_renewing(conn: Connection, svc_id: str, listing: Any, now: int) -> str | None:
    """Why a month would buy no signals (ours: it lapses uncharged), or None when it would."""
    name = listing.strategy_name
    if accounts.current_plan(conn, svc_id, now=now) == "free":
        return f"Your licence has run out, so the month of {name} was not charged."
    if not strategies.producing_signals(conn, listing.svc_id, listing.strategy_key, now=now):
        return f"{name} no longer produces signals under its creator's plan, so its month was not charged."
    return None


def _end_if_due(conn: Connection, row: Any, now: int) -> bool:
    # the same compare-and-set as a renewal: of two schedulers, one ends it (and notifies)
    ended = queries.set_subscription(
        conn,
        row.subscription_id,
        {"status": "lapsed", "updated_at": now},
        next_charge_at=row.next_charge_at,
        status="active",
    )
    if ended:
        queries.unbind(conn, row.subscription_id)
    return ended


def entry_of(row: Any) -> dict[str, Any]:
    """The subscription resource."""
    return {
        "subscription_id": row.subscription_id,
        "listing_id": row.listing_id,
        "creator_svc_id": row.creator_svc_id,
        "strategy_name": row.strategy_name,
        "selected_coins": json.loads(row.selected_coins),
        "status": row.status,
        "billing_period": "monthly",
        "monthly_price_credits": from_units(row.monthly_price_units),
        "signals_received": int(row.signals_received),
        "credits_spent": from_units(int(row.credits_spent_units)),
        "next_charge_at": int(row.next_charge_at),
        "expires_at": int(row.expires_at),
        "created_at": int(row.created_at),
    }
