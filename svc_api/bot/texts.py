"""What the bot says: the account and plan pages, signals, order previews and outcomes, and every
refusal in plain words.

Example:
    >>> print(money_line({"plan": "pro", "svc_credits": 12.5}))
    Plan: pro · credits: 12.5
    >>> refusal({"error": "invalid_request", "code": "exchange_not_linked", "message": "x"}, 400)[:36]
    'No exchange account is linked to you'
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

HELP = """Commands:
/start: create your account (or /start CODE to link an existing one)
/account: plan, credits, expiry, strategies, connections
/plans: prices and how to pay
/login: a one-time code to log in to the app
/key: your developer API key (/key generate LABEL, /key status, /key revoke)
/signals: signal preferences (strategies, coins, mute, automation mode)
/unlink: stop this chat acting for your account
/help: this list"""

NOT_LINKED = (
    "This chat is not linked to an account. Send /start to create one, or /start CODE with the code "
    "from the app to link yours."
)


def when(ts: int) -> str:
    """A Unix time as ``YYYY-MM-DD HH:MM UTC`` (``never`` for 0).

    Example:
        >>> when(0), when(1790812800)
        ('never', '2026-10-01 00:00 UTC')
    """
    if ts <= 0:
        return "never"
    return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%d %H:%M UTC")


def money_line(info: Mapping[str, Any]) -> str:
    """The plan and credits of an Account resource."""
    return f"Plan: {info['plan']} · credits: {info['svc_credits']:g}"


def account_page(info: Mapping[str, Any], limits: Mapping[str, int]) -> str:
    """``/account``: plan, credits, licence and demo expiry, active strategies, connections."""
    strategies = info.get("strategies") or {}
    names = ", ".join(sorted(strategies)) if isinstance(strategies, Mapping) else ""
    connections = info.get("connections") or {}
    linked = [name for name, on in connections.items() if on]
    return "\n".join(
        [
            f"Account {info['svc_id']}",
            money_line(info),
            f"Licence expires: {when(int(info.get('license_expires_at', 0)))}",
            f"Demo expires: {when(int(info.get('demo_expires_at', 0)))}",
            f"Active strategies: {info.get('active_own_strategies', 0)} of {limits.get(info['plan'], 0)}"
            + (f" ({names})" if names else ""),
            f"Connections: {', '.join(linked) if linked else 'none'}",
        ]
    )


def plans_page(
    svc_id: str, prices: Mapping[str, Mapping[str, Decimal]], limits: Mapping[str, Mapping[str, int]]
) -> str:
    """``/plans``: the plan table's prices and limits, and how to pay with the ``svc_id``."""
    lines = ["Plans (USD; annual = 50% of twelve months):"]
    for plan, price in prices.items():
        lines.append(
            f"{plan}: {price['monthly']:g}/month or {price['annual']:g}/year · "
            f"{limits['requests'][plan]} requests/min · {limits['strategies'][plan]} active strategies · "
            f"{limits['coins'][plan]} coins per strategy"
        )
    lines += [
        "",
        "How to pay (a month adds 30 days, a year 365, on top of the time you hold):",
        f"- card checkout: write {svc_id} in the order note;",
        f"- USDT transfer to the service's payment account: write {svc_id} in the transfer note;",
        "- or buy in the iOS or Android app.",
    ]
    return "\n".join(lines)


def signal_text(signal: Mapping[str, Any]) -> str:
    """A live signal: coin, side, levels."""
    return (
        f"Signal {signal['strategy_name']}: {signal['side']} {signal['coin']}\n"
        f"Entry {signal['entry_price']} · take profit {signal['limit_price']} · stop {signal['stop_price']}"
    )


def preview_text(preview: Mapping[str, Any], exchange: str) -> str:
    """An order preview, with what it needs and that it cannot be undone."""
    held = preview["available_balance"] or "unknown"
    return "\n".join(
        [
            f"Order preview on {exchange} ({preview['market_type']}, leverage {preview['leverage']}):",
            f"{preview['symbol']}: an OCO that {preview['order_side'].lower()}s {preview['quantity']} "
            f"to close a {preview['position_side'].lower()} position",
            f"Take profit {preview['take_profit_price']} · stop loss {preview['stop_loss_price']}",
            f"Needs {preview['required_balance']} {preview['balance_asset']}; available {held}",
            "This order is irreversible once placed. Confirm to place it.",
        ]
    )


def placed_text(reply: Mapping[str, Any], state: Mapping[str, Any] | None = None) -> str:
    """The outcome of ``exchange_order`` (or, later, of the order followed)."""
    if state is not None:
        if state["state"] == "failed":
            return (
                f"The order failed: {state['message'] or 'the exchange did not take it; nothing was placed'}."
            )
        return f"Order placed: OCO {state['order_list_id']} is {state['exchange_order_status']}."
    if reply.get("status") == "processing":
        return (
            "The order is being placed; the exchange has not confirmed it yet. "
            "This message will show the result."
        )
    return (
        f"Order placed: OCO {reply['order_list_id']} on {reply['symbol']}, "
        f"{reply['side']} {reply['quantity']}, "
        f"take profit {reply['take_profit_price']}, stop loss {reply['stop_loss_price']}."
    )


def refusal(body: Mapping[str, Any], status: int) -> str:
    """An error of a service, in plain words (what happened, and that nothing was placed)."""
    message = str(body.get("message") or body.get("error") or "refused")
    code = body.get("code") or body.get("error")
    if code == "exchange_not_linked":
        return (
            "No exchange account is linked to your account: link one in the app first. No order was placed."
        )
    if code == "exchange_refused_key":
        return (
            "The exchange no longer accepts your linked API key: link the exchange account again. "
            "No order was placed."
        )
    if status == 403:
        return "Futures orders are not placed: this service places spot orders only. No order was placed."
    if status == 404:
        return "This signal has expired or closed, so it can no longer be ordered. No order was placed."
    if message.startswith("insufficient "):
        asset, _, rest = message[len("insufficient ") :].partition(": ")
        return f"Not enough {asset} on the exchange ({rest}). No order was placed."
    if status == 503 or status == 502:
        return f"The exchange did not answer ({message}). Nothing was placed; try again in a moment."
    return f"The order was refused: {message}. No order was placed."
