"""The checks of an OCO order, shared by ``exchange_order_preview`` and ``exchange_order``.

``side`` (ours) names the position the OCO protects: ``BUY`` a long one (``position_side`` LONG;
the OCO sells it: take-profit above the reference price, stop below), ``SELL`` a short one (SHORT; the
OCO buys back: take-profit below, stop above). The reference price is ``entry_price`` when given,
else the last price. The stop leg's limit is 0.1 % beyond its trigger (rounded to the tick), so it
fills in a fast market. Prices and the quantity are strings with exactly the symbol's decimals.

Example:
    >>> exact_decimal("1.50", "take_profit_price", 2)
    Decimal('1.50')
    >>> exact_decimal("1.5", "take_profit_price", 2)
    Traceback (most recent call last):
    ...
    svc_api.core.errors.Invalid: take_profit_price must be a decimal string with exactly 2 decimals, got '1.5'
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal
from typing import Any

from svc_api.core.errors import ApiError, Conflict, Forbidden, Invalid, NotFound
from svc_api.exchange.interface import SymbolRules

SIDES = {"BUY": ("LONG", "SELL"), "SELL": ("SHORT", "BUY")}
SOURCES = ("signal", "manual")
_KEY = re.compile(r"^[A-Za-z0-9._:-]{16,128}$")
_NUMBER = re.compile(r"^\d+(\.\d+)?$")
STOP_LIMIT_GAP = Decimal("0.001")


def exact_decimal(value: object, field: str, digits: int) -> Decimal:
    """A positive decimal string with exactly ``digits`` decimals; else 400."""
    text = value if isinstance(value, str) else None
    if text is None or not _NUMBER.match(text) or len(text.partition(".")[2]) != digits or Decimal(text) <= 0:
        shape = f"exactly {digits} decimals" if digits else "no decimals"
        raise Invalid(f"{field} must be a decimal string with {shape}, got {str(value)[:40]!r}")
    return Decimal(text)


def idempotency_key(value: object) -> str:
    """16-128 letters, digits, ``.``, ``_``, ``:``, ``-``; else 400.

    Example:
        >>> idempotency_key("order-2026-11-25-0001")
        'order-2026-11-25-0001'
    """
    if not isinstance(value, str) or not _KEY.match(value):
        raise Invalid("idempotency_key must be 16-128 letters, digits or . _ : -")
    return value


@dataclass(frozen=True)
class Order:
    """A checked order request (before the price and balance checks that need the exchange)."""

    symbol: str
    side: str
    quantity_text: str
    entry_text: str | None
    take_profit_text: str
    stop_loss_text: str
    order_source: str
    signal_position_key: str
    idempotency_key: str | None

    @property
    def position_side(self) -> str:
        return SIDES[self.side][0]

    @property
    def order_side(self) -> str:
        return SIDES[self.side][1]

    def fingerprint_fields(self) -> dict[str, Any]:
        """What makes two requests the same order."""
        names = (
            "symbol",
            "side",
            "quantity_text",
            "entry_text",
            "take_profit_text",
            "stop_loss_text",
            "order_source",
            "signal_position_key",
        )
        return {k: getattr(self, k) for k in names}


def parse(params: Mapping[str, Any], *, need_key: bool) -> Order:
    """The fields of an order request, checked for presence and shape (400 or, for futures, 403)."""
    market_type = params.get("market_type", "spot")
    if market_type == "futures":
        raise Forbidden("futures orders are not placed: only spot orders are allowed")
    if market_type != "spot":
        raise Invalid("market_type must be spot")
    required = ("symbol", "side", "quantity", "take_profit_price", "stop_loss_price", "order_source")
    missing = [f for f in required if params.get(f) in (None, "")]
    if need_key and params.get("idempotency_key") in (None, ""):
        missing.append("idempotency_key")
    if missing:
        raise Invalid(f"missing fields: {', '.join(missing)}")
    symbol, side, source = params["symbol"], params["side"], params["order_source"]
    if (
        not isinstance(symbol, str)
        or not symbol.isascii()
        or not symbol.isalnum()
        or not symbol.upper().endswith("USDT")
    ):
        raise Invalid("symbol must be a USDT pair such as BTCUSDT")
    if not isinstance(side, str) or side not in SIDES:  # a list or an object is no side (not a 500)
        raise Invalid("side must be BUY (protect a long position) or SELL (a short one)")
    if source not in SOURCES:
        raise Invalid(f"order_source must be one of {', '.join(SOURCES)}")
    position_key = params.get("signal_position_key") or ""
    if source == "signal" and not position_key:
        raise Invalid("order_source signal needs the signal_position_key of the signal")
    if source == "manual" and position_key:
        raise Invalid("signal_position_key goes with order_source signal only")
    if not isinstance(position_key, str):
        raise Invalid("signal_position_key must be a string")
    key = idempotency_key(params["idempotency_key"]) if need_key else None
    entry = params.get("entry_price")
    texts = [params[f] for f in ("quantity", "take_profit_price", "stop_loss_price")] + [entry or "1"]
    if not all(isinstance(t, str) for t in texts):
        raise Invalid("quantity and prices must be decimal strings")
    return Order(
        symbol.upper(),
        side,
        params["quantity"],
        entry or None,
        params["take_profit_price"],
        params["stop_loss_price"],
        source,
        position_key,
        key,
    )


@dataclass(frozen=True)
class Checked:
    """An order whose numbers passed the symbol's rules."""

    order: Order
    rules: SymbolRules
    quantity: Decimal
    take_profit: Decimal
    stop: Decimal
    stop_limit: Decimal
    reference: Decimal

    @property
    def balance_asset(self) -> str:
        return self.rules.base_asset if self.order.order_side == "SELL" else self.rules.quote_asset

    @property
    def required(self) -> Decimal:
        return self.quantity if self.order.order_side == "SELL" else self.quantity * self.stop_limit


