"""What strategies need from the backtests domain, supplied by it (strategies never imports backtests).

The backtests domain registers two functions at import: the per-coin returns of a strategy's latest
full-range backtest (public visibility needs them) and the deletion of a strategy's backtests inside
the deleting transaction. Without hooks a strategy has no backtests.

Example:
    >>> saved = dict(_HOOKS)
    >>> register_backtest_hooks(full_range_returns=lambda *a: None, delete_for_strategy=lambda *a: 0)
    >>> delete_backtests(None, "AB12CD", "mystrat"), full_range_returns(None, "AB12CD", "mystrat", "1h")
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
DeleteHook = Callable[[Connection, str, str], int]
_HOOKS: dict[str, Any] = {}


def register_backtest_hooks(*, full_range_returns: ReturnsSource, delete_for_strategy: DeleteHook) -> None:
    """Let the backtests domain answer for a strategy's results without strategies importing it.

    ``full_range_returns(conn, svc_id, name, timeframe)`` gives the per-coin returns of the latest
    full-range backtest; ``delete_for_strategy(conn, svc_id, name)`` deletes a strategy's backtests
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


def delete_backtests(conn: Connection, svc_id: str, strategy_name: str) -> int:
    """Delete a strategy's backtests in the caller's transaction; how many were deleted.

    A failure of the result store becomes :class:`DeleteUnavailable` (503); raising rolls the
    transaction back, so nothing is deleted.
    """
    hook = _HOOKS.get("delete")
    if hook is None:
        return 0
    try:
        return int(hook(conn, svc_id, strategy_name))
    except (DomainError, StoreUnavailable, sa.exc.SQLAlchemyError):
        raise
    except Exception as exc:
        logger.exception("deleting the backtests of strategy %r failed", strategy_name)
        raise DeleteUnavailable(
            f"strategy {strategy_name!r} could not be deleted safely (result store unavailable); "
            "nothing was deleted, retry shortly"
        ) from exc
