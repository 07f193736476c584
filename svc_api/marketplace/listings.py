"""Listings: publish a strategy's signals, change the price or description, unpublish, and read them.

Publishing in ``full`` mode lists the requested coins whose latest completed ``full_range`` of the
strategy's timeframe made money over at least :data:`MIN_TRADES` trades; the others are returned in
``rejected_coins`` as ``negative_pnl``, ``insufficient_trades`` or ``no_data``. ``signal_only`` lists
every requested coin the data store has. In both modes a coin whose series cannot serve the
strategy's timeframe (neither stored nor resampled from a finer stored one) is rejected as
``timeframe_unavailable``: the signal worker could never watch it. A listing is named
``<strategy>_<creator id>``. A price change or an unpublish cancels every active subscription
(their bindings go with them).

Example:
    >>> listing_id_of("AB12CD", "rsidip", 0)
    'lst_dc680915f52a6871b5e2c6fb'
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

from sqlalchemy.engine import Connection

from svc_api.backtests import service as backtests
from svc_api.core.errors import Forbidden, Invalid, NotFound
from svc_api.core.money import from_units, to_units
from svc_api.market import service as market
from svc_api.marketplace import queries
from svc_api.marketplace.subscriptions import cancel_all
from svc_api.strategies import service as strategies

MIN_TRADES = 10
MAX_DESCRIPTION = 500
_MARKUP = re.compile(r"<[^>]*>|&[a-zA-Z#0-9]+;")


def listing_id_of(svc_id: str, strategy_key: str, seq: int) -> str:
    """The id of a strategy's ``seq``-th listing (0 first); see the module example."""
    return "lst_" + hashlib.sha256(f"{svc_id}|{strategy_key}|{seq}".encode()).hexdigest()[:24]


def description_of(value: Any) -> str:
    """A listing description: at most 500 characters, no HTML.

    Example:
        >>> description_of("<b>hi</b>")
        Traceback (most recent call last):
        ...
        svc_api.core.errors.Invalid: description must not contain HTML
    """
    if value is None:
        return ""
    if not isinstance(value, str):
        raise Invalid("description must be a string")
    if len(value) > MAX_DESCRIPTION:
        raise Invalid(f"description must be at most {MAX_DESCRIPTION} characters")
    if _MARKUP.search(value):
        raise Invalid("description must not contain HTML")
    return value.strip()


def price_of(value: Any) -> int:
    """A monthly price in credit units: a number from 1 to 1000.

    Example:
        >>> price_of(0)
        Traceback (most recent call last):
        ...
        svc_api.core.errors.Invalid: monthly_price_credits must be a number from 1 to 1000
    """
    if isinstance(value, bool) or not isinstance(value, int | float) or not 1 <= value <= 1000:
        raise Invalid("monthly_price_credits must be a number from 1 to 1000")
    return to_units(value)


def publish(
    services: Any,
    conn: Connection,
    svc_id: str,
    key: str,
    *,
    description: str,
    price: int,
    mode: str,
    requested: list[str],
    now: int,
) -> dict[str, Any]:
    """``marketplace_publish`` in the caller's transaction, the fields checked (``price`` in credit
    units)."""
    strategies.lock_account(conn, svc_id)
    record = strategies.load_strategy(conn, svc_id, key)
    if queries.active_listing_of(conn, svc_id, key) is not None:
        raise Invalid(f"strategy {key!r} is already listed; update or unpublish that listing")
    listed, rejected, summary = _coins(services, svc_id, key, record.timeframe, mode, requested)
    if not listed:
        raise Invalid("no requested coin can be listed", extra={"rejected_coins": rejected})
    listing_id = listing_id_of(svc_id, key, queries.listings_count(conn, svc_id, key))
    pnl = sum(s["pnl_pct"] for s in summary.values()) / len(summary) if summary else 0.0
    wins = sum(s["win_rate"] for s in summary.values()) / len(summary) if summary else 0.0
    queries.insert_listing(
        conn,
        {
            "listing_id": listing_id,
            "svc_id": svc_id,
            "strategy_key": key,
            "active_key": f"{svc_id}:{key}",
            "strategy_name": f"{key}_{svc_id}",
            "market_type": record.market_type,
            "timeframe": record.timeframe,
            "signal_mode": mode,
            "listed_coins": json.dumps(listed),
            "rejected_coins": json.dumps(rejected),
            "backtest_summary": json.dumps(summary),
            "description": description,
            "monthly_price_units": price,
            "total_pnl_pct": pnl,
            "win_rate_pct": wins,
            "status": "active",
            "created_at": now,
            "updated_at": now,
        },
    )
    return {
        "listing_id": listing_id,
        "strategy_key": key,
        "strategy_name": f"{key}_{svc_id}",
        "display_strategy_name": key,
        "status": "active",
        "listed_coins": listed,
        "rejected_coins": rejected,
        "monthly_price_credits": from_units(price),
        "billing_period": "monthly",
        "signal_mode": mode,
        "backtest_summary": summary,
    }


