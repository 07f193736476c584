"""The request and reply models of the exchange operations (``/user``).

The order fields are checked together, as :func:`~svc_api.exchange.orders.parse` always did (a
``futures`` market first, then every missing field named at once, then each shape), so the order
models run it over the whole request (:meth:`OrderPreviewFields.prepare`); the bot's orders run the
same function through :func:`svc_api.exchange.service.order_of`. The checks that need the exchange
(precision, tick and step sizes, the notional, the balance) run in the service.

Example:
    >>> fields = {"symbol": "btcusdt", "side": "BUY", "quantity": "1", "take_profit_price": "2",
    ...           "stop_loss_price": "1", "order_source": "manual"}
    >>> OrderPreviewFields.model_validate(fields).order().symbol
    'BTCUSDT'
    >>> OrderFields.model_validate(fields)
    Traceback (most recent call last):
    ...
    svc_api.core.errors.Invalid: missing fields: idempotency_key
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, ClassVar, Literal

from svc_api.core.contract import Check, ErrorDoc, Fields, Shape
from svc_api.core.params import AsSent, Cursor, Limit, Platform, UserPage
from svc_api.exchange import orders
from svc_api.exchange.interface import Credentials
from svc_api.exchange.linking import KEY_LENGTH, credential
from svc_api.exchange.service import HISTORY_STATUSES


def _credential(status: int, what: str) -> Any:
    schema = {"type": "string", "minLength": KEY_LENGTH, "maxLength": KEY_LENGTH, "description": what}
    return Annotated[str, Check(credential, schema, required=True, kwargs={"status": status})]


class _Keys(Fields):
    def credentials(self) -> Credentials:
        """The key pair.

        Example:
            >>> keys = ExchangeLink.model_validate({"api_key": "k" * 64, "api_secret": "s" * 64})
            >>> keys.credentials().api_key[:2]
            'kk'
        """
        return Credentials(self.api_key, self.api_secret)  # type: ignore[attr-defined]


class ExchangeLink(_Keys):
    """``exchange_link``: the exchange API key pair (session token only)."""

    api_key: _credential(400, "An exchange API key (64 characters).")
    api_secret: _credential(400, "Its secret (64 characters).")


class ExchangeLogin(_Keys):
    """``exchange_login``: a session for the account that linked the key's exchange account."""

    platform: Platform
    api_key: _credential(401, "An exchange API key (64 characters).")
    api_secret: _credential(401, "Its secret (64 characters).")


def _parsed(value: object, name: str) -> Any:
    return value  # the whole request was checked by prepare (orders.parse)


def _order_field(schema: dict[str, Any], *, required: bool = False) -> Any:
    return Annotated[Any, Check(_parsed, schema, required=required)]


_DECIMAL = {"type": "string", "pattern": "^[0-9]+(\\.[0-9]+)?$"}


class OrderPreviewFields(Fields):
    """``exchange_order_preview``: an OCO order protecting a position, checked, nothing placed."""

    need_key: ClassVar[bool] = False

    market_type: _order_field({"enum": ["spot"], "default": "spot", "description": "`futures` is a 403."})
    symbol: _order_field({"type": "string", "description": "A USDT pair such as BTCUSDT."}, required=True)
    side: _order_field(
        {"enum": list(orders.SIDES), "description": "`BUY` protects a long position, `SELL` a short one."},
        required=True,
    )
    quantity: _order_field(
        _DECIMAL | {"description": "Exactly `quantity_precision` decimals."}, required=True
    )
    entry_price: _order_field(
        _DECIMAL
        | {"description": "The reference price (default: the last price); `price_precision` decimals."}
    )
    take_profit_price: _order_field(_DECIMAL | {"description": "`price_precision` decimals."}, required=True)
    stop_loss_price: _order_field(_DECIMAL | {"description": "`price_precision` decimals."}, required=True)
    order_source: _order_field({"enum": list(orders.SOURCES)}, required=True)
    signal_position_key: _order_field(
        {"type": "string", "description": "The live signal's key: with `order_source` `signal` only."}
    )

    @classmethod
    def prepare(cls, data: Mapping[str, Any]) -> Any:
        """The order checked as a whole (:func:`~svc_api.exchange.orders.parse`), by field."""
        order = orders.parse(data, need_key=cls.need_key)
        return {
            "market_type": "spot",
            "symbol": order.symbol,
            "side": order.side,
            "quantity": order.quantity_text,
            "entry_price": order.entry_text,
            "take_profit_price": order.take_profit_text,
            "stop_loss_price": order.stop_loss_text,
            "order_source": order.order_source,
            "signal_position_key": order.signal_position_key,
            "idempotency_key": order.idempotency_key,
        }

    def order(self) -> orders.Order:
        """The checked order the service takes."""
        return orders.Order(
            self.symbol,
            self.side,
            self.quantity,
            self.entry_price,
            self.take_profit_price,
            self.stop_loss_price,
            self.order_source,
            self.signal_position_key,
            getattr(self, "idempotency_key", None),
        )


class OrderFields(OrderPreviewFields):
    """``exchange_order``: place the OCO once per ``idempotency_key``."""

    need_key: ClassVar[bool] = True

    idempotency_key: _order_field(
        {"type": "string", "pattern": "^[A-Za-z0-9._:-]{16,128}$", "description": "One per logical order."},
        required=True,
    )


