"""The one interface every exchange implements: the paper exchange (the embedded default) and the
Binance spot adapter. The service speaks only this; amounts are ``Decimal``, never float.

Failures come in three kinds, because the order path must tell them apart:

- :class:`InvalidCredentials`: the key or secret was refused (nothing happened);
- :class:`ExchangeRejected`: the exchange answered and refused the request (nothing happened);
  :class:`Refused`, its kind for an order the exchange itself turned down (insufficient balance, a
  filter such as the minimum notional, a duplicate client order ID: ``duplicate=True``, an order of
  that ID exists already), which the trader can act on; ``code`` is the exchange's error code;
- :class:`ExchangeUnavailable`: no usable answer (timeout, 5xx, rate limit, malformed body): for an
  order, the outcome is unknown and must be settled by looking the order up by its client ID.

Example:
    >>> OcoRequest("BTCUSDT", "SELL", Decimal("0.01"), Decimal("70000"), Decimal("60000"),
    ...            Decimal("59900"), "svc-abc").side
    'SELL'
"""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal
from typing import Protocol

WALLETS = ("spot", "futures", "funding")


class ExchangeError(Exception):
    """Base of the exchange failures."""


class InvalidCredentials(ExchangeError):
    """The exchange refused the key or secret."""


class ExchangeRejected(ExchangeError):
    """The exchange refused the request; ``duplicate``: an order of that client ID exists; ``code``:
    the exchange's error code when it gave one."""

    def __init__(self, message: str, *, duplicate: bool = False, code: int | None = None) -> None:
        super().__init__(message)
        self.duplicate = duplicate
        self.code = code


class Refused(ExchangeRejected):
    """The exchange turned the order down (insufficient balance, a filter, a duplicate client order
    ID): nothing was placed, and the same order sent again would be refused again."""


class ExchangeUnavailable(ExchangeError):
    """No usable answer; ``retry_after`` (seconds) when the exchange named one."""

    def __init__(self, message: str, *, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


@dataclass(frozen=True)
class Credentials:
    """An exchange API key and secret (never logged: the secret is left out of ``repr``)."""

    api_key: str
    api_secret: str = field(repr=False)


@dataclass(frozen=True)
class KeyInfo:
    """What a key may do: the exchange's account ID, spot trading, and the IP whitelist (None: the
    key is not restricted to addresses)."""

    account_id: str
    can_trade_spot: bool
    ip_whitelist: tuple[str, ...] | None


@dataclass(frozen=True)
class SymbolRules:
    """Trading rules of one spot symbol."""

    symbol: str
    base_asset: str
    quote_asset: str
    price_precision: int
    quantity_precision: int
    tick_size: Decimal
    step_size: Decimal
    min_quantity: Decimal
    min_notional: Decimal


@dataclass(frozen=True)
class OcoRequest:
    """One OCO: a take-profit ``LIMIT_MAKER`` at ``take_profit_price`` and a ``STOP_LOSS_LIMIT``
    triggered at ``stop_price`` with limit ``stop_limit_price``; ``side`` is the side of both legs
    (``SELL`` closes a long). ``client_order_id`` makes a second placement of the same order fail."""

    symbol: str
    side: str
    quantity: Decimal
    take_profit_price: Decimal
    stop_price: Decimal
    stop_limit_price: Decimal
    client_order_id: str


@dataclass(frozen=True)
class OcoLeg:
    """One order of an OCO: ``type`` ``LIMIT_MAKER`` or ``STOP_LOSS_LIMIT``; ``status`` as the
    exchange says (``NEW``, ``FILLED``, ``EXPIRED``, ``CANCELED``)."""

    symbol: str
    order_id: int
    type: str
    status: str


@dataclass(frozen=True)
class OcoResult:
    """An OCO as the exchange holds it: ``status`` ``EXECUTING`` (legs working) or ``ALL_DONE``."""

    order_list_id: str
    client_order_id: str
    status: str
    legs: tuple[OcoLeg, ...]


@dataclass(frozen=True)
class Transfer:
    """A deposit into the account: ``payer`` is the sender's exchange account ID when known."""

    tx_id: str
    asset: str
    amount: Decimal
    payer: str | None
    note: str
    time: int


class Exchange(Protocol):
    """A spot exchange as the service uses it."""

    name: str

    def key_info(self, creds: Credentials) -> KeyInfo:
        """The account and permissions of a key (:class:`InvalidCredentials` when refused)."""
        ...

    def balances(self, creds: Credentials) -> dict[str, dict[str, Decimal]]:
        """Free balance per asset of each wallet of :data:`WALLETS`."""
        ...

    def symbol_rules(self, symbol: str) -> SymbolRules:
        """The rules of ``symbol`` (``LookupError`` when not traded)."""
        ...

    def last_price(self, symbol: str) -> Decimal:
        """The last traded price of ``symbol``."""
        ...

    def place_oco(self, creds: Credentials, order: OcoRequest) -> OcoResult:
        """Place the OCO (:class:`Refused`, with ``duplicate`` for a known client ID)."""
        ...

    def find_order_list(self, creds: Credentials, client_order_id: str) -> OcoResult | None:
        """The OCO placed with ``client_order_id`` (None when the exchange has none)."""
        ...

    def open_order_lists(self, creds: Credentials) -> dict[str, OcoResult] | None:
        """The account's working OCOs by client ID, read at once, holding those whose legs are fully
        known (the reconciler looks each of the others up); None when the exchange has no such view
        and every order is looked up by itself."""
        ...

    def incoming_transfers(self, creds: Credentials, since: int) -> list[Transfer]:
        """Deposits into the account since ``since`` (Unix seconds), oldest first."""
        ...
