"""The Binance spot adapter of :class:`~svc_api.exchange.interface.Exchange`.

Signed requests carry ``timestamp`` and ``recvWindow`` and an HMAC-SHA256 ``signature`` of the exact
query string under the secret, with the key in ``X-MBX-APIKEY``; every parameter travels in the query
string. The clock offset to the exchange's is learned from ``GET /api/v3/time`` and learned again
when the exchange answers -1021 (outside the window), retrying that request once. Answers map to the
interface's failures: 429 and 418 (with their ``Retry-After``), 5xx, timeouts, broken connections and
bodies that are not JSON are :class:`ExchangeUnavailable`; -2014/-2015/-1022 are
:class:`InvalidCredentials`; any other refusal is :class:`ExchangeRejected` (``duplicate`` for an
order list whose client ID exists). The secret and the signature are never logged.

Limits (documented): futures balances come from the futures base URL and are an empty map when it
cannot be read; deposits carry no memo on most networks, so a transfer's note is its ``txId`` and its
payer unknown; symbol rules are cached an hour.

Example:
    >>> sign("NhqPtmdSJYdKjVHjA7PZj4Mge3R5YNiP1e3UZjInClVN65XAbvqqM6A7H5fATj0j",
    ...      "symbol=LTCBTC&side=BUY&type=LIMIT&timeInForce=GTC&quantity=1&price=0.1&recvWindow=5000"
    ...      "&timestamp=1499827319559")
    'c8db56825ae71d6d79447849e617115f4a920fa2acdcab2b053c4b2838bd6b71'
"""

from __future__ import annotations

import hashlib
import hmac
import threading
import time
from collections.abc import Callable
from decimal import Decimal
from typing import Any
from urllib.parse import urlencode

import httpx

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

CREDENTIAL_CODES = {-2014, -2015, -1022}
UNKNOWN_ORDER_CODES = {-2011, -2013}
RULES_TTL = 3600.0


def sign(secret: str, query: str) -> str:
    """The HMAC-SHA256 signature of ``query`` under ``secret`` (hex)."""
    return hmac.new(secret.encode(), query.encode(), hashlib.sha256).hexdigest()


def _plain(value: Decimal) -> str:
    return format(value.normalize(), "f")


def _digits(size: Decimal) -> int:
    return max(0, -size.normalize().as_tuple().exponent) if size > 0 else 0  # type: ignore[operator]


