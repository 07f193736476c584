"""``/user`` exchange operations: link, unlink and log in with an exchange account, balances,
order preview and placement, order history.

Example:
    >>> sorted(USER)[:3]
    ['exchange_balance', 'exchange_link', 'exchange_login']
"""

from __future__ import annotations

from typing import Any

from svc_api.accounts.service import SessionGrantReply
from svc_api.core.contract import NoFields
from svc_api.core.dispatch import Call, Operation
from svc_api.exchange import contract as c
from svc_api.exchange import service as exchange


def _link(call: Call, req: c.ExchangeLink) -> dict[str, Any]:
    return exchange.link(call.services, call.svc_id, req.credentials(), now=call.now)


def _unlink(call: Call, req: NoFields) -> dict[str, Any]:
    return exchange.unlink(call.services, call.svc_id)


def _login(call: Call, req: c.ExchangeLogin) -> dict[str, Any]:
    return exchange.login(
        call.services, req.credentials(), ip=call.principal.ip, platform=req.platform, now=call.now
    )


def _balance(call: Call, req: NoFields) -> dict[str, Any]:
    return exchange.balances(call.services, call.svc_id)


def _preview(call: Call, req: c.OrderPreviewFields) -> dict[str, Any]:
    return exchange.preview(call.services, call.svc_id, req.order())


def _order(call: Call, req: c.OrderFields) -> dict[str, Any]:
    return exchange.place(call.services, call.svc_id, req.order(), now=call.now)


def _history(call: Call, req: c.ExchangeOrderHistory) -> dict[str, Any]:
    status = req.status or None
    kind = f"orders:{status}"
    page, last = exchange.history(
        call.services, call.svc_id, status=status, limit=req.limit, after=call.cursor(kind)
    )
    reply = call.user_page(kind, "orders", page, last is not None, last)
    return {**reply, "status": status}


USER: dict[str, Operation] = {
    "exchange_link": Operation(
        _link,
        access="session",
        request=c.ExchangeLink,
        reply=c.ExchangeLinked,
        summary="Link the caller's exchange account by an API key pair.",
        errors=c.LINK_ERRORS,
    ),
    "exchange_unlink": Operation(
        _unlink,
        access="session",
        request=NoFields,
        reply=c.ExchangeUnlinked,
        summary="Forget the caller's exchange keys.",
        errors=c.UNLINK_ERRORS,
    ),
    "exchange_login": Operation(
        _login,
        access="public",
        request=c.ExchangeLogin,
        reply=SessionGrantReply,
        summary="Open a session with the API key pair of a linked exchange account.",
        errors=c.LOGIN_ERRORS,
    ),
    "exchange_balance": Operation(
        _balance,
        request=NoFields,
        reply=c.ExchangeBalance,
        summary="The linked exchange account's free balances.",
        errors=c.BALANCE_ERRORS,
    ),
    "exchange_order_preview": Operation(
        _preview,
        request=c.OrderPreviewFields,
        reply=c.OrderPreview,
        summary="Check an OCO order against the exchange's rules and the balance; nothing placed.",
        errors=c.PREVIEW_ERRORS,
    ),
    "exchange_order": Operation(
        _order,
        request=c.OrderFields,
        reply=c.OrderResult,
        summary="Place a spot OCO order once per idempotency key.",
        errors=c.ORDER_ERRORS,
    ),
    "order_history": Operation(
        _history,
        request=c.ExchangeOrderHistory,
        reply=c.OrderHistoryPage,
        summary="The caller's orders, newest first.",
    ),
}
TRADE = frozenset({"exchange_order"})
"""Placing an order needs an API key's ``trade`` permission (linking needs a session)."""
