"""Manually confirmed orders from a signal's button: the preview of the OCO for the linked exchange
account, an explicit confirmation, the placement, and the outcome edited into the message.

The confirmation's idempotency key derives from the account, the signal and the confirmation button
(its server-side token), so a double tap, a retried callback or the same button pressed three times
all place one OCO: ``exchange_order`` answers the later ones from the stored order. An order the
exchange has not confirmed yet (``processing``) is followed by the bot's housekeeping until it is
``submitted`` or ``failed``, and the message then shows the result.

Example:
    >>> confirmation_key("AB12CD", "sig_1", "tok") == confirmation_key("AB12CD", "sig_1", "tok")
    True
    >>> len(confirmation_key("AB12CD", "sig_1", "tok"))
    44
    >>> sized("100", Decimal("25000"), step=Decimal("0.00001"), digits=5)
    '0.00400'
"""

from __future__ import annotations

import hashlib
from decimal import ROUND_DOWN, Decimal
from typing import Any

from svc_api.bot import preferences, queries
from svc_api.bot.replies import Reply, button
from svc_api.bot.texts import placed_text, preview_text, refusal
from svc_api.core.errors import ServiceError
from svc_api.exchange import service as exchange
from svc_api.signals import service as signals


def confirmation_key(svc_id: str, position_key: str, token: str) -> str:
    """The ``idempotency_key`` of one confirmation: the same for every press of that button."""
    return "bot-" + hashlib.sha256(f"{svc_id}|{position_key}|{token}".encode()).hexdigest()[:40]


def sized(order_usdt: str, entry: Decimal, *, step: Decimal, digits: int) -> str:
    """The quantity worth ``order_usdt`` at ``entry``, down to the symbol's step, with its decimals."""
    quantity = Decimal(order_usdt) / entry
    if step > 0:
        quantity = (quantity / step).to_integral_value(ROUND_DOWN) * step
    return f"{quantity.quantize(Decimal(1).scaleb(-digits), ROUND_DOWN):.{digits}f}"


def _fixed(text: str, digits: int) -> str:
    return f"{Decimal(text).quantize(Decimal(1).scaleb(-digits)):.{digits}f}"


def order_params(services: Any, svc_id: str, position_key: str) -> dict[str, Any] | str:
    """The ``exchange_order`` fields of a live signal, sized by the account's preference, or a refusal."""
    with services.store.read() as conn:
        signal = signals.live_signal(conn, svc_id, position_key)
        prefs = preferences.preferences_of(conn, [svc_id])[svc_id]
    if signal is None:
        return refusal({"error": "not_found"}, 404)
    symbol = str(signal["symbol"])
    futures = "futures" in str(signal.get("market", ""))
    try:
        rules = exchange.order_rules(services, symbol)
    except ServiceError as exc:
        return refusal(exc.body(), exc.status)
    pp, qp = int(rules["price_precision"]), int(rules["quantity_precision"])
    entry = Decimal(signal["entry_price"])
    return {
        "symbol": symbol,
        "side": "BUY" if signal["side"] == "LONG" else "SELL",
        "quantity": sized(prefs.order_usdt, entry, step=Decimal(rules["step_size"]), digits=qp),
        "entry_price": _fixed(signal["entry_price"], pp),
        "take_profit_price": _fixed(signal["limit_price"], pp),
        "stop_loss_price": _fixed(signal["stop_price"], pp),
        "market_type": "futures" if futures else "spot",
        "order_source": "signal",
        "signal_position_key": position_key,
    }


def preview(services: Any, chat: str, svc_id: str, position_key: str, *, now: int) -> Reply:
    """The order button of a signal: the preview, with Confirm and Cancel."""
    params = order_params(services, svc_id, position_key)
    if isinstance(params, str):
        return Reply(params)
    try:
        shown = exchange.preview(services, svc_id, exchange.order_of(params))
    except ServiceError as exc:
        return Reply(refusal(exc.body(), exc.status))
    name = exchange.exchange_of(services).name
    with services.store.write() as conn:
        confirm = button(conn, chat, svc_id, "Confirm order", "confirm", {"params": params}, now=now)
        cancel = button(conn, chat, svc_id, "Cancel", "cancel", {}, now=now)
    return Reply(preview_text(shown, name), buttons=((confirm, cancel),))


def confirm(services: Any, chat: str, svc_id: str, token: str, params: dict[str, Any], *, now: int) -> Reply:
    """The Confirm button: place the previewed OCO once under the confirmation's key."""
    key = confirmation_key(svc_id, str(params["signal_position_key"]), token)
    try:
        order = exchange.order_of({**params, "idempotency_key": key}, need_key=True)
        placed = exchange.place(services, svc_id, order, now=now)
    except ServiceError as exc:
        return Reply(refusal(exc.body(), exc.status), edit=True)
    if placed.get("status") == "processing":
        return Reply(placed_text(placed), edit=True, follow=(svc_id, key))
    return Reply(placed_text(placed), edit=True, notice="Order placed")


def follow(services: Any, chat: str, message_id: int, svc_id: str, key: str, *, now: int) -> None:
    """Follow an order still ``processing`` from the message ``message_id``."""
    with services.store.write() as conn:
        queries.follow_order(
            conn, svc_id=svc_id, idempotency_key=key, chat_id=chat, message_id=message_id, created_at=now
        )


def settled(services: Any, *, now: int) -> list[tuple[str, int, str]]:
    """The orders followed that have settled since: ``(chat, message_id, final text)`` each, no
    longer followed once returned."""
    with services.store.read() as conn:
        rows = queries.open_orders(conn)
    out = []
    for row in rows:
        state = exchange.order_state(services, row.svc_id, row.idempotency_key)
        if state is not None and state["state"] == "processing":
            continue
        text = placed_text({}, state) if state is not None else "The order was not placed."
        with services.store.write() as conn:
            queries.order_done(conn, row.svc_id, row.idempotency_key, now=now)
        out.append((row.chat_id, int(row.message_id), text))
    return out