def _coins(
    services: Any, svc_id: str, key: str, timeframe: str, mode: str, requested: list[str]
) -> tuple[list[str], dict[str, str], dict[str, Any]]:
    catalog = market.catalog_of(services)
    results = backtests.latest_full_range(services, svc_id, key, timeframe) if mode == "full" else {}
    if results is None:
        raise Invalid(f"strategy {key!r} has no completed full_range backtest on {timeframe}; run one first")
    listed, rejected, summary = [], {}, {}
    for coin in dict.fromkeys(requested):
        try:
            _market, symbol = market.find_series(catalog, coin)
        except NotFound:
            rejected[coin] = "no_data"
            continue
        if not market.serves_timeframe(catalog, _market, symbol, timeframe):
            # no stored series the timeframe can be resampled from: the worker could never watch it,
            # so subscribers would pay for signals that never come
            rejected[coin] = "timeframe_unavailable"
            continue
        if mode == "signal_only":
            listed.append(coin)
            continue
        found = results.get(coin, results.get(symbol))
        if found is None:
            rejected[coin] = "no_data"
        elif found["total_return_pct"] <= 0:
            rejected[coin] = "negative_pnl"
        elif found["total_trades"] < MIN_TRADES:
            rejected[coin] = "insufficient_trades"
        else:
            listed.append(coin)
            summary[coin] = {
                "pnl_pct": found["total_return_pct"],
                "win_rate": found["win_rate"],
                "trades": found["total_trades"],
            }
    return listed, rejected, summary


def serves(catalog: Any, coin: str, timeframe: str) -> bool:
    """Whether the data store can serve ``coin``'s candles of ``timeframe`` (stored or resampled).

    Example:
        >>> from svc_engine.data import Catalog, DataStore
        >>> serves(Catalog(DataStore("/nonexistent")), "BTC", "4h")
        False
    """
    try:
        mkt, symbol = market.find_series(catalog, coin)
    except NotFound:
        return False
    return market.serves_timeframe(catalog, mkt, symbol, timeframe)


def owned(conn: Connection, svc_id: str, listing_id: Any) -> Any:
    """The caller's listing (404 unknown, 403 someone else's)."""
    row = find(conn, listing_id)
    if row.svc_id != svc_id:
        raise Forbidden("this listing is not yours")
    return row


def find(conn: Connection, listing_id: Any) -> Any:
    """A listing by id (404 unknown)."""
    if not isinstance(listing_id, str) or not listing_id:
        raise Invalid("listing_id is required")
    row = queries.listing(conn, listing_id)
    if row is None:
        raise NotFound(f"listing {listing_id!r} not found")
    return row


def update(
    conn: Connection, svc_id: str, listing_id: str, *, price: Any, description: Any, now: int
) -> dict[str, Any]:
    """``marketplace_update_listing``: a changed price cancels every active subscription. The new
    price and description, as sent, are checked once the listing is known to be the caller's."""
    row = owned(conn, svc_id, listing_id)
    changes: dict[str, Any] = {}
    if price is not None:
        units = price_of(price)
        if units != row.monthly_price_units:
            changes["monthly_price_units"] = units
    if description is not None:
        changes["description"] = description_of(description)
    if not changes:
        raise Invalid("nothing to update: give a new monthly_price_credits or description")
    if row.status != "active":
        raise Invalid("this listing is not active")
    queries.update_listing(conn, row.listing_id, changes | {"updated_at": now})
    cancelled = (
        cancel_all(conn, row.listing_id, now=now, why="its price changed")
        if "monthly_price_units" in changes
        else 0
    )
    note = "price changed: every active subscription was cancelled" if cancelled else "listing updated"
    fields = ["monthly_price_credits" if k == "monthly_price_units" else k for k in changes]
    return {
        "listing_id": row.listing_id,
        "updated_fields": fields,
        "subscriptions_cancelled": cancelled,
        "note": note,
    }


def unpublish(conn: Connection, svc_id: str, listing_id: Any, *, now: int) -> dict[str, Any]:
    """``marketplace_unpublish``: ``removed``, every subscription cancelled."""
    row = owned(conn, svc_id, listing_id)
    if row.status != "active":
        raise Invalid("this listing is not active")
    return remove(conn, row, now=now, why="the listing was removed")


def remove(conn: Connection, row: Any, *, now: int, why: str) -> dict[str, Any]:
    """Unpublish an active listing: ``removed`` (out of browse, no new subscribers, the strategy
    free to list anew), every subscription cancelled and its subscriber told ``why``."""
    bindings = sum(
        len(json.loads(s.selected_coins))
        for s in queries.active_subscriptions_of_listing(conn, row.listing_id)
    )
    cancelled = cancel_all(conn, row.listing_id, now=now, why=why)
    queries.update_listing(conn, row.listing_id, {"status": "removed", "active_key": None, "updated_at": now})
    return {"status": "removed", "subscriptions_cancelled": cancelled, "bindings_removed": bindings}


def summary_of(row: Any) -> dict[str, Any]:
    """The listing summary resource (owner masked)."""
    return {
        "listing_id": row.listing_id,
        "strategy_name": row.strategy_name,
        "owner": mask(row.svc_id),
        "market_type": row.market_type,
        "timeframe": row.timeframe,
        "signal_mode": row.signal_mode,
        "listed_coins": json.loads(row.listed_coins),
        "billing_period": "monthly",
        "monthly_price_credits": from_units(row.monthly_price_units),
        "total_pnl_pct": row.total_pnl_pct,
        "win_rate_pct": row.win_rate_pct,
        "subscriber_count": int(row.subscriber_count),
        "total_signals_delivered": int(row.total_signals_delivered),
    }


def own_of(row: Any) -> dict[str, Any]:
    """An own listing: the summary plus ``status`` and ``total_credits_earned``."""
    return summary_of(row) | {"status": row.status, "total_credits_earned": from_units(int(row.earned_units))}


def mask(svc_id: str) -> str:
    """A creator id shown to others: first two and last two characters.

    Example:
        >>> mask("AB12CD")
        'AB**CD'
    """
    return svc_id[:2] + "*" * max(0, len(svc_id) - 4) + svc_id[-2:]
