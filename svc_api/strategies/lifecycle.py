"""Changing strategies: create from words, edit (a new version), roll back, delete.

Each generation (create or edit) adds a version in status ``generating``, charges
:data:`GENERATION_COST` credit upfront and is compiled by the background worker
(:mod:`svc_api.strategies.generation`) into ``active`` or ``failed`` (then refunded in full).
Every function here runs in the caller's write transaction and locks the account row first.

Example:
    >>> from svc_api.strategies.contract import NewStrategy
    >>> new = NewStrategy.model_validate({"strategy_name": "rsidip", "market_type": "spot",
    ...     "signal_mode": "signal_only", "timeframe": "1h", "entry_condition": "RSI(14) < 30"})
    >>> with store.write() as conn:
    ...     generate(conn, "NOPE00", new, now=0)
    Traceback (most recent call last):
    ...
    svc_api.core.errors.NotFound: unknown account NOPE00
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from sqlalchemy.engine import Connection, Row

from svc_api.core.errors import Conflict
from svc_api.credits import service as credits
from svc_api.strategies import queries
from svc_api.strategies.fields import CONDITIONS, conditions
from svc_api.strategies.hooks import (
    cancel_subscriptions,
    delete_backtests,
    has_active_listing,
    withdraw_listing,
)
from svc_api.strategies.limits import (
    LIVE,
    MAX_GENERATIONS,
    check_generation_cap,
    check_plan_limit,
    lock_account,
)
from svc_api.strategies.records import strategy_head, strategy_version

if TYPE_CHECKING:
    from svc_api.strategies.contract import NewStrategy

GENERATION_COST = 1
# The columns of a version an edit carries over before applying the changed conditions.
_SPEC = ("market_type", "position_side", "signal_mode", "timeframe", *CONDITIONS)


def generate(
    conn: Connection,
    svc_id: str,
    new: NewStrategy,
    *,
    now: int,
    max_generations: int = MAX_GENERATIONS,
) -> dict[str, Any]:
    """Create a strategy (version 1, private, ``generating``) and charge the generation upfront.

    ``new`` is the checked request (:class:`~svc_api.strategies.contract.NewStrategy`). Checks, in
    order: plan limit on active strategies (403), name taken (409),
    generations in progress (``max_generations``, from ``SVC_MAX_CONCURRENT_GENERATIONS``;
    :class:`~svc_api.strategies.errors.GenerationBusy`, 429), credits (402). See the module example.
    """
    name, spec = new.strategy_name, new.spec()
    lock_account(conn, svc_id)
    check_plan_limit(conn, svc_id, exclude=None, now=now)
    if queries.find_strategy(conn, svc_id, name) is not None:
        raise Conflict(f"you already have a strategy named {name!r}")
    check_generation_cap(conn, svc_id, max_generations)
    queries.insert_strategy(conn, svc_id, name, now=now)
    _add_generation(conn, svc_id, name, 1, spec, now)
    return {
        "strategy_name": name,
        "version": 1,
        "signal_mode": spec["signal_mode"],
        "status": "generating",
        "cost_upfront": GENERATION_COST,
        "cost_refunded_on_failure": True,
    }


def edit(
    conn: Connection,
    svc_id: str,
    name: str,
    changes: Mapping[str, Any],
    *,
    now: int,
    max_generations: int = MAX_GENERATIONS,
) -> dict[str, Any]:
    """A new version with changed conditions, regenerated (and charged) like a new strategy.

    ``changes``: the conditions sent as they came (checked here with the current version's signal
    mode); conditions not given are copied from the current version.

    Example:
        >>> with store.write() as conn:
        ...     edit(conn, "NOPE00", "rsidip", {"tp_condition": "2%"}, now=0)
        Traceback (most recent call last):
        ...
        svc_api.core.errors.NotFound: unknown account NOPE00
    """
    lock_account(conn, svc_id)
    head = strategy_head(conn, svc_id, name)
    current = strategy_version(conn, svc_id, name, head.current_version)
    spec = {column: getattr(current, column) for column in _SPEC}
    spec.update(conditions({**spec, **changes}, spec["signal_mode"]))
    if current.status not in LIVE:
        check_plan_limit(conn, svc_id, exclude=name, now=now)
    check_generation_cap(conn, svc_id, max_generations)
    version = queries.last_version(conn, svc_id, name) + 1
    _add_generation(conn, svc_id, name, version, spec, now)
    queries.update_strategy(conn, svc_id, name, current_version=version, updated_at=now)
    cancelled = cancel_subscriptions(conn, svc_id, name, now)
    return {
        "strategy_name": name,
        "version": version,
        "status": "generating",
        "copiers_cancelled": cancelled,
        "cost_upfront": GENERATION_COST,
        "cost_refunded_on_failure": True,
    }


def rollback(conn: Connection, svc_id: str, name: str, wanted: int, *, now: int) -> dict[str, Any]:
    """A new version copying version ``target`` (program included, no charge); the strategy goes private.

    Example:
        >>> with store.write() as conn:
        ...     rollback(conn, "NOPE00", "rsidip", 2, now=0)
        Traceback (most recent call last):
        ...
        svc_api.core.errors.NotFound: unknown account NOPE00
    """
    lock_account(conn, svc_id)
    head = strategy_head(conn, svc_id, name)
    copied = strategy_version(conn, svc_id, name, wanted)
    if copied.status == "generating":
        raise Conflict(f"version {wanted} is still generating; roll back once it has finished")
    if (
        copied.status == "active"
        and strategy_version(conn, svc_id, name, head.current_version).status not in LIVE
    ):
        check_plan_limit(conn, svc_id, exclude=name, now=now)
    version = queries.last_version(conn, svc_id, name) + 1
    queries.insert_version(conn, _copy_of(copied, version, now))
    queries.update_strategy(
        conn,
        svc_id,
        name,
        current_version=version,
        visibility="private",
        credits_per_signal=0,
        public_coins="[]",
        public_timeframe=None,
        updated_at=now,
    )
    # private now: its listing may take no new subscribers and sells nothing, so it is unpublished
    cancelled = withdraw_listing(conn, svc_id, name, now)
    return {
        "strategy_name": name,
        "new_version": version,
        "rolled_back_to": wanted,
        "status": copied.status,
        "visibility": "private",
        "credits_per_signal": 0,
        "marketplace_subscriptions_cancelled": cancelled,
    }


def delete(conn: Connection, svc_id: str, name: str, *, now: int) -> dict[str, Any]:
    """Delete a strategy, its versions and its backtests (the request confirmed the name).

    ``deleted_objects`` counts the versions and the backtest records removed.

    Example:
        >>> with store.write() as conn:
        ...     delete(conn, "NOPE00", "rsidip", now=0)
        Traceback (most recent call last):
        ...
        svc_api.core.errors.NotFound: unknown account NOPE00
    """
    lock_account(conn, svc_id)
    strategy_head(conn, svc_id, name)
    if has_active_listing(conn, svc_id, name):
        raise Conflict(f"strategy {name!r} is listed on the marketplace; unpublish the listing first")
    backtests = delete_backtests(conn, svc_id, name, now=now)
    removed = queries.delete_strategy(conn, svc_id, name)
    return {"strategy_name": name, "deleted": True, "deleted_objects": removed + backtests}


def _copy_of(row: Row[Any], version: int, now: int) -> dict[str, Any]:
    """A version row copying ``row`` (program and status included) as a new, uncharged generation."""
    return dict(row._mapping) | {
        "version": version,
        "generation_id": uuid.uuid4().hex,
        "cost_units": 0,
        "refunded": False,
        "attempts": 0,
        "claimed_by": None,
        "claimed_at": None,
        "rolled_back_from": row.version,
        "created_at": now,
        "updated_at": now,
    }


def _add_generation(
    conn: Connection, svc_id: str, name: str, version: int, spec: Mapping[str, Any], now: int
) -> None:
    generation_id = uuid.uuid4().hex
    credits.spend_credits(
        conn,
        svc_id,
        GENERATION_COST,
        "strategy_generate",
        f"Strategy generation: {name} v{version}",
        idempotency_key=f"strategy-generate-{generation_id}",
        now=now,
    )
    queries.insert_version(
        conn,
        {
            "svc_id": svc_id,
            "name": name,
            "version": version,
            "generation_id": generation_id,
            "status": "generating",
            "cost_units": credits.to_units(GENERATION_COST),
            "created_at": now,
            "updated_at": now,
            **spec,
        },
    )
