"""The exchange domain's use cases: link and log in with an exchange account, read balances,
preview and place OCO orders, the order history, and the workers' passes (reconciler, paper fills).

The exchange is the one ``EXCHANGE`` names: ``paper`` (the embedded paper exchange) or ``binance``.

Example:
    >>> from svc_api.core.services import Services
    >>> from svc_api.migrations import migrate
    >>> from svc_api.settings import Settings
    >>> services = Services(Settings(database_url="sqlite://", secret_key=b"k" * 32), migrate=migrate)
    >>> exchange_of(services).name
    'paper'
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from svc_api.core.errors import ApiError, Invalid
from svc_api.core.fields import position_int, position_str
from svc_api.exchange import linking, orders, placement, queries, usdt
from svc_api.exchange.binance import BinanceExchange
from svc_api.exchange.interface import (
    Credentials,
    Exchange,
    ExchangeError,
    ExchangeUnavailable,
    InvalidCredentials,
)
from svc_api.exchange.paper import PaperExchange, create_account, deposit, fund
from svc_api.exchange.vault import Keyring, key_file, keyring_of, new_key, write_keys
from svc_api.signals import service as signals

EXCHANGES = ("paper", "binance")
HISTORY_STATUSES = ("PROCESSING", "NEW", "FILLED", "CANCELED", "FAILED")


def exchange_of(services: Any) -> Exchange:
    """The app's exchange (made once)."""

    def make() -> Exchange:
        name = services.settings.exchange
        if name == "paper":
            return PaperExchange(services)
        if name == "binance":
            settings = services.settings
            return BinanceExchange(settings.binance_api_url, settings.binance_futures_url)
        raise ValueError(f"EXCHANGE must be one of {', '.join(EXCHANGES)}, got {name!r}")

    return services.cached("exchange:instance", math.inf, make)


KEYRING_TTL = 5.0
"""Seconds a process keeps the keys read: after a rotation every process reads the new key soon."""


def keyring(services: Any) -> Keyring:
    """The encryption keys of the stored exchange credentials (read again every few seconds)."""
    return services.cached("exchange:keyring", KEYRING_TTL, lambda: keyring_of(services.settings))


def execution_mode(exchange: Exchange) -> str:
    """``paper_trade`` on the paper exchange, ``real_trade`` on a real one."""
    return "paper_trade" if exchange.name == "paper" else "real_trade"


def _linked(services: Any, svc_id: str) -> tuple[Exchange, Credentials]:
    exchange = exchange_of(services)
    with services.store.read() as conn:
        linked = linking.stored_credentials(conn, keyring(services), svc_id)
    if linked is None:
        raise ApiError(400, "exchange_not_linked", extra={"message": "link an exchange account first"})
    if linked[0] != exchange.name:
        raise Invalid(
            f"your linked account is on {linked[0]}; this server trades on {exchange.name}: link again"
        )
    return exchange, linked[1]


def link(services: Any, svc_id: str, creds: Credentials, *, now: int) -> dict[str, Any]:
    """Link the caller's exchange account (see :mod:`svc_api.exchange.linking`)."""
    settings = services.settings
    return linking.link(
        services.store,
        exchange_of(services),
        keyring(services),
        svc_id,
        creds,
        proxy_ip=settings.order_proxy_ip,
        now=now,
    )


def unlink(services: Any, svc_id: str) -> dict[str, Any]:
    """Forget the caller's exchange keys."""
    return linking.unlink(services.store, svc_id)


def login(services: Any, creds: Credentials, *, ip: str, platform: str, now: int) -> dict[str, Any]:
    """A session for the account linked to the exchange identity of the key."""
    ttl = services.settings.session_ttl_seconds
    return linking.login(
        services.store, exchange_of(services), creds, ip=ip, platform=platform, ttl=ttl, now=now
    )