class BinanceExchange:
    """Binance spot over its REST API (``base_url`` and ``futures_url`` point at a test double in tests)."""

    name = "binance"

    def __init__(
        self, base_url: str = "https://api.binance.com", futures_url: str = "https://fapi.binance.com", *,
        recv_window: int = 5000, timeout: float = 10.0, clock: Callable[[], float] = time.time,
    ) -> None:  # fmt: skip
        self.base_url, self.futures_url = base_url.rstrip("/"), futures_url.rstrip("/")
        self.recv_window, self.clock = recv_window, clock
        self.client = httpx.Client(timeout=timeout)
        self._offset_ms: int | None = None
        self._rules: dict[str, tuple[float, SymbolRules]] = {}
        self._lock = threading.Lock()

    # ---- transport --------------------------------------------------------------------------------

    def _send(self, method: str, url: str, headers: dict[str, str] | None = None) -> httpx.Response:
        try:
            return self.client.request(method, url, headers=headers)
        except httpx.HTTPError as exc:
            raise ExchangeUnavailable(f"{type(exc).__name__} calling the exchange") from None

    def _reply(self, response: httpx.Response) -> Any:
        if response.status_code in (418, 429):
            raw = response.headers.get("Retry-After")
            wait = float(raw) if raw and raw.replace(".", "", 1).isdigit() else None
            raise ExchangeUnavailable(
                f"rate limited by the exchange ({response.status_code})", retry_after=wait
            )
        if response.status_code >= 500:
            raise ExchangeUnavailable(f"the exchange answered {response.status_code}")
        try:
            body = response.json()
        except ValueError:
            raise ExchangeUnavailable("the exchange's answer is not JSON") from None
        if response.status_code >= 400:
            code = body.get("code") if isinstance(body, dict) else None
            message = str(body.get("msg", "")) if isinstance(body, dict) else ""
            if code in CREDENTIAL_CODES:
                raise InvalidCredentials(message or "the key was refused")
            raise ExchangeRejected(f"{code}: {message}", duplicate="Duplicate order" in message)
        return body

    def _now_ms(self) -> int:
        if self._offset_ms is None:
            self._sync_time()
        return int(self.clock() * 1000) + int(self._offset_ms or 0)

    def _sync_time(self) -> None:
        before = self.clock()
        server = self._reply(self._send("GET", f"{self.base_url}/api/v3/time"))
        after = self.clock()
        try:
            self._offset_ms = int(server["serverTime"]) - int((before + after) / 2 * 1000)
        except (KeyError, TypeError, ValueError):
            raise ExchangeUnavailable("the exchange's time answer is malformed") from None

    def _signed(self, method: str, path: str, creds: Credentials, params: dict[str, Any] | None = None,
                *, base: str | None = None) -> Any:  # fmt: skip
        for attempt in (1, 2):
            query = urlencode({**(params or {}), "recvWindow": self.recv_window, "timestamp": self._now_ms()})
            url = f"{base or self.base_url}{path}?{query}&signature={sign(creds.api_secret, query)}"
            response = self._send(method, url, {"X-MBX-APIKEY": creds.api_key})
            if attempt == 1 and response.status_code == 400 and _code(response) == -1021:
                self._sync_time()  # our clock drifted from the exchange's: learn the offset again
                continue
            return self._reply(response)
        raise AssertionError("unreachable")

    def _public(self, path: str, params: dict[str, Any]) -> Any:
        return self._reply(self._send("GET", f"{self.base_url}{path}?{urlencode(params)}"))

    # ---- the interface ----------------------------------------------------------------------------

    def key_info(self, creds: Credentials) -> KeyInfo:
        account = self._signed("GET", "/api/v3/account", creds)
        restrictions = self._signed("GET", "/sapi/v1/account/apiRestrictions", creds)
        whitelist: tuple[str, ...] | None = None
        if restrictions.get("ipRestrict"):
            ips = self._signed("GET", "/sapi/v1/account/apiRestrictions/ipRestriction", creds)
            whitelist = tuple(str(ip) for ip in ips.get("ipList", []))
        can_spot = bool(restrictions.get("enableSpotAndMarginTrading")) and bool(
            account.get("canTrade", True)
        )
        return KeyInfo(str(account.get("uid") or ""), can_spot, whitelist)

    def balances(self, creds: Credentials) -> dict[str, dict[str, Decimal]]:
        out: dict[str, dict[str, Decimal]] = {w: {} for w in WALLETS}
        for b in self._signed("GET", "/api/v3/account", creds).get("balances", []):
            if Decimal(b["free"]) > 0:
                out["spot"][b["asset"]] = Decimal(b["free"])
        for b in self._signed("POST", "/sapi/v1/asset/get-funding-asset", creds) or []:
            if Decimal(b["free"]) > 0:
                out["funding"][b["asset"]] = Decimal(b["free"])
        try:
            futures = self._signed("GET", "/fapi/v2/balance", creds, base=self.futures_url)
        except (ExchangeUnavailable, ExchangeRejected):
            futures = []  # documented: no futures wallet readable, an empty map
        for b in futures or []:
            if Decimal(b["availableBalance"]) > 0:
                out["futures"][b["asset"]] = Decimal(b["availableBalance"])
        return out

    def symbol_rules(self, symbol: str) -> SymbolRules:
        with self._lock:
            hit = self._rules.get(symbol)
        if hit is not None and hit[0] > time.monotonic():
            return hit[1]
        try:
            info = self._public("/api/v3/exchangeInfo", {"symbol": symbol})
        except ExchangeRejected:
            raise LookupError(f"{symbol} is not traded on binance") from None
        [market] = info["symbols"]
        filters = {f["filterType"]: f for f in market["filters"]}
        tick, step = Decimal(filters["PRICE_FILTER"]["tickSize"]), Decimal(filters["LOT_SIZE"]["stepSize"])
        notional = filters.get("NOTIONAL") or filters.get("MIN_NOTIONAL") or {"minNotional": "0"}
        rules = SymbolRules(
            symbol, market["baseAsset"], market["quoteAsset"], _digits(tick), _digits(step), tick.normalize(),
            step.normalize(), Decimal(filters["LOT_SIZE"]["minQty"]), Decimal(notional["minNotional"]),
        )  # fmt: skip
        with self._lock:
            self._rules[symbol] = (time.monotonic() + RULES_TTL, rules)
        return rules

    def last_price(self, symbol: str) -> Decimal:
        return Decimal(self._public("/api/v3/ticker/price", {"symbol": symbol})["price"])

    def place_oco(self, creds: Credentials, order: OcoRequest) -> OcoResult:
        sell = order.side == "SELL"
        limit = {"Type": "LIMIT_MAKER", "Price": _plain(order.take_profit_price)}
        stop = {"Type": "STOP_LOSS_LIMIT", "Price": _plain(order.stop_limit_price),
                "StopPrice": _plain(order.stop_price), "TimeInForce": "GTC"}  # fmt: skip
        above, below = (limit, stop) if sell else (stop, limit)
        params = {"symbol": order.symbol, "side": order.side, "quantity": _plain(order.quantity),
                  "listClientOrderId": order.client_order_id}  # fmt: skip
        params.update({f"above{k}": v for k, v in above.items()})
        params.update({f"below{k}": v for k, v in below.items()})
        return _oco(self._signed("POST", "/api/v3/orderList/oco", creds, params))

    def find_order_list(self, creds: Credentials, client_order_id: str) -> OcoResult | None:
        try:
            reply = self._signed("GET", "/api/v3/orderList", creds, {"origClientOrderId": client_order_id})
        except ExchangeRejected as exc:
            if any(str(code) in str(exc) for code in UNKNOWN_ORDER_CODES):
                return None
            raise
        return _oco(reply)

    def incoming_transfers(self, creds: Credentials, since: int) -> list[Transfer]:
        window = {"status": 1, "startTime": since * 1000}
        rows = self._signed("GET", "/sapi/v1/capital/deposit/hisrec", creds, window)
        out = [
            Transfer(str(r["txId"]), str(r["coin"]), Decimal(str(r["amount"])), None, str(r["txId"]),
                     int(r["insertTime"]) // 1000)
            for r in rows or []
        ]  # fmt: skip
        return sorted(out, key=lambda t: (t.time, t.tx_id))


def _code(response: httpx.Response) -> int | None:
    try:
        body = response.json()
    except ValueError:
        return None
    return body.get("code") if isinstance(body, dict) else None


def _oco(reply: dict[str, Any]) -> OcoResult:
    reports = {o["orderId"]: o for o in reply.get("orderReports", [])}
    legs = []
    for o in reply.get("orders", []):
        report = reports.get(o["orderId"], {})
        kind, status = str(report.get("type", o.get("type", ""))), str(report.get("status", "NEW"))
        legs.append(OcoLeg(o["symbol"], int(o["orderId"]), kind, status))
    ids = (str(reply["orderListId"]), str(reply["listClientOrderId"]), str(reply["listOrderStatus"]))
    return OcoResult(*ids, tuple(legs))
