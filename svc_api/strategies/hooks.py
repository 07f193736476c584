"""What strategies need from the backtests domain, supplied by it (strategies never imports backtests).

The backtests domain registers two functions at import: the per-coin returns of a strategy's latest
full-range backtest (public visibility needs them) and the deletion of a strategy's backtests inside
the deleting transaction. Without hooks a strategy has no backtests.

Example:
    >>> saved = dict(_HOOKS)
    >>> register_backtest_hooks(full_range_returns=lambda *a: None, delete_for_strategy=lambda *a: 0)
    >>> delete_backtests(None, "AB12CD", "mystrat", now=0), full_range_returns(None, "AB12CD", "s", "1h")
    (0, None)
    >>> _HOOKS.clear(); _HOOKS.update(saved)  # back to this process's real hooks, if any
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from svc_api.core.errors import DomainError
from svc_api.core.store import StoreUnavailable
from svc_api.strategies.errors import DeleteUnavailable

logger = logging.getLogger("svc_api.strategies")

ReturnsSource = Callable[[Connection, str, str, str], "dict[str, float] | None"]
DeleteHook = Callable[[Connection, str, str, int], int]
_HOOKS: dict[str, Any] = {}


def register_backtest_hooks(*, full_range_returns: ReturnsSource, delete_for_strategy: DeleteHook) -> None:
    """Let the backtests domain answer for a strategy's results without strategies importing it.

    ``full_range_returns(conn, svc_id, name, timeframe)`` gives the per-coin returns of the latest
    full-range backtest; ``delete_for_strategy(conn, svc_id, name, now)`` deletes a strategy's backtests
    and returns how many. See the module example.
    """
    _HOOKS["returns"] = full_range_returns
    _HOOKS["delete"] = delete_for_strategy


def full_range_returns(
    conn: Connection, svc_id: str, strategy_name: str, timeframe: str
) -> dict[str, float] | None:
    """Coin -> return of the latest full-range backtest on ``timeframe`` (None when there is none)."""
    source = _HOOKS.get("returns")
    return None if source is None else source(conn, svc_id, strategy_name, timeframe)


def delete_backtests(conn: Connection, svc_id: str, strategy_name: str, *, now: int) -> int:
    """Delete a strategy's backtests in the caller's transaction; how many were deleted.

    A failure of the result store becomes :class:`DeleteUnavailable` (503); raising rolls the
    transaction back, so nothing is deleted.
    """
    hook = _HOOKS.get("delete")
    if hook is None:
        return 0
    try:
        return int(hook(conn, svc_id, strategy_name, now))
    except (DomainError, StoreUnavailable, sa.exc.SQLAlchemyError):
        raise
    except Exception as exc:
        logger.exception("deleting the backtests of strategy %r failed", strategy_name)
        raise DeleteUnavailable(
            f"strategy {strategy_name!r} could not be deleted safely (result store unavailable); "
            "nothing was deleted, retry shortly"
        ) from exc


CancelHook = Callable[[Connection, str, str, int], int]
ListedHook = Callable[[Connection, str, str], bool]


def register_marketplace_hooks(
    *,
    cancel_subscriptions: CancelHook,
    has_active_listing: ListedHook,
    withdraw_listing: CancelHook | None = None,
) -> None:
    """Let the marketplace answer for a strategy's listing without strategies importing it.

    ``cancel_subscriptions(conn, svc_id, name, now)`` cancels every active subscription of the
    strategy's listing and returns how many; ``has_active_listing(conn, svc_id, name)`` says whether it
    is listed; ``withdraw_listing(conn, svc_id, name, now)`` unpublishes the listing of a strategy
    that is no longer public and returns how many subscriptions it cancelled. Without hooks a
    strategy has no listing.

    Example:
        >>> saved = dict(_HOOKS)
        >>> register_marketplace_hooks(cancel_subscriptions=lambda *a: 2, has_active_listing=lambda *a: True)
        >>> cancel_subscriptions(None, "AB12CD", "rsidip", 0), has_active_listing(None, "AB12CD", "rsidip")
        (2, True)
        >>> _HOOKS.clear(); _HOOKS.update(saved)
    """
    _HOOKS["cancel"] = cancel_subscriptions
    _HOOKS["listed"] = has_active_listing
    if withdraw_listing is not None:
        _HOOKS["withdraw"] = withdraw_listing


def cancel_subscriptions(conn: Connection, svc_id: str, strategy_name: str, now: int) -> int:
    """Cancel the marketplace subscriptions of a strategy in the caller's transaction; how many."""
    hook = _HOOKS.get("cancel")
    return 0 if hook is None else int(hook(conn, svc_id, strategy_name, now))


def withdraw_listing(conn: Connection, svc_id: str, strategy_name: str, now: int) -> int:
    """Unpublish the listing of a strategy that is no longer public, in the caller's transaction;
    how many subscriptions that cancelled (0 when it is not listed)."""
    hook = _HOOKS.get("withdraw")
    return 0 if hook is None else int(hook(conn, svc_id, strategy_name, now))


def has_active_listing(conn: Connection, svc_id: str, strategy_name: str) -> bool:
    """Whether a strategy is listed on the marketplace."""
    hook = _HOOKS.get("listed")
    return False if hook is None else bool(hook(conn, svc_id, strategy_name))
