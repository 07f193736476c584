"""The paper exchange: the embedded default. Its accounts, keys and balances live in the service's
store (seeded by ``svc admin exchange paper-account``); prices are the stored candles at the market
clock's time; an OCO's legs fill as candles arrive (the paper worker): the take-profit when a
candle trades through it, the stop when one trades through the stop price, the stop first when one
candle reaches both (the engine's conservative rule).

Example:
    >>> fill_leg("SELL", Decimal("110"), Decimal("90"), high=Decimal("111"), low=Decimal("95"))
    'LIMIT_MAKER'
    >>> fill_leg("SELL", Decimal("110"), Decimal("90"), high=Decimal("111"), low=Decimal("89"))
    'STOP_LOSS_LIMIT'
"""

from __future__ import annotations

import secrets
from decimal import Decimal
from typing import Any

from svc_api.core.store import Store
from svc_api.exchange import paper_queries as queries
from svc_api.exchange.interface import (
    WALLETS,
    Credentials,
    InvalidCredentials,
    KeyInfo,
    OcoLeg,
    OcoRequest,
    OcoResult,
    Refused,
    SymbolRules,
    Transfer,
)
from svc_api.exchange.vault import digest
from svc_api.market import service as market
from svc_api.signals import service as signals

HOUR_MS = 3_600_000


def fill_leg(side: str, take_profit: Decimal, stop: Decimal, *, high: Decimal, low: Decimal) -> str | None:
    """Which leg of an OCO a candle fills (None: neither), the stop first when both."""
    stop_hit = low <= stop if side == "SELL" else high >= stop
    tp_hit = high >= take_profit if side == "SELL" else low <= take_profit
    return "STOP_LOSS_LIMIT" if stop_hit else "LIMIT_MAKER" if tp_hit else None


def create_account(
    store: Store,
    *,
    balances: dict[str, Decimal],
    ip_whitelist: tuple[str, ...] | None,
    can_trade_spot: bool = True,
    now: int,
) -> dict[str, str]:
    """A paper account with spot ``balances`` and one key: ``{account_id, api_key, api_secret}``
    (64 characters each, like a real exchange's; the secret is shown here only).

    Example:
        >>> made = create_account(store, balances={"USDT": Decimal(1000)}, ip_whitelist=("127.0.0.1",), now=1)
        >>> len(made["api_key"]), len(made["api_secret"]), made["account_id"][:1]
        (64, 64, 'P')
    """
    account_id = f"P{secrets.randbelow(10**9):09d}"
    api_key, api_secret = secrets.token_hex(32), secrets.token_hex(32)
    with store.write() as conn:
        queries.insert_key(
            conn,
            api_key=api_key,
            secret_digest=digest(api_secret),
            account_id=account_id,
            can_trade_spot=can_trade_spot,
            created_at=now,
            ip_whitelist=None if ip_whitelist is None else ",".join(ip_whitelist),
        )
        for asset, amount in balances.items():
            queries.set_balance(conn, account_id, "spot", asset.upper(), amount)
    return {"account_id": account_id, "api_key": api_key, "api_secret": api_secret}


def fund(store: Store, account_id: str, asset: str, amount: Decimal, *, wallet: str = "spot") -> None:
    """Set a balance of a paper account (operators)."""
    with store.write() as conn:
        queries.set_balance(conn, account_id, wallet, asset.upper(), amount)


def deposit(
    store: Store,
    account_id: str,
    tx_id: str,
    asset: str,
    amount: Decimal,
    *,
    payer: str | None,
    note: str,
    now: int,
) -> bool:
    """A deposit into a paper account (what a payer's transfer looks like); False when ``tx_id`` exists."""
    with store.write() as conn:
        row = {
            "tx_id": tx_id,
            "account_id": account_id,
            "asset": asset.upper(),
            "amount": amount,
            "payer": payer,
            "note": note,
            "time": now,
        }
        if not queries.insert_transfer(conn, **row):
            return False
        queries.move(conn, account_id, asset.upper(), free=amount)
    return True


