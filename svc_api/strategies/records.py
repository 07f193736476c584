"""Reading strategies: the record the engine runs, the Strategy resource, its versions, the account map.

A strategy belongs to one account and is named uniquely within it; another user's strategy is "not
found". The strategy's status is the status of its current version.

Example:
    >>> with store.read() as conn:
    ...     account_section(conn, "NOPE00")
    {'strategies': {}, 'active_own_strategies': 0}
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from sqlalchemy.engine import Connection, Row

from svc_api.accounts.service import add_account_section
from svc_api.core.cursors import keyset_page
from svc_api.core.errors import NotFound
from svc_api.credits import service as credits
from svc_api.strategies import queries
from svc_api.strategies.errors import StrategyNotActive
from svc_api.strategies.fields import check_name
from svc_api.strategies.limits import LIVE
from svc_engine.strategy import Strategy


@dataclass(frozen=True)
class StrategyRecord:
    """One version of a strategy as the engine needs it (see :func:`load_strategy`).

    Example:
        >>> from svc_engine.strategy import compile_strategy
        >>> s = compile_strategy("close is above SMA(50)")
        >>> rec = StrategyRecord("smaup", 1, "active", "1h", "spot", "long", "signal_orders",
        ...                      s.candle_count, s.to_json())
        >>> rec.compiled() == s
        True
    """

    name: str
    version: int
    status: str
    timeframe: str
    market_type: str
    position_side: str
    signal_mode: str
    candle_count: int
    program_json: str
    entry_condition: str = ""
    tp_condition: str | None = None
    sl_condition: str | None = None
    exit_condition: str | None = None

    def compiled(self) -> Strategy:
        """The engine's compiled program of this version."""
        return Strategy.from_json(self.program_json)


def strategy_head(conn: Connection, svc_id: str, name: str) -> Row[Any]:
    """The head row of a strategy of ``svc_id``; 404 when there is none.

    Example:
        >>> with store.read() as conn:
        ...     strategy_head(conn, "NOPE00", "rsidip")
        Traceback (most recent call last):
        ...
        svc_api.core.errors.NotFound: strategy 'rsidip' not found
    """
    row = queries.find_strategy(conn, svc_id, name)
    if row is None:
        raise NotFound(f"strategy {name!r} not found")
    return row


def strategy_version(conn: Connection, svc_id: str, name: str, version: int) -> Row[Any]:
    """One version row of a strategy; 404 when there is none.

    Example:
        >>> with store.read() as conn:
        ...     strategy_version(conn, "NOPE00", "rsidip", 3)
        Traceback (most recent call last):
        ...
        svc_api.core.errors.NotFound: strategy 'rsidip' has no version 3
    """
    row = queries.find_version(conn, svc_id, name, version)
    if row is None:
        raise NotFound(f"strategy {name!r} has no version {version}")
    return row


def load_strategy(
    conn: Connection, svc_id: str, strategy_name: str, *, version: int | None = None
) -> StrategyRecord:
    """The current (or the given) version of a strategy of ``svc_id``, ready to run.

    Raises:
        NotFound: no such strategy (or version) for this account (another user's is not found either).
        StrategyNotActive: (409, ``strategy_not_active``) the version is ``generating`` or ``failed``.

    Example:
        >>> with store.read() as conn:
        ...     load_strategy(conn, "NOPE00", "rsidip")
        Traceback (most recent call last):
        ...
        svc_api.core.errors.NotFound: strategy 'rsidip' not found
    """
    head = strategy_head(conn, svc_id, strategy_name)
    row = strategy_version(conn, svc_id, strategy_name, head.current_version if version is None else version)
    if row.status != "active":
        detail = "is still generating" if row.status == "generating" else "failed to generate"
        raise StrategyNotActive(
            f"strategy {strategy_name!r} version {row.version} {detail}; only an active strategy can be used"
        )
    return StrategyRecord(
        name=row.name,
        version=int(row.version),
        status=row.status,
        timeframe=row.timeframe,
        market_type=row.market_type,
        position_side=row.position_side,
        signal_mode=row.signal_mode,
        candle_count=int(row.candle_count),
        program_json=row.program_json,
        entry_condition=row.entry_condition,
        tp_condition=row.tp_condition,
        sl_condition=row.sl_condition,
        exit_condition=row.exit_condition,
    )


def detail(conn: Connection, svc_id: str, name: str) -> dict[str, Any]:
    """The Strategy resource (current version); ``error`` is added when it failed to generate.

    Example:
        >>> with store.read() as conn:
        ...     detail(conn, "NOPE00", "rsidip")
        Traceback (most recent call last):
        ...
        svc_api.core.errors.NotFound: strategy 'rsidip' not found
    """
    head = strategy_head(conn, svc_id, name)
    row = strategy_version(conn, svc_id, name, head.current_version)
    out = {
        "strategy_name": name,
        "status": row.status,
        "version": int(row.version),
        "market_type": row.market_type,
        "position_side": row.position_side,
        "signal_mode": row.signal_mode,
        "timeframe": row.timeframe,
        "entry_condition": row.entry_condition,
        "tp_condition": row.tp_condition,
        "sl_condition": row.sl_condition,
        "exit_condition": row.exit_condition,
        "visibility": head.visibility,
        "credits_per_signal": credits.from_units(head.credits_per_signal),
        "public_coins": json.loads(head.public_coins),
        "candle_count": int(row.candle_count or 0),
        "leverage": int(head.leverage),
        "created_at": int(head.created_at),
        "updated_at": int(max(head.updated_at, row.updated_at)),
    }
    if row.status == "failed" and row.error:
        out["error"] = json.loads(row.error)
    return out


def versions(
    conn: Connection, svc_id: str, strategy_name: Any, *, limit: int, before: int | None = None
) -> tuple[dict[str, Any], bool]:
    """The versions of a strategy, newest first, keyset-paged below version ``before``
    (``strategy_name`` as sent: it is checked here, after the route has read the cursor).

    Returns ``({strategy_name, current_version, versions}, has_more)``.

    Example:
        >>> with store.read() as conn:
        ...     versions(conn, "NOPE00", "rsidip", limit=25)
        Traceback (most recent call last):
        ...
        svc_api.core.errors.NotFound: strategy 'rsidip' not found
    """
    name = check_name(strategy_name)
    head = strategy_head(conn, svc_id, name)
    rows, more = keyset_page(
        lambda n: queries.version_page(conn, svc_id, name, limit=n, before=before), limit
    )
    page = [_version_entry(r) for r in rows]
    body = {"strategy_name": name, "current_version": int(head.current_version), "versions": page}
    return body, more


def _version_entry(row: Row[Any]) -> dict[str, Any]:
    return {
        "version": int(row.version),
        "created_at": int(row.created_at),
        "status": row.status,
        "candle_count": int(row.candle_count or 0),
        "entry_condition": row.entry_condition,
        "tp_condition": row.tp_condition,
        "sl_condition": row.sl_condition,
        "exit_condition": row.exit_condition,
        "rolled_back_from": row.rolled_back_from,
    }


@add_account_section
def account_section(conn: Connection, svc_id: str) -> dict[str, Any]:
    """The ``strategies`` map and ``active_own_strategies`` count of ``account_info``; see the
    module example."""
    rows = queries.current_versions(conn, svc_id)
    mapping = {
        r.name: {
            "name": r.name,
            "status": r.status,
            "candle_count": int(r.candle_count or 0),
            "market_type": r.market_type,
            "leverage": int(r.leverage),
        }
        for r in rows
    }
    return {"strategies": mapping, "active_own_strategies": sum(r.status in LIVE for r in rows)}
