"""Live signals: evaluate the watched strategies at each candle close, and read them.

:func:`run_once` is one pass of the signal worker (:mod:`svc_api.signals.worker`): it brings the
watches in line with the live strategies, then advances every watch whose next candle has closed on
the market clock (:mod:`svc_api.market.clock`) with the engine's batched live evaluator
(:mod:`svc_api.signals.batch`). What an evaluation causes (signal rows, deliveries, notifications,
charges, the watch's new position; :mod:`svc_api.signals.recording`) commits in transactions of a
batch of watches, each watch first
moved from the candle it was read at: two workers never both write one evaluation, and a killed
worker's batch is simply done again.

Reading: :func:`active_signals` (waiting for their entry or open) and :func:`signal_history`
(closed), each the caller's own signals and those delivered to them; :func:`live_signal` for other
domains (exchange orders from a signal).

Example:
    >>> active_signals(store, "AB12CD", None, limit=10, after=None)
    ([], None)
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy.engine import Connection

from svc_api.core.store import Store
from svc_api.market import service as market
from svc_api.marketplace import service as marketplace
from svc_api.signals import batch, partitions, queries, recording, watches
from svc_api.signals.contract import Signal as SignalReply  # noqa: F401 (the shape other domains reply with)

logger = logging.getLogger("svc_api.signals")


def market_now_ms(services: Any) -> int:
    """Market time (ms) on the app's market clock."""
    replay = services.settings.market_replay_speed > 0
    newest = market.newest_close(market.catalog_of(services)) if replay else None
    return market.market_clock_of(services, newest).now() * 1000


def run_once(services: Any) -> dict[str, int]:
    """One pass of the worker: ``{"watches", "evaluated", "signals"}`` (signals new or changed)."""
    store: Store = services.store
    catalog = market.catalog_of(services)
    now_ms, now = market_now_ms(services), services.clock.now()
    with store.write() as conn:
        listed = marketplace.listed_coins_of_all(conn)
        pairs = watches.sync(conn, catalog, now_ms, now=now, listed=listed)
    ours = partitions.my_partitions(services)
    pairs = [(w, s) for w, s in pairs if partitions.partition_of(w.market, w.symbol) in ours]
    fee = services.settings.marketplace_fee_pct

    def record(conn: Connection, found: Sequence[recording.Found]) -> int:
        return recording.record(conn, found, now=services.clock.now(), fee_pct=fee)

    evaluated, changed = batch.run_pass(services, pairs, now_ms, record)
    return {"watches": len(pairs), "evaluated": evaluated, "signals": changed}


# ---- reading ----------------------------------------------------------------------------------------


def active_signals(
    store: Store, svc_id: str, names: Sequence[str] | None, *, limit: int, after: tuple[int, str] | None
) -> tuple[list[dict[str, Any]], tuple[int, str] | None]:
    """A page of the caller's live signals and the position after it (None on the last page)."""
    with store.read() as conn:
        rows = queries.active_page(conn, svc_id, names, limit=limit + 1, after=after)
    page = rows[:limit]
    last = (int(page[-1].created_at), page[-1].position_key) if len(rows) > limit else None
    return [active_entry(r) for r in page], last


def signal_history(
    store: Store, svc_id: str, filters: Mapping[str, str], *, limit: int, after: tuple[int, str] | None
) -> tuple[list[dict[str, Any]], tuple[int, str] | None]:
    """One page of closed signals: ``limit`` candidates, then the filters (so a page may be empty
    while more follow), and the position after the candidates (None on the last page)."""
    with store.read() as conn:
        rows = queries.closed_page(conn, svc_id, limit=limit + 1, after=after)
    page = rows[:limit]
    last = (int(page[-1].closed_at), page[-1].position_key) if len(rows) > limit else None
    kept = [r for r in page if all(_field(r, svc_id, name) == value for name, value in filters.items())]
    return [closed_entry(r) for r in kept], last


def _field(row: Any, svc_id: str, name: str) -> str:
    if name == "owner":
        return "me" if row.svc_id == svc_id else "subscribed"
    return str(getattr(row, name))


def live_signal(conn: Connection, svc_id: str, position_key: str) -> dict[str, Any] | None:
    """A signal waiting for its entry or open, visible to ``svc_id`` (None otherwise), for orders.

    Example:
        >>> with store.read() as conn:
        ...     live_signal(conn, "AB12CD", "sig_x") is None
        True
    """
    row = queries.live_by_key(conn, svc_id, position_key)
    return None if row is None else active_entry(row) | {"symbol": row.symbol, "market": row.market}


def signal_brief(conn: Connection, position_key: str) -> dict[str, str] | None:
    """``{strategy_name, coin, owner, status}`` of any signal (None: no such key), for chat filters.

    Example:
        >>> with store.read() as conn:
        ...     signal_brief(conn, "sig_x") is None
        True
    """
    row = queries.signal_row(conn, position_key)
    if row is None:
        return None
    return {"strategy_name": row.strategy_name, "coin": row.coin, "owner": row.svc_id, "status": row.status}


def active_entry(row: Any) -> dict[str, Any]:
    """The Active signal resource of a row (prices as strings with the instrument's decimals)."""
    digits = market.rules(row.market, row.symbol).price_precision
    return {
        "position_key": row.position_key,
        "coin": row.coin,
        "strategy_name": row.strategy_name,
        "owner": row.svc_id,
        "side": row.side.upper(),
        "signal_mode": row.signal_mode,
        "entry_price": market.fixed(row.limit_price, digits),
        "limit_price": market.fixed(row.tp_price, digits),
        "stop_price": market.fixed(row.sl_price, digits),
        "source": "user",
        "status": row.status,
        "created_at": int(row.created_at),
        "signal_time": int(row.signal_ms) // 1000,
    }


def closed_entry(row: Any) -> dict[str, Any]:
    """The Closed signal resource of a row."""
    entry = active_entry(row)
    digits = market.rules(row.market, row.symbol).price_precision
    exit_price = "" if row.exit_price is None else market.fixed(row.exit_price, digits)
    return {
        "closed_key": row.closed_key,
        "coin": entry["coin"],
        "strategy_name": entry["strategy_name"],
        "side": entry["side"],
        "signal_mode": entry["signal_mode"],
        "entry_price": entry["entry_price"],
        "limit_price": entry["limit_price"],
        "stop_price": entry["stop_price"],
        "exit_price": exit_price,
        "result": row.result,
        "reason": row.reason,
        "source": "user",
        "created_at": int(row.created_at),
        "closed_at": int(row.closed_at),
        "owner": row.svc_id,
        "position_key": row.position_key,
    }
