"""The Binance spot adapter of :class:`~svc_api.exchange.interface.Exchange`, over the transport of
:mod:`~svc_api.exchange.binance_http` (signing, the clock offset, rate-limit pauses, error codes).

What the exchange's answers leave out, and how the adapter fills it in:

- the reconciler reads an account's working OCOs at once (``GET /api/v3/openOrderList``, weight 6)
  when it follows two or more of them, instead of one ``orderList`` (weight 4) each;
- an order list read back (``GET /api/v3/orderList``) names its legs but not their status or type:
  once the list is ``ALL_DONE``, or when a leg's type is not known from its placement, each leg is
  read with ``GET /api/v3/order``, so a filled OCO reads ``FILLED`` (a leg's type never changes and
  is remembered);
- futures balances come from the futures base URL and are an empty map when it cannot be read, or
  when the key may not read it (a spot-only key: -2015);
- deposit history is read in windows of at most :data:`DEPOSIT_WINDOW` (Binance refuses ranges
  over 90 days), a page of :data:`DEPOSIT_PAGE` at a time; deposits carry no memo on most networks,
  so a transfer's note is its ``txId`` and its payer unknown;
- symbol rules are cached an hour; a symbol Binance does not know (-1121) is a ``LookupError``.

Example:
    >>> windows(0, 200 * 86400)[:2]
    [(0, 7689600), (7689600, 15379200)]
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from decimal import Decimal, InvalidOperation
from typing import Any

from svc_api.exchange.binance_http import BinanceHttp, sign
from svc_api.exchange.interface import (
    WALLETS,
    Credentials,
    ExchangeRejected,
    ExchangeUnavailable,
    InvalidCredentials,
    KeyInfo,
    OcoLeg,
    OcoRequest,
    OcoResult,
    SymbolRules,
    Transfer,
)

UNKNOWN_ORDER_CODES = {-2011, -2013}
UNKNOWN_SYMBOL = -1121
RULES_TTL = 3600.0
DEPOSIT_WINDOW = 89 * 86400
"""Seconds of deposit history asked for at once (Binance: less than 90 days)."""
DEPOSIT_PAGE = 1000
BINANCE_OPENED = 1_498_867_200
"""2017-07-01: no deposit is older (a ``since`` before it reads from here)."""
LEG_TYPES_KEPT = 10_000

__all__ = ["BinanceExchange", "sign", "windows"]


def windows(since: int, until: int, size: int = DEPOSIT_WINDOW) -> list[tuple[int, int]]:
    """``[since, until]`` cut into consecutive ``(start, end)`` windows of at most ``size`` seconds."""
    out, start = [], since
    while start < until:
        out.append((start, min(start + size, until)))
        start += size
    return out


def _plain(value: Decimal) -> str:
    return format(value.normalize(), "f")


def _digits(size: Decimal) -> int:
    return max(0, -size.normalize().as_tuple().exponent) if size > 0 else 0  # type: ignore[operator]


class BinanceExchange:
    """Binance spot over its REST API (``base_url`` and ``futures_url`` point at a test double in tests)."""

    name = "binance"

    def __init__(
        self,
        base_url: str = "https://api.binance.com",
        futures_url: str = "https://fapi.binance.com",
        *,
        recv_window: int = 5000,
        timeout: float = 10.0,
        clock: Callable[[], float] = time.time,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self.http = BinanceHttp(
            base_url, recv_window=recv_window, timeout=timeout, clock=clock, monotonic=monotonic
        )
        self.futures_url, self.monotonic = futures_url.rstrip("/"), monotonic
        self._rules: dict[str, tuple[float, SymbolRules]] = {}
        self._leg_types: dict[int, str] = {}
        self._lock = threading.Lock()

    def key_info(self, creds: Credentials) -> KeyInfo:
        account = self.http.signed("GET", "/api/v3/account", creds)
        restrictions = self.http.signed("GET", "/sapi/v1/account/apiRestrictions", creds)
        whitelist: tuple[str, ...] | None = None
        if restrictions.get("ipRestrict"):
            ips = self.http.signed("GET", "/sapi/v1/account/apiRestrictions/ipRestriction", creds)
            whitelist = tuple(str(ip) for ip in ips.get("ipList", []))
        can_spot = bool(restrictions.get("enableSpotAndMarginTrading")) and bool(
            account.get("canTrade", True)
        )
        return KeyInfo(str(account.get("uid") or ""), can_spot, whitelist)

    def balances(self, creds: Credentials) -> dict[str, dict[str, Decimal]]:
        out: dict[str, dict[str, Decimal]] = {w: {} for w in WALLETS}
        for b in self.http.signed("GET", "/api/v3/account", creds).get("balances", []):
            if Decimal(b["free"]) > 0:
                out["spot"][b["asset"]] = Decimal(b["free"])
        for b in self.http.signed("POST", "/sapi/v1/asset/get-funding-asset", creds) or []:
            if Decimal(b["free"]) > 0:
                out["funding"][b["asset"]] = Decimal(b["free"])
        try:
            futures = self.http.signed("GET", "/fapi/v2/balance", creds, base=self.futures_url)
        except (ExchangeUnavailable, ExchangeRejected, InvalidCredentials):
            futures = []  # documented: no futures wallet readable (or a spot-only key), an empty map
        for b in futures or []:
            if Decimal(b["availableBalance"]) > 0:
                out["futures"][b["asset"]] = Decimal(b["availableBalance"])
        return out

    def symbol_rules(self, symbol: str) -> SymbolRules:
        with self._lock:
            hit = self._rules.get(symbol)
        if hit is not None and hit[0] > self.monotonic():
            return hit[1]
        try:
            info = self.http.public("/api/v3/exchangeInfo", {"symbol": symbol})
        except ExchangeRejected as exc:
            if exc.code == UNKNOWN_SYMBOL:
                raise LookupError(f"{symbol} is not traded on binance") from None
            raise
        try:
            rules = _rules_of(symbol, info)
        except (KeyError, TypeError, ValueError, InvalidOperation):
            raise ExchangeUnavailable(f"the exchange's rules of {symbol} are malformed") from None
        with self._lock:
            self._rules[symbol] = (self.monotonic() + RULES_TTL, rules)
        return rules

    def last_price(self, symbol: str) -> Decimal:
        try:
            return Decimal(self.http.public("/api/v3/ticker/price", {"symbol": symbol})["price"])
        except ExchangeRejected as exc:
            if exc.code == UNKNOWN_SYMBOL:
                raise LookupError(f"{symbol} is not traded on binance") from None
            raise

    def place_oco(self, creds: Credentials, order: OcoRequest) -> OcoResult:
        sell = order.side == "SELL"
        limit = {"Type": "LIMIT_MAKER", "Price": _plain(order.take_profit_price)}
        stop = {
            "Type": "STOP_LOSS_LIMIT",
            "Price": _plain(order.stop_limit_price),
            "StopPrice": _plain(order.stop_price),
            "TimeInForce": "GTC",
        }
        above, below = (limit, stop) if sell else (stop, limit)
        params = {
            "symbol": order.symbol,
            "side": order.side,
            "quantity": _plain(order.quantity),
            "listClientOrderId": order.client_order_id,
        }
        params.update({f"above{k}": v for k, v in above.items()})
        params.update({f"below{k}": v for k, v in below.items()})
        result = _oco(self.http.signed("POST", "/api/v3/orderList/oco", creds, params))
        self._remember(result.legs)
        return result

    def find_order_list(self, creds: Credentials, client_order_id: str) -> OcoResult | None:
        try:
            query = {"origClientOrderId": client_order_id}
            reply = self.http.signed("GET", "/api/v3/orderList", creds, query)
        except ExchangeRejected as exc:
            if exc.code in UNKNOWN_ORDER_CODES:
                return None
            raise
        result = _oco(reply)
        if reply.get("orderReports"):
            return result
        typed = self._typed(result) if result.status != "ALL_DONE" else None
        if typed is not None:
            return typed
        # the list ended (which leg filled?), or a leg's type is not known yet: read each leg
        legs = tuple(self._leg(creds, leg) for leg in result.legs)
        self._remember(legs)
        return OcoResult(result.order_list_id, result.client_order_id, result.status, legs)

    def open_order_lists(self, creds: Credentials) -> dict[str, OcoResult] | None:
        """One ``GET /api/v3/openOrderList`` (weight 6) for all of an account's working OCOs, where
        each ``/api/v3/orderList`` costs 4; lists with a leg of unknown type are left out."""
        lists = (
            self._typed(_oco(reply))
            for reply in self.http.signed("GET", "/api/v3/openOrderList", creds) or []
        )
        return {typed.client_order_id: typed for typed in lists if typed is not None}

    def _typed(self, result: OcoResult) -> OcoResult | None:
        """``result`` with each leg's remembered type; None when one is not known."""
        with self._lock:
            types = [self._leg_types.get(leg.order_id) for leg in result.legs]
        if not all(types):
            return None
        legs = tuple(
            OcoLeg(g.symbol, g.order_id, str(t), g.status) for g, t in zip(result.legs, types, strict=True)
        )
        return OcoResult(result.order_list_id, result.client_order_id, result.status, legs)

    def _leg(self, creds: Credentials, leg: OcoLeg) -> OcoLeg:
        query = {"symbol": leg.symbol, "orderId": leg.order_id}
        order = self.http.signed("GET", "/api/v3/order", creds, query)
        return OcoLeg(leg.symbol, leg.order_id, str(order.get("type", "")), str(order.get("status", "")))

    def _remember(self, legs: tuple[OcoLeg, ...]) -> None:
        with self._lock:
            for leg in legs:
                if leg.type:
                    self._leg_types[leg.order_id] = leg.type
            while len(self._leg_types) > LEG_TYPES_KEPT:
                del self._leg_types[next(iter(self._leg_types))]

    def incoming_transfers(self, creds: Credentials, since: int) -> list[Transfer]:
        rows: dict[str, dict[str, Any]] = {}  # by deposit ID: one on a window's edge is read twice
        for start, end in windows(max(since, BINANCE_OPENED), self.http.now_ms() // 1000):
            offset = 0
            while True:
                window = {
                    "status": 1,
                    "startTime": start * 1000,
                    "endTime": end * 1000,
                    "offset": offset,
                    "limit": DEPOSIT_PAGE,
                }
                page = self.http.signed("GET", "/sapi/v1/capital/deposit/hisrec", creds, window) or []
                rows.update({str(r.get("id") or r["txId"]): r for r in page})
                if len(page) < DEPOSIT_PAGE:
                    break
                offset += len(page)
        out = [
            Transfer(
                str(r["txId"]),
                str(r["coin"]),
                Decimal(str(r["amount"])),
                None,
                str(r["txId"]),
                int(r["insertTime"]) // 1000,
            )
            for r in rows.values()
        ]
        return sorted(out, key=lambda t: (t.time, t.tx_id))


def _rules_of(symbol: str, info: dict[str, Any]) -> SymbolRules:
    [market] = info["symbols"]
    filters = {f["filterType"]: f for f in market["filters"]}
    tick, step = Decimal(filters["PRICE_FILTER"]["tickSize"]), Decimal(filters["LOT_SIZE"]["stepSize"])
    notional = filters.get("NOTIONAL") or filters.get("MIN_NOTIONAL") or {"minNotional": "0"}
    return SymbolRules(
        symbol,
        market["baseAsset"],
        market["quoteAsset"],
        _digits(tick),
        _digits(step),
        tick.normalize(),
        step.normalize(),
        Decimal(filters["LOT_SIZE"]["minQty"]),
        Decimal(notional["minNotional"]),
    )


def _oco(reply: dict[str, Any]) -> OcoResult:
    reports = {o["orderId"]: o for o in reply.get("orderReports", [])}
    legs = []
    for o in reply.get("orders", []):
        report = reports.get(o["orderId"], {})
        kind, status = str(report.get("type", o.get("type", ""))), str(report.get("status", "NEW"))
        legs.append(OcoLeg(o["symbol"], int(o["orderId"]), kind, status))
    ids = (str(reply["orderListId"]), str(reply["listClientOrderId"]), str(reply["listOrderStatus"]))
    return OcoResult(*ids, tuple(legs))
