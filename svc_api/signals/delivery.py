"""Delivering a signal: its owner and each subscriber holding the coin are told once when it opens
and once when it closes; a subscriber pays the strategy's price per signal when it opens.

Everything happens in the evaluating transaction, so a signal, its deliveries, its notifications and
its charges are written together or not at all: a worker killed mid-run leaves nothing, and the next
run writes each exactly once (deliveries are keyed by signal and user, charges by the same key).

A subscriber whose balance does not cover the price does not receive the signal (it is neither shown
to them nor charged) and gets a ``signal_withheld`` notification instead: never a negative balance,
never a free signal. The creator receives the price less the platform fee (``MARKETPLACE_FEE_PCT``),
the fee goes to the platform account: ledger action ``marketplace_signal`` on all three.

Example:
    >>> EVENTS
    ('signal_opened', 'signal_closed', 'signal_withheld')
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy.engine import Connection

from svc_api.core import pubsub
from svc_api.credits import service as credits
from svc_api.marketplace import service as marketplace
from svc_api.notifications import service as notifications
from svc_api.signals import queries
from svc_api.strategies import service as strategies

EVENTS = ("signal_opened", "signal_closed", "signal_withheld")


def opened(conn: Connection, row: Any, *, fee_pct: float, now: int) -> int:
    """Deliver one new signal (:func:`opened_many` of one); how many subscribers received it."""
    return opened_many(conn, [row], fee_pct=fee_pct, now=now)


def opened_many(conn: Connection, rows: Sequence[Any], *, fee_pct: float, now: int) -> int:
    """Deliver new signals to their owners and paying subscribers; how many deliveries to
    subscribers. The subscribers of every signal are read in one query, and the notifications of
    all of them written together; each signal with subscribers then pays and records its deliveries
    in a few statements for all its subscribers (a signal may have thousands)."""
    if not rows:
        return 0
    found = marketplace.signal_recipients_of(conn, sorted({(r.svc_id, r.strategy_name) for r in rows}))
    events: list[notifications.Event] = []
    pushes: list[tuple[str, dict[str, Any]]] = []
    delivered = 0
    for row in rows:
        title, body = _opened_text(row)
        events.append(notifications.Event([row.svc_id], title, body, "signal_opened", row.position_key))
        users = [u for u in found.get((row.svc_id, row.strategy_name, row.coin), ()) if u != row.svc_id]
        paid = (
            _to_subscribers(conn, row, users, title, body, events, fee_pct=fee_pct, now=now) if users else []
        )
        delivered += len(paid)
        _push(pushes, [row.svc_id, *paid], "opened", row)
    notifications.notify_events(conn, events, now=now)
    pubsub.publish_many(conn, pushes)
    return delivered


def _opened_text(row: Any) -> tuple[str, str]:
    title = f"{row.strategy_name}: {row.side.upper()} {row.coin}"
    return title, f"entry {row.limit_price:g}, take profit {row.tp_price:g}, stop {row.sl_price:g}"


def _to_subscribers(
    conn: Connection,
    row: Any,
    users: list[str],
    title: str,
    body: str,
    events: list[Any],
    *,
    fee_pct: float,
    now: int,
) -> list[str]:
    """Charge and record one signal's subscribers (those it reached before skipped); who received it.
    Their notifications, and the ``signal_withheld`` ones of those who could not pay, join ``events``."""
    key = row.position_key
    done = queries.delivered_to(conn, key)
    users = [u for u in users if u not in done]
    price = strategies.price_per_signal(conn, row.svc_id, row.strategy_name)
    paid = (
        users
        if price <= 0
        else credits.pay_many_with_fee(
            conn,
            users,
            row.svc_id,
            price,
            fee_pct,
            "marketplace_signal",
            f"signal {row.strategy_name} {row.coin}",
            f"signal:{key}",
            now=now,
        )
    )
    share = price - int(price * fee_pct // 100) if price > 0 else 0
    each = {"position_key": key, "charged_units": price, "created_at": now}
    queries.add_deliveries(conn, [each | {"svc_id": u} for u in paid])
    marketplace.record_deliveries(conn, paid, row.svc_id, row.strategy_name, price, share)
    events.append(notifications.Event(paid, title, body, "signal_opened", key))
    kept = set(paid)
    withheld = [u for u in users if u not in kept]
    why = f"your balance does not cover {credits.from_units(price)} credits per signal"
    events.append(notifications.Event(withheld, f"{title} withheld", why, "signal_withheld", key))
    return paid


def closed(conn: Connection, row: Any, *, now: int) -> None:
    """Tell the owner and everyone who received a signal that it closed (:func:`closed_many` of one)."""
    closed_many(conn, [row], now=now)


def closed_many(conn: Connection, rows: Sequence[Any], *, now: int) -> None:
    """Tell the owners and everyone who received these signals that they closed (once)."""
    if not rows:
        return
    keys = [row.position_key for row in rows]
    receivers = queries.receivers_of(conn, keys)
    events = []
    pushes: list[tuple[str, dict[str, Any]]] = []
    for row in rows:
        title = f"{row.strategy_name}: {row.coin} closed ({row.result})"
        body = (
            f"exit {row.exit_price:g}" if row.exit_price is not None else "the entry order expired unfilled"
        )
        users = [row.svc_id, *receivers.get(row.position_key, ())]
        events.append(notifications.Event(users, title, body, "signal_closed", row.position_key))
        _push(pushes, users, "closed", row)
    notifications.notify_events(conn, events, now=now)
    pubsub.publish_many(conn, pushes)
    queries.mark_closed_sent(conn, [k for k in keys if k in receivers])


def _push(pushes: list[tuple[str, dict[str, Any]]], users: list[str], event: str, row: Any) -> None:
    """Add the real-time ``signals`` event of a signal to each of ``users`` to ``pushes`` (published
    after the commit, best effort)."""
    message = {
        "channel": "signals",
        "event": event,
        "position_key": row.position_key,
        "coin": row.coin,
        "strategy_name": row.strategy_name,
        "owner": row.svc_id,
        "side": row.side.upper(),
        "entry_price": f"{row.limit_price:g}",
        "limit_price": f"{row.tp_price:g}",
        "stop_price": f"{row.sl_price:g}",
        "status": row.status,
        "result": getattr(row, "result", None),
    }
    pushes += [(pubsub.user_topic(svc_id), message) for svc_id in dict.fromkeys(users)]