def balances(services: Any, svc_id: str) -> dict[str, dict[str, float]]:
    """``{spot, futures, funding}``: each a map asset to free amount (502 when the exchange is down)."""
    exchange, creds = _linked(services, svc_id)
    try:
        wallets = exchange.balances(creds)
    except ExchangeUnavailable as exc:
        raise ApiError(
            502, "exchange_unavailable", extra={"message": f"the exchange gave no usable answer: {exc}"}
        ) from None
    except InvalidCredentials:
        raise placement.refused_key() from None
    return {
        w: {asset: float(v) for asset, v in wallets.get(w, {}).items()}
        for w in ("spot", "futures", "funding")
    }


def _checked(
    services: Any, svc_id: str, exchange: Exchange, order: orders.Order
) -> tuple[orders.Checked, str]:
    signal = None
    if order.order_source == "signal":
        with services.store.read() as conn:
            signal = signals.live_signal(conn, svc_id, order.signal_position_key)
    strategy = orders.check_signal(order, signal)
    not_traded = Invalid(f"{order.symbol} is not traded on {exchange.name}")
    try:
        rules = exchange.symbol_rules(order.symbol)
    except LookupError:
        raise not_traded from None
    except ExchangeError as exc:
        retry = exc.retry_after if isinstance(exc, ExchangeUnavailable) else None
        message = f"the trading rules of {order.symbol} could not be read from the exchange; retry: {exc}"
        raise placement.unavailable(message, retry) from None
    try:
        last = None if order.entry_text else exchange.last_price(order.symbol)
    except LookupError:
        raise not_traded from None
    except ExchangeError:
        last = None  # check_numbers answers 503 when it needs this price
    return orders.check_numbers(order, rules, last), strategy


def order_of(params: Mapping[str, Any], *, need_key: bool = False) -> orders.Order:
    """The fields of an order request checked for presence and shape (400, or 403 for futures), as
    the order operations' request models check them: the bot's orders take this way.

    Example:
        >>> order_of({"market_type": "futures"})
        Traceback (most recent call last):
        ...
        svc_api.core.errors.Forbidden: futures orders are not placed: only spot orders are allowed
    """
    return orders.parse(params, need_key=need_key)


def preview(services: Any, svc_id: str, order: orders.Order) -> dict[str, Any]:
    """The Exchange order preview of a checked order (:func:`order_of`): every check that needs the
    exchange, nothing placed or reserved."""
    exchange, creds = _linked(services, svc_id)
    checked, _ = _checked(services, svc_id, exchange, order)
    try:
        held: Decimal | None = placement.available(exchange, creds, checked.balance_asset)
    except ExchangeUnavailable:
        held = None
    except InvalidCredentials:
        raise placement.refused_key() from None
    if held is not None and held < checked.required:
        raise Invalid(
            f"insufficient {checked.balance_asset}: {held.normalize()} available, "
            f"{checked.required.normalize()} needed"
        )
    return orders.preview_of(checked, available=held)


def place(services: Any, svc_id: str, order: orders.Order, *, now: int) -> dict[str, Any]:
    """``exchange_order``: the OCO of a checked order (:func:`order_of` with its key) placed once
    per idempotency key (:mod:`~svc_api.exchange.placement`)."""
    exchange, creds = _linked(services, svc_id)
    with services.store.read() as conn:
        stored = queries.order(conn, svc_id, str(order.idempotency_key))
    if stored is not None:  # a retry: answer from the record, without asking the exchange again
        return placement.replay(stored, order)
    checked, strategy = _checked(services, svc_id, exchange, order)
    return placement.place(
        services.store, exchange, creds, checked, svc_id, strategy=strategy, execution=exchange.name, now=now
    )


