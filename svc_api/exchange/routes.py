"""``/user`` exchange operations: link, unlink and log in with an exchange account, balances,
order preview and placement, order history.

Example:
    >>> sorted(USER)[:3]
    ['exchange_balance', 'exchange_link', 'exchange_login']
"""

from __future__ import annotations

from typing import Any

from svc_api.core.dispatch import Call, Operation
from svc_api.core.fields import platform_of
from svc_api.exchange import service as exchange


def _link(call: Call) -> dict[str, Any]:
    return exchange.link(call.services, call.svc_id, call.params, now=call.now)


def _unlink(call: Call) -> dict[str, Any]:
    return exchange.unlink(call.services, call.svc_id)


def _login(call: Call) -> dict[str, Any]:
    return exchange.login(
        call.services, call.params, ip=call.principal.ip, platform=platform_of(call.params), now=call.now
    )


def _balance(call: Call) -> dict[str, Any]:
    return exchange.balances(call.services, call.svc_id)


def _preview(call: Call) -> dict[str, Any]:
    return exchange.preview(call.services, call.svc_id, call.params)


def _order(call: Call) -> dict[str, Any]:
    return exchange.place(call.services, call.svc_id, call.params, now=call.now)


def _history(call: Call) -> dict[str, Any]:
    limit = call.page(25, 1, 100)
    status = call.params.get("status") or None
    kind = f"orders:{status}"
    page, last = exchange.history(
        call.services, call.svc_id, status=status, limit=limit, after=call.cursor(kind)
    )
    reply = call.user_page(kind, "orders", page, last is not None, last)
    return {**reply, "status": status}


USER: dict[str, Operation] = {
    "exchange_link": Operation(_link, access="session"),
    "exchange_unlink": Operation(_unlink, access="session"),
    "exchange_login": Operation(_login, access="public"),
    "exchange_balance": Operation(_balance),
    "exchange_order_preview": Operation(_preview),
    "exchange_order": Operation(_order),
    "order_history": Operation(_history),
}
TRADE = frozenset({"exchange_order"})
"""Placing an order needs an API key's ``trade`` permission (linking needs a session)."""
