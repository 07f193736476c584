"""User strategies: create from words, read, edit, version, roll back, delete, make public.

The one door of the strategies domain. Other domains and tests call the connection-level functions
(:func:`load_strategy`, :func:`generate`, ...) inside their own transaction; the routes call the use
cases below, which open the transaction themselves and wake the generation worker once it commits.

Where each part lives: request fields in :mod:`~svc_api.strategies.fields`, plan limits in
:mod:`~svc_api.strategies.limits`, reading in :mod:`~svc_api.strategies.records`, changes in
:mod:`~svc_api.strategies.lifecycle`, publishing in :mod:`~svc_api.strategies.visibility`, the
background compilation in :mod:`~svc_api.strategies.generation` and :mod:`~svc_api.strategies.worker`,
SQL in :mod:`~svc_api.strategies.queries`.

Example:
    >>> check_name("rsidip1")
    'rsidip1'
    >>> MAX_ACTIVE["plus"], MAX_COINS["plus"]
    (2, 10)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from svc_api.accounts import service as accounts
from svc_api.core.store import Store
from svc_api.strategies import queries, worker
from svc_api.strategies.errors import (
    GENERATION_RETRY_AFTER,
    DeleteUnavailable,
    GenerationBusy,
    NotEligible,
    StrategyNotActive,
)
from svc_api.strategies.fields import (
    MARKET_TYPES,
    MAX_CONDITION_CHARS,
    POSITION_SIDES,
    SIGNAL_MODES,
    check_name,
)
from svc_api.strategies.hooks import register_backtest_hooks, register_marketplace_hooks
from svc_api.strategies.lifecycle import GENERATION_COST, delete, edit, generate, rollback
from svc_api.strategies.limits import LIVE, MAX_ACTIVE, MAX_COINS, MAX_GENERATIONS, live_count, lock_account
from svc_api.strategies.records import StrategyRecord, account_section, detail, load_strategy, versions
from svc_api.strategies.visibility import set_visibility


def live_strategies(conn: Any) -> list[Any]:
    """Every strategy whose current version is active (for the signal worker): rows with ``svc_id,
    name, version, timeframe, signal_mode, market_type, program_json, visibility, public_coins,
    credits_per_signal`` (units).

    Example:
        >>> with store.read() as conn:
        ...     live_strategies(conn)
        []
    """
    return queries.live_strategies(conn)


def live_within_plans(conn: Any, *, now: int) -> list[Any]:
    """:func:`live_strategies` that their owner's plan in force still allows (ours: when a plan runs
    out nothing is deleted, but only the first ``MAX_ACTIVE`` of the plan, by name, keep producing
    signals: none on ``free``).

    Example:
        >>> with store.read() as conn:
        ...     live_within_plans(conn, now=0)
        []
    """
    return _within_plans(conn, live_strategies(conn), now)


def producing_signals(conn: Any, svc_id: str, name: str, *, now: int) -> bool:
    """Whether the strategy ``name`` of ``svc_id`` is live and its owner's plan in force lets it
    produce signals (the rule of :func:`live_within_plans`).

    Example:
        >>> with store.read() as conn:
        ...     producing_signals(conn, "AB12CD", "smacross", now=0)
        False
    """
    kept = _within_plans(conn, queries.live_strategies(conn, svc_id), now)
    return any(row.name == name for row in kept)


def _within_plans(conn: Any, rows: list[Any], now: int) -> list[Any]:
    plans = accounts.current_plans(conn, {row.svc_id for row in rows}, now=now)
    allowed = {svc_id: MAX_ACTIVE[plan] for svc_id, plan in plans.items()}
    kept = []
    for row in sorted(rows, key=lambda r: (r.svc_id, r.name)):
        if allowed.get(row.svc_id, 0) > 0:
            allowed[row.svc_id] -= 1
            kept.append(row)
    return kept


def price_per_signal(conn: Any, svc_id: str, name: str) -> int:
    """The credits (units) a subscriber pays per delivered signal of a strategy (0 when none).

    Example:
        >>> with store.read() as conn:
        ...     price_per_signal(conn, "NOPE00", "rsidip")
        0
    """
    return queries.credits_per_signal(conn, svc_id, name) or 0


def create_strategy(
    store: Store, svc_id: str, params: Mapping[str, Any], *, max_generations: int, now: int
) -> dict[str, Any]:
    """:func:`generate` in its own write transaction, then wake the generation worker.

    Example:
        >>> create_strategy(store, "NOPE00", {"strategy_name": "rsidip"}, max_generations=2, now=0)
        Traceback (most recent call last):
        ...
        svc_api.core.errors.Invalid: market_type is required: 'spot' or 'futures', got None
    """
    with store.write() as conn:
        reply = generate(conn, svc_id, params, max_generations=max_generations, now=now)
    worker.notify()
    return reply


def edit_strategy(
    store: Store, svc_id: str, params: Mapping[str, Any], *, max_generations: int, now: int
) -> dict[str, Any]:
    """:func:`edit` in its own write transaction, then wake the generation worker.

    Example:
        >>> edit_strategy(store, "NOPE00", {"strategy_name": "rsidip", "tp_condition": "2%"},
        ...               max_generations=2, now=0)
        Traceback (most recent call last):
        ...
        svc_api.core.errors.NotFound: unknown account NOPE00
    """
    with store.write() as conn:
        reply = edit(conn, svc_id, params, max_generations=max_generations, now=now)
    worker.notify()
    return reply


def strategy_detail(store: Store, svc_id: str, strategy_name: Any) -> dict[str, Any]:
    """:func:`detail` in a read transaction.

    Example:
        >>> strategy_detail(store, "NOPE00", "rsidip")
        Traceback (most recent call last):
        ...
        svc_api.core.errors.NotFound: strategy 'rsidip' not found
    """
    with store.read() as conn:
        return detail(conn, svc_id, strategy_name)


def strategy_versions(
    store: Store, svc_id: str, strategy_name: Any, *, limit: int, before: int | None
) -> tuple[dict[str, Any], bool]:
    """:func:`versions` in a read transaction.

    Example:
        >>> strategy_versions(store, "NOPE00", None, limit=5, before=None)
        Traceback (most recent call last):
        ...
        svc_api.core.errors.Invalid: strategy_name is required
    """
    with store.read() as conn:
        return versions(conn, svc_id, strategy_name, limit=limit, before=before)


def rollback_strategy(
    store: Store, svc_id: str, strategy_name: Any, target_version: Any, *, now: int
) -> dict[str, Any]:
    """:func:`rollback` in its own write transaction.

    Example:
        >>> rollback_strategy(store, "NOPE00", "rsidip", 0, now=0)
        Traceback (most recent call last):
        ...
        svc_api.core.errors.Invalid: target_version must be a positive integer
    """
    with store.write() as conn:
        return rollback(conn, svc_id, strategy_name, target_version, now=now)


def delete_strategy(
    store: Store, svc_id: str, strategy_name: Any, confirm_name: Any, *, now: int
) -> dict[str, Any]:
    """:func:`delete` in its own write transaction (backtests included, or nothing at all).

    Example:
        >>> delete_strategy(store, "NOPE00", "rsidip", None, now=0)
        Traceback (most recent call last):
        ...
        svc_api.core.errors.Invalid: confirm_name is required: repeat the strategy name 'rsidip' to delete it
    """
    with store.write() as conn:
        return delete(conn, svc_id, strategy_name, confirm_name, now=now)


def change_visibility(store: Store, svc_id: str, params: Mapping[str, Any], *, now: int) -> dict[str, Any]:
    """:func:`set_visibility` in its own write transaction.

    Example:
        >>> change_visibility(store, "NOPE00", {"strategy_name": "rsidip", "visibility": "private"}, now=0)
        Traceback (most recent call last):
        ...
        svc_api.core.errors.NotFound: unknown account NOPE00
    """
    with store.write() as conn:
        return set_visibility(conn, svc_id, params, now=now)


__all__ = [
    "GENERATION_COST",
    "GENERATION_RETRY_AFTER",
    "LIVE",
    "MARKET_TYPES",
    "MAX_ACTIVE",
    "MAX_COINS",
    "MAX_CONDITION_CHARS",
    "MAX_GENERATIONS",
    "POSITION_SIDES",
    "SIGNAL_MODES",
    "DeleteUnavailable",
    "GenerationBusy",
    "NotEligible",
    "StrategyNotActive",
    "StrategyRecord",
    "account_section",
    "change_visibility",
    "check_name",
    "create_strategy",
    "delete",
    "delete_strategy",
    "detail",
    "edit",
    "edit_strategy",
    "generate",
    "live_count",
    "live_strategies",
    "live_within_plans",
    "load_strategy",
    "lock_account",
    "price_per_signal",
    "register_backtest_hooks",
    "register_marketplace_hooks",
    "rollback",
    "rollback_strategy",
    "set_visibility",
    "strategy_detail",
    "strategy_versions",
    "versions",
]