class PaperExchange:
    """The :class:`~svc_api.exchange.interface.Exchange` of the embedded default."""

    name = "paper"

    def __init__(self, services: Any) -> None:
        self.services = services

    @property
    def store(self) -> Store:
        return self.services.store

    def _account(self, creds: Credentials) -> Any:
        with self.store.read() as conn:
            row = queries.key(conn, creds.api_key)
        if row is None or row.secret_digest != digest(creds.api_secret):
            raise InvalidCredentials("API-key format invalid or the key and secret do not match")
        return row

    def key_info(self, creds: Credentials) -> KeyInfo:
        row = self._account(creds)
        whitelist = None if row.ip_whitelist is None else tuple(filter(None, row.ip_whitelist.split(",")))
        return KeyInfo(row.account_id, bool(row.can_trade_spot), whitelist)

    def balances(self, creds: Credentials) -> dict[str, dict[str, Decimal]]:
        account = self._account(creds).account_id
        with self.store.read() as conn:
            rows = queries.balances(conn, account)
        out: dict[str, dict[str, Decimal]] = {w: {} for w in WALLETS}
        for r in rows:
            out[r.wallet][r.asset] = Decimal(r.free)
        return out

    def symbol_rules(self, symbol: str) -> SymbolRules:
        if not symbol.endswith("USDT") or symbol == "USDT":
            raise LookupError(f"{symbol} is not traded")
        p = market.rules("crypto", symbol)
        return SymbolRules(
            symbol,
            symbol[:-4],
            "USDT",
            p.price_precision,
            p.quantity_precision,
            Decimal(str(p.tick_size)),
            Decimal(str(p.step_size)),
            Decimal(str(p.min_quantity)),
            Decimal(str(p.min_notional)),
        )

    def _now_ms(self) -> int:
        return signals.market_now_ms(self.services)

    def _candles(self, symbol: str, start_ms: int | None, end_ms: int, limit: int) -> list[list[Any]]:
        try:
            reply = market.series_klines(
                self.services, symbol, "1h", start_ms=start_ms, end_ms=end_ms, limit=limit
            )
        except Exception as exc:  # an unknown series: not traded here
            raise LookupError(f"{symbol} is not traded") from exc
        return list(reply["klines"])

    def last_price(self, symbol: str) -> Decimal:
        now = self._now_ms()
        candles = self._candles(symbol, None, now - HOUR_MS, 1)
        if not candles:
            raise LookupError(f"no price for {symbol}")
        return Decimal(candles[-1][4])

    def place_oco(self, creds: Credentials, order: OcoRequest) -> OcoResult:
        account = self._account(creds).account_id
        rules = self.symbol_rules(order.symbol)
        if order.side == "SELL":
            asset, reserve = rules.base_asset, order.quantity
        else:
            asset, reserve = rules.quote_asset, order.quantity * order.stop_limit_price
        now = self._now_ms()
        with self.store.write() as conn:
            if queries.order_list(conn, account, order.client_order_id) is not None:
                raise Refused("Duplicate order sent.", duplicate=True, code=-2010)
            held = queries.balance(conn, account, "spot", asset, lock=True)
            if held is None or Decimal(held.free) < reserve:
                raise Refused("Account has insufficient balance for requested action.", code=-2010)
            queries.move(conn, account, asset, free=-reserve, locked=reserve)
            queries.insert_order_list(
                conn,
                account_id=account,
                client_order_id=order.client_order_id,
                symbol=order.symbol,
                side=order.side,
                quantity=order.quantity,
                take_profit_price=order.take_profit_price,
                stop_price=order.stop_price,
                stop_limit_price=order.stop_limit_price,
                status="EXECUTING",
                placed_ms=now,
                checked_ms=now,
            )
            row = queries.order_list(conn, account, order.client_order_id)
        return _result(row)

    def find_order_list(self, creds: Credentials, client_order_id: str) -> OcoResult | None:
        account = self._account(creds).account_id
        with self.store.read() as conn:
            row = queries.order_list(conn, account, client_order_id)
        return None if row is None else _result(row)

    def open_order_lists(self, creds: Credentials) -> dict[str, OcoResult] | None:
        """None: a look-up is a local read, there is no request weight to save."""
        return None

    def incoming_transfers(self, creds: Credentials, since: int) -> list[Transfer]:
        account = self._account(creds).account_id
        with self.store.read() as conn:
            rows = queries.transfers_since(conn, account, since)
        return [Transfer(r.tx_id, r.asset, Decimal(r.amount), r.payer, r.note, int(r.time)) for r in rows]

    def run_fills(self, limit: int = 500) -> int:
        """Fill the legs that the candles since each open list's last check reach; how many filled."""
        now = self._now_ms()
        with self.store.read() as conn:
            open_lists = queries.open_order_lists(conn, limit)
        filled = 0
        for row in open_lists:
            filled += self._check(row, now)
        return filled

    def _check(self, row: Any, now: int) -> int:
        end = now - HOUR_MS  # candles that have closed
        if end < row.checked_ms:
            return 0
        leg, checked = None, end
        for candle in self._candles(row.symbol, int(row.checked_ms), end, 1000):
            leg = fill_leg(
                row.side,
                Decimal(row.take_profit_price),
                Decimal(row.stop_price),
                high=Decimal(candle[2]),
                low=Decimal(candle[3]),
            )
            if leg is not None:
                checked = int(candle[0])
                break
        with self.store.write() as conn:
            if not queries.settle(conn, row.order_list_id, leg=leg, checked_ms=checked + (0 if leg else 1)):
                return 0
            if leg is not None:
                _book_fill(conn, row, leg, self.symbol_rules(row.symbol))
        return int(leg is not None)


def _book_fill(conn: Any, row: Any, leg: str, rules: SymbolRules) -> None:
    qty = Decimal(row.quantity)
    price = Decimal(row.take_profit_price) if leg == "LIMIT_MAKER" else Decimal(row.stop_limit_price)
    if row.side == "SELL":
        queries.move(conn, row.account_id, rules.base_asset, free=Decimal(0), locked=-qty)
        queries.move(conn, row.account_id, rules.quote_asset, free=qty * price)
    else:
        reserved = qty * Decimal(row.stop_limit_price)
        queries.move(conn, row.account_id, rules.quote_asset, free=reserved - qty * price, locked=-reserved)
        queries.move(conn, row.account_id, rules.base_asset, free=qty)


def _result(row: Any) -> OcoResult:
    done = row.status == "ALL_DONE"
    legs = tuple(
        OcoLeg(
            row.symbol,
            int(row.order_list_id) * 2 + i,
            kind,
            ("FILLED" if row.filled_leg == kind else "EXPIRED") if done else "NEW",
        )
        for i, kind in enumerate(("STOP_LOSS_LIMIT", "LIMIT_MAKER"))
    )
    return OcoResult(str(row.order_list_id), row.client_order_id, row.status, legs)