class ExchangeOrderHistory(Fields):
    """``order_history``: the caller's orders, newest first."""

    limit: Limit(25, 1, 100)
    cursor: Cursor
    status: AsSent({"enum": [*HISTORY_STATUSES, None], "description": "Only the orders of this status."})
    """Checked after the cursor (which belongs to the status's list)."""


class ExchangeLinked(Shape):
    """The exchange account is linked."""

    exchange: Literal["paper", "binance"]
    account_id: str
    """The exchange's ID of the account."""
    linked: Literal[True]


class ExchangeUnlinked(Shape):
    """The exchange keys are forgotten."""

    linked: Literal[False]


class ExchangeBalance(Shape):
    """Free amounts by asset, per wallet."""

    spot: dict[str, float]
    futures: dict[str, float]
    funding: dict[str, float]


class OrderPreview(Shape):
    """Every check of an order passed; nothing placed or reserved."""

    symbol: str
    position_side: Literal["LONG", "SHORT"]
    order_side: Literal["BUY", "SELL"]
    quantity: str
    take_profit_price: str
    stop_loss_price: str
    stop_limit_price: str | None = None
    """The stop leg's limit, 0.1 % beyond its trigger."""
    price_precision: int
    quantity_precision: int
    minimum_notional: float
    balance_asset: str
    available_balance: str
    """Empty when the balance could not be read."""
    required_balance: str
    balance_verified: bool
    market_type: Literal["spot"]
    leverage: Literal[1]
    order_source: str
    signal_position_key: str
    irreversible: bool


class OrderLeg(Shape):
    """One order of the OCO."""

    symbol: str
    orderId: int
    type: Literal["LIMIT_MAKER", "STOP_LOSS_LIMIT"]


class OrderResult(Shape):
    """The placed OCO, or ``processing`` while the exchange's answer is being verified."""

    status: Literal["submitted", "processing", "failed"]
    idempotency_key: str
    message: str | None = None
    order_list_id: str | None = None
    client_order_id: str | None = None
    symbol: str | None = None
    side: Literal["BUY", "SELL"] | None = None
    quantity: str | None = None
    take_profit_price: str | None = None
    stop_loss_price: str | None = None
    orders: list[OrderLeg] | None = None
    signal_position_key: str | None = None
    order_source: str | None = None
    idempotent_replay: Literal[True] | None = None
    """A retry of a settled key: the stored reply."""


class OrderRecord(Shape):
    """An order of the history."""

    order_history_id: str
    order_id: str
    timestamp: int
    """Unix seconds."""
    strategy_name: str
    coin: str
    symbol: str | None = None
    exchange_order_status: Literal["PROCESSING", "NEW", "FILLED", "CANCELED", "FAILED"]
    execution_mode: Literal["paper_trade", "real_trade"]
    order_source: str
    signal_position_key: str
    idempotency_key: str | None = None
    message: str | None = None


class OrderHistoryPage(UserPage):
    """A page of the caller's orders, newest first."""

    orders: list[OrderRecord]
    status: str | None
    """The status filter, as sent."""


UNAVAILABLE = ErrorDoc(502, "exchange_unavailable", "the exchange gave no usable answer")
LINK_ERRORS = (
    ErrorDoc(400, "invalid_exchange_credentials", "a key or secret not 64 characters"),
    ErrorDoc(400, "exchange_refused_key", "the exchange refused the key"),
    ErrorDoc(400, "invalid_request", "a key that cannot trade spot or is not restricted to the order proxy"),
    ErrorDoc(409, "conflict", "the exchange account is linked to another account"),
    UNAVAILABLE,
)
UNLINK_ERRORS = (ErrorDoc(404, "not_found", "no exchange account is linked"),)
LOGIN_ERRORS = (
    ErrorDoc(400, "invalid_request", "no account linked the key's exchange identity"),
    ErrorDoc(401, "invalid_exchange_credentials", "a key or secret not 64 characters"),
    ErrorDoc(401, "exchange_refused_key", "the exchange refused the key"),
    UNAVAILABLE,
)
NOT_LINKED = ErrorDoc(400, "exchange_not_linked", "no exchange account is linked")
REFUSED = ErrorDoc(400, "exchange_refused_key", "the exchange no longer accepts the linked key")
BALANCE_ERRORS = (NOT_LINKED, REFUSED, UNAVAILABLE)
PREVIEW_ERRORS = (
    ErrorDoc(
        400,
        "invalid_request",
        "a missing or malformed field, a precision, step or notional failure, an insufficient balance",
    ),
    NOT_LINKED,
    REFUSED,
    ErrorDoc(403, "forbidden", "`market_type` `futures`"),
    ErrorDoc(404, "not_found", "no live signal of the caller's under `signal_position_key`"),
    ErrorDoc(409, "conflict", "the signal is on another symbol or side"),
    ErrorDoc(
        503, "service_unavailable", "the trading rules, price or balance cannot be read (nothing placed)"
    ),
)
ORDER_ERRORS = (
    *PREVIEW_ERRORS[:5],
    ErrorDoc(
        409, "conflict", "the signal is on another symbol or side, or the key was used for another order"
    ),
    ErrorDoc(502, "exchange_rejected", "the exchange rejected the request"),
    PREVIEW_ERRORS[6],
)
