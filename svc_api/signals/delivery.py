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
    """Deliver a new signal to its owner and paying subscribers; how many subscribers received it.
    Every subscriber is handled in a few statements for all of them (a signal may have thousands)."""
    title = f"{row.strategy_name}: {row.side.upper()} {row.coin}"
    body = f"entry {row.limit_price:g}, take profit {row.tp_price:g}, stop {row.sl_price:g}"
    key = row.position_key
    notifications.notify_many(conn, [row.svc_id], title, body, "signal_opened", key=key, now=now)
    done = queries.delivered_to(conn, key)
    users = [u for u in marketplace.signal_recipients(conn, row.svc_id, row.strategy_name, row.coin)
             if u != row.svc_id and u not in done]  # fmt: skip
    price = strategies.price_per_signal(conn, row.svc_id, row.strategy_name)
    paid = users if price <= 0 else credits.pay_many_with_fee(
        conn, users, row.svc_id, price, fee_pct, "marketplace_signal",
        f"signal {row.strategy_name} {row.coin}", f"signal:{key}", now=now,
    )  # fmt: skip
    share = price - int(price * fee_pct // 100) if price > 0 else 0
    each = {"position_key": key, "charged_units": price, "created_at": now}
    queries.add_deliveries(conn, [each | {"svc_id": u} for u in paid])
    marketplace.record_deliveries(conn, paid, row.svc_id, row.strategy_name, price, share)
    notifications.notify_many(conn, paid, title, body, "signal_opened", key=key, now=now)
    withheld = [u for u in users if u not in set(paid)]
    why = f"your balance does not cover {credits.from_units(price)} credits per signal"
    notifications.notify_many(conn, withheld, f"{title} withheld", why, "signal_withheld", key=key, now=now)
    _push(conn, [row.svc_id, *paid], "opened", row)
    return len(paid)


def closed(conn: Connection, row: Any, *, now: int) -> None:
    """Tell the owner and everyone who received a signal that it closed (once)."""
    title = f"{row.strategy_name}: {row.coin} closed ({row.result})"
    body = f"exit {row.exit_price:g}" if row.exit_price is not None else "the entry order expired unfilled"
    users = [row.svc_id, *queries.receivers(conn, row.position_key)]
    notifications.notify_many(conn, users, title, body, "signal_closed", key=row.position_key, now=now)
    queries.mark_closed_sent(conn, row.position_key)
    _push(conn, users, "closed", row)


def _push(conn: Connection, users: list[str], event: str, row: Any) -> None:
    """The real-time ``signals`` event of a signal to each of ``users`` (best effort)."""
    message = {
        "channel": "signals", "event": event, "position_key": row.position_key, "coin": row.coin,
        "strategy_name": row.strategy_name, "owner": row.svc_id, "side": row.side.upper(),
        "entry_price": f"{row.limit_price:g}", "limit_price": f"{row.tp_price:g}",
        "stop_price": f"{row.sl_price:g}",
        "status": row.status, "result": getattr(row, "result", None),
    }  # fmt: skip
    for svc_id in dict.fromkeys(users):
        pubsub.publish(conn, pubsub.user_topic(svc_id), message)