def check_numbers(order: Order, rules: SymbolRules, last_price: Decimal | None) -> Checked:
    """Precision, tick and step sizes, the sides of take-profit and stop, the minimum notional."""
    pp, qp = rules.price_precision, rules.quantity_precision
    quantity = exact_decimal(order.quantity_text, "quantity", qp)
    tp = exact_decimal(order.take_profit_text, "take_profit_price", pp)
    stop = exact_decimal(order.stop_loss_text, "stop_loss_price", pp)
    reference = exact_decimal(order.entry_text, "entry_price", pp) if order.entry_text else last_price
    sizes = (
        ("quantity", quantity, rules.step_size),
        ("take_profit_price", tp, rules.tick_size),
        ("stop_loss_price", stop, rules.tick_size),
    )
    for name, value, size in sizes:
        if size > 0 and value % size != 0:
            raise Invalid(f"{name} must be a multiple of {size.normalize()}")
    if quantity < rules.min_quantity:
        raise Invalid(f"quantity must be at least {rules.min_quantity.normalize()}")
    if reference is None:
        raise ApiError(
            503,
            "service_unavailable",
            reason="exchange_unavailable",
            retry_after=5,
            extra={"message": "no price to check the order against; retry"},
        )
    long = order.position_side == "LONG"
    if long and not tp > reference > stop:
        raise Invalid(
            f"for a long position take_profit_price must be above {reference} and stop_loss_price below it"
        )
    if not long and not tp < reference < stop:
        raise Invalid(
            f"for a short position take_profit_price must be below {reference} and stop_loss_price above it"
        )
    gap = stop * STOP_LIMIT_GAP
    step = Decimal(1).scaleb(-pp)
    stop_limit = ((stop - gap) if long else (stop + gap)).quantize(
        step, ROUND_FLOOR if long else ROUND_CEILING
    )
    notional = quantity * min(tp, stop_limit)
    if notional < rules.min_notional:
        raise Invalid(
            f"the order's notional {notional.normalize()} is below the minimum "
            f"{rules.min_notional.normalize()}"
        )
    return Checked(order, rules, quantity, tp, stop, stop_limit, reference)


def check_signal(order: Order, signal: Mapping[str, Any] | None) -> str:
    """The linked signal exists for the caller (404), on this symbol and side (409); its strategy."""
    if order.order_source != "signal":
        return ""
    if signal is None:
        raise NotFound(f"no live signal {order.signal_position_key} of yours")
    if signal["symbol"] != order.symbol:
        raise Conflict(f"the signal is on {signal['symbol']}, not {order.symbol}")
    if signal["side"] != order.position_side:
        raise Conflict(f"the signal is {signal['side']}, not {order.position_side}")
    return str(signal["strategy_name"])


def fixed(value: Decimal, digits: int) -> str:
    """``value`` with ``digits`` decimals."""
    return f"{value:.{digits}f}"


def preview_of(c: Checked, *, available: Decimal | None) -> dict[str, Any]:
    """The Exchange order preview resource."""
    pp, qp = c.rules.price_precision, c.rules.quantity_precision
    return {
        "symbol": c.order.symbol,
        "position_side": c.order.position_side,
        "order_side": c.order.order_side,
        "quantity": fixed(c.quantity, qp),
        "take_profit_price": fixed(c.take_profit, pp),
        "stop_loss_price": fixed(c.stop, pp),
        "stop_limit_price": fixed(c.stop_limit, pp),
        "price_precision": pp,
        "quantity_precision": qp,
        "minimum_notional": float(c.rules.min_notional),
        "balance_asset": c.balance_asset,
        "available_balance": "" if available is None else format(available.normalize(), "f"),
        "required_balance": format(c.required.normalize(), "f"),
        "balance_verified": available is not None,
        "market_type": "spot",
        "leverage": 1,
        "order_source": c.order.order_source,
        "signal_position_key": c.order.signal_position_key,
        "irreversible": True,
    }