def order_rules(services: Any, symbol: str) -> dict[str, Any]:
    """The trading rules of ``symbol`` an order is sized by: ``{price_precision, quantity_precision,
    step_size, min_quantity, min_notional}`` (step and sizes as decimal strings); 400 when the symbol
    is not traded, 503 when the exchange does not answer."""
    exchange = exchange_of(services)
    try:
        rules = exchange.symbol_rules(symbol)
    except LookupError:
        raise Invalid(f"{symbol} is not traded on {exchange.name}") from None
    except ExchangeError as exc:
        retry = exc.retry_after if isinstance(exc, ExchangeUnavailable) else None
        raise placement.unavailable(
            f"the trading rules of {symbol} could not be read: {exc}", retry
        ) from None
    return {
        "price_precision": rules.price_precision,
        "quantity_precision": rules.quantity_precision,
        "step_size": str(rules.step_size),
        "min_quantity": str(rules.min_quantity),
        "min_notional": str(rules.min_notional),
    }


def order_state(services: Any, svc_id: str, idempotency_key: str) -> dict[str, Any] | None:
    """Where an order placed under ``idempotency_key`` stands: ``{state, exchange_order_status,
    order_list_id, message}`` (``state``: ``processing``, ``submitted`` or ``failed``); None when no
    order was placed under that key (a refused one is not kept)."""
    with services.store.read() as conn:
        row = queries.order(conn, svc_id, idempotency_key)
    if row is None:
        return None
    return {
        "state": row.state,
        "exchange_order_status": row.exchange_status,
        "order_list_id": row.order_list_id or "",
        "message": row.message or "",
    }


def history(
    services: Any, svc_id: str, *, status: str | None, limit: int, after: Mapping[str, Any] | None
) -> tuple[list[dict[str, Any]], dict[str, Any] | None]:
    """Order history records newest first; the page and the position after it."""
    if status is not None and status not in HISTORY_STATUSES:
        raise Invalid(f"status must be one of {', '.join(HISTORY_STATUSES)}")
    position = None if after is None else (position_int(after, "t"), position_str(after, "i"))
    with services.store.read() as conn:
        rows = queries.history_after(conn, svc_id, status=status, limit=limit + 1, after=position)
    page = rows[:limit]
    items = [
        {
            "order_history_id": r.order_history_id,
            "order_id": r.order_list_id,
            "timestamp": int(r.created_at),
            "strategy_name": r.strategy_name,
            "coin": r.coin,
            "symbol": r.symbol,
            "exchange_order_status": r.exchange_status,
            "execution_mode": "paper_trade" if r.exchange == "paper" else "real_trade",
            "order_source": r.order_source,
            "signal_position_key": r.signal_position_key,
            "idempotency_key": r.idempotency_key,
            "message": r.message,
        }
        for r in page
    ]
    last = {"t": int(page[-1].created_at), "i": page[-1].order_history_id} if len(rows) > limit else None
    return items, last


def run_reconciler(services: Any) -> int:
    """One pass of the reconciler, the USDT payments and, on the paper exchange, its fills."""
    exchange = exchange_of(services)
    filled = exchange.run_fills() if isinstance(exchange, PaperExchange) else 0
    now = services.clock.now()
    paid = usdt.collect(services, exchange, now=now)
    return (
        filled
        + placement.reconcile(services.store, exchange, keyring(services), now=now)
        + sum(paid.values())
    )


def rotate_keys(services: Any) -> dict[str, Any]:
    """Encrypt every stored credential with a new key (kept in the key file): operators. With
    ``EXCHANGE_ENCRYPTION_KEYS`` set, rotation is done by changing that variable instead (400)."""
    settings = services.settings
    if settings.exchange_encryption_keys:
        raise Invalid(
            "EXCHANGE_ENCRYPTION_KEYS is set: put a new key first in it, run this, then drop the old ones"
        )
    old = keyring_of(settings)
    both = Keyring([new_key(), *old.keys])
    count = linking.rotate_encryption(services.store, both)
    write_keys(settings.var_dir, both.keys[:1])
    return {"rotated": count, "key_file": str(key_file(settings.var_dir))}


__all__ = [
    "balances",
    "create_account",
    "deposit",
    "exchange_of",
    "fund",
    "history",
    "keyring",
    "link",
    "login",
    "order_of",
    "order_rules",
    "order_state",
    "place",
    "preview",
    "rotate_keys",
    "run_reconciler",
    "unlink",
]
