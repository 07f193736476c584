"""Writing what an evaluation found: positions become signal rows, and a signal that opens or
closes is delivered (:mod:`svc_api.signals.delivery`), all in the caller's transaction and in a few
statements for a whole batch of watches (a close of 100,000 pairs changes thousands of signals).

A position is keyed by :func:`signal_key` (owner, strategy, version, coin, signal candle), so
recording one again changes nothing: a batch replayed after a crash writes each signal, delivery
and charge once. Two workers recording the same position at once: the second's insert or change
finds the first's and raises :class:`~svc_api.signals.queries.Raced`, so its transaction (and its
deliveries) roll back.

Example:
    >>> signal_key("AB12CD", "rsidip", 1, "BTC", 1_790_000_000_000)
    'sig_0d3a1d9c3df4e01f6161b7ea87749b95'
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

from sqlalchemy.engine import Connection

from svc_api.signals import delivery, queries
from svc_api.signals.evaluate import Position

Found = tuple[Any, Any, Position]
"""A watch, its strategy, and one of its positions (new or changed)."""


def signal_key(svc_id: str, name: str, version: int, coin: str, signal_ms: int) -> str:
    """The stable ``position_key`` of a signal; see the module example."""
    digest = hashlib.sha256(f"{svc_id}|{name}|{version}|{coin}|{signal_ms}".encode()).hexdigest()
    return f"sig_{digest[:32]}"


def record(conn: Connection, found: Sequence[Found], *, now: int, fee_pct: float) -> int:
    """Write the positions ``found`` and what they cause; how many signals were new or changed."""
    if not found:
        return 0
    keyed = {
        signal_key(w.svc_id, w.strategy_name, w.version, w.coin, p.signal_ms): (w, s, p) for w, s, p in found
    }
    old = queries.signal_rows(conn, list(keyed))
    new: list[dict[str, Any]] = []
    changed: dict[str, dict[str, Any]] = {}
    opened, closed = [], []
    for pk, (w, s, p) in keyed.items():
        before = old.get(pk)
        if before is not None and before.status == p.status and before.fill_ms == p.fill_ms:
            continue
        values = _values(p, pk, now)
        if before is None:
            new.append(values | _identity(w, s, p, pk, now))
            opened.append(pk)
        else:
            changed[pk] = values
        if p.status == "closed" and (before is None or before.status != "closed"):
            closed.append(pk)
    queries.insert_signals(conn, new)
    queries.update_signals(conn, changed, {pk: (old[pk].status, old[pk].fill_ms) for pk in changed})
    rows = queries.signal_rows(conn, opened + closed)
    delivery.opened_many(conn, [rows[pk] for pk in opened], fee_pct=fee_pct, now=now)
    delivery.closed_many(conn, [rows[pk] for pk in closed], now=now)
    return len(new) + len(changed)


def result_of(p: Position) -> str:
    """``GAIN``, ``LOSS`` or ``EVEN`` by the trade's net return; ``EXPIRED`` for an order never filled.

    Example:
        >>> result_of(Position(0, "long", 1.0, 1.1, 0.9, "closed", reason="expired"))
        'EXPIRED'
    """
    if p.return_pct is None:
        return "EXPIRED"
    return "GAIN" if p.return_pct > 0 else "LOSS" if p.return_pct < 0 else "EVEN"


def _identity(w: Any, s: Any, p: Position, pk: str, now: int) -> dict[str, Any]:
    """The columns a signal row is created with and keeps."""
    return {
        "position_key": pk,
        "svc_id": w.svc_id,
        "strategy_name": w.strategy_name,
        "version": w.version,
        "coin": w.coin,
        "symbol": w.symbol,
        "market": w.market,
        "timeframe": w.timeframe,
        "side": p.side,
        "signal_mode": s.signal_mode,
        "signal_ms": p.signal_ms,
        "limit_price": p.limit_price,
        "tp_price": p.tp_price,
        "sl_price": p.sl_price,
        "created_at": now,
    }


def _values(p: Position, pk: str, now: int) -> dict[str, Any]:
    """The columns a position's progress changes (the same set for every position)."""
    closed = p.status == "closed"
    return {
        "status": p.status,
        "fill_ms": p.fill_ms,
        "entry_price": p.entry_price,
        "exit_ms": p.exit_ms,
        "exit_price": p.exit_price,
        "reason": p.reason,
        "result": result_of(p) if closed else None,
        "closed_key": f"cls_{pk[4:]}" if closed else None,
        "closed_at": now if closed else None,
    }
