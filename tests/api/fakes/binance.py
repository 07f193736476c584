"""A loopback fake of Binance's spot REST protocol: it checks every signature (HMAC-SHA256 of the exact
query string with the key's secret) and timestamp window like Binance (-1022, -1021), keeps one
account in memory, refuses a second order list of a client ID (-2010 "Duplicate order sent.") and an
OCO the balance does not cover (-2010), reads an order list back as Binance does (its legs without
status or type: ``GET /api/v3/order`` gives those), ends one with ``fill(client_id, leg_type)``,
refuses futures to a spot-only key (``futures_enabled = False``: -2015) and deposit history over 90
days (-1127), and fails on cue: ``fail_next(kind, path=None)`` with kind ``timeout_after_accept``
(the order is stored, the answer never comes in time), ``error_after_accept`` (stored, then a 502),
``server_error``, ``malformed``, ``rate_limit`` (429 + Retry-After) or ``banned`` (418 +
Retry-After); ``answer_next(status, code, msg, path=None)`` answers one request with that error. A
failure with a ``path`` waits for a request to that path. Every request is in ``requests`` (paths)
and ``calls`` (path and query parameters)."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from tests.api.fakes.loopback import serve

KEY, SECRET = "k" * 64, "s" * 64
FREE = {"BTC": "0.50000000", "USDT": "1000.00000000", "BNB": "0.00000000"}
DAY_MS = 86_400_000
SYMBOLS = {
    "BTCUSDT": {
        "base": "BTC",
        "tick": "0.01000000",
        "step": "0.00001000",
        "min_qty": "0.00001000",
        "notional": "5.00000000",
        "price": "60000.00",
    },
    "ETHUSDT": {
        "base": "ETH",
        "tick": "0.01000000",
        "step": "0.00010000",
        "min_qty": "0.00010000",
        "notional": "5.00000000",
        "price": "3000.00",
    },
}


@dataclass
class BinanceFake:
    """The fake's state; ``url`` once started."""

    url: str = ""
    skew_ms: int = 0
    failures: list[tuple[Any, str | None]] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)
    calls: list[tuple[str, dict[str, str]]] = field(default_factory=list)
    order_lists: dict[str, dict[str, Any]] = field(default_factory=dict)
    ip_list: list[str] = field(default_factory=lambda: ["127.0.0.1"])
    spot_trading: bool = True
    futures_enabled: bool = True
    deposits: list[dict[str, Any]] = field(default_factory=list)

    def fail_next(self, kind: str, path: str | None = None) -> None:
        """Make the next signed or public request (to ``path`` when given) fail as ``kind``."""
        self.failures.append((kind, path))

    def answer_next(self, status: int, code: int, msg: str, path: str | None = None) -> None:
        """Answer the next request (to ``path`` when given) with Binance error ``code``."""
        self.failures.append(((status, code, msg), path))

    def fill(self, client_order_id: str, leg_type: str) -> None:
        """The leg ``leg_type`` of an order list filled: the other expired, the list is done."""
        found = self.order_lists[client_order_id]
        for report in found["orderReports"]:
            report["status"] = "FILLED" if report["type"] == leg_type else "EXPIRED"
        found.update(listStatusType="ALL_DONE", listOrderStatus="ALL_DONE")


def _error(status: int, code: int, msg: str) -> JSONResponse:
    return JSONResponse({"code": code, "msg": msg}, status_code=status)


def _app(fake: BinanceFake) -> Starlette:
    async def failure(path: str, accept: Any = None) -> Response | None:
        due = [i for i, (_, where) in enumerate(fake.failures) if where in (None, path)]
        if not due:
            return None
        kind, _ = fake.failures.pop(due[0])
        if isinstance(kind, tuple):
            return _error(*kind)
        if kind in ("timeout_after_accept", "error_after_accept") and accept is not None:
            accept()
        if kind == "timeout_after_accept":
            await asyncio.sleep(3)
            return JSONResponse({})
        if kind == "error_after_accept":
            return PlainTextResponse("upstream failed", status_code=502)
        if kind == "server_error":
            return PlainTextResponse("upstream failed", status_code=502)
        if kind == "malformed":
            return PlainTextResponse("<html>oops</html>", status_code=200)
        if kind == "rate_limit":
            return JSONResponse(
                {"code": -1003, "msg": "Too many requests"}, 429, headers={"Retry-After": "7"}
            )
        return JSONResponse({"code": -1003, "msg": "IP banned"}, 418, headers={"Retry-After": "120"})

    def check(request: Request) -> Response | None:
        query = request.url.query
        body, _, signature = query.rpartition("&signature=")
        if request.headers.get("X-MBX-APIKEY") != KEY:
            return _error(401, -2015, "Invalid API-key, IP, or permissions for action.")
        if not signature or not hmac.compare_digest(
            signature, hmac.new(SECRET.encode(), body.encode(), hashlib.sha256).hexdigest()
        ):
            return _error(400, -1022, "Signature for this request is not valid.")
        params = dict(request.query_params)
        server_ms = int(time.time() * 1000) + fake.skew_ms
        if abs(int(params["timestamp"]) - server_ms) > int(params.get("recvWindow", 5000)):
            return _error(400, -1021, "Timestamp for this request is outside of the recvWindow.")
        return None

    async def signed(request: Request) -> Response:
        fake.requests.append(request.url.path)
        fake.calls.append((request.url.path, dict(request.query_params)))
        refused = check(request)
        if refused is not None:
            return refused
        params = dict(request.query_params)
        path = request.url.path
        if path == "/api/v3/orderList/oco":
            return await place(params)
        down = await failure(path)
        if down is not None:
            return down
        if path == "/api/v3/account":
            balances = [{"asset": a, "free": free, "locked": "0"} for a, free in FREE.items()]
            return JSONResponse({"uid": 354937868, "canTrade": True, "balances": balances})
        if path == "/sapi/v1/account/apiRestrictions":
            return JSONResponse(
                {
                    "ipRestrict": fake.ip_list is not None,
                    "enableSpotAndMarginTrading": fake.spot_trading,
                    "enableWithdrawals": False,
                }
            )
        if path == "/sapi/v1/account/apiRestrictions/ipRestriction":
            return JSONResponse({"ipRestrict": "true", "ipList": fake.ip_list or []})
        if path == "/sapi/v1/asset/get-funding-asset":
            return JSONResponse([{"asset": "USDT", "free": "25.5", "locked": "0"}])
        if path == "/fapi/v2/balance":
            if not fake.futures_enabled:
                return _error(401, -2015, "Invalid API-key, IP, or permissions for action.")
            return JSONResponse([{"asset": "USDT", "availableBalance": "100.0", "balance": "100.0"}])
        if path == "/api/v3/orderList":  # as Binance: the legs without their status or type
            found = fake.order_lists.get(params.get("origClientOrderId", ""))
            if not found:
                return _error(400, -2011, "Order list does not exist.")
            return JSONResponse({k: v for k, v in found.items() if k != "orderReports"})
        if path == "/api/v3/openOrderList":  # the working lists, shaped as orderList answers them
            working = [o for o in fake.order_lists.values() if o["listOrderStatus"] != "ALL_DONE"]
            return JSONResponse([{k: v for k, v in o.items() if k != "orderReports"} for o in working])
        if path == "/api/v3/order":
            reports = [r for o in fake.order_lists.values() for r in o["orderReports"]]
            legs = [r for r in reports if str(r["orderId"]) == params.get("orderId")]
            if not legs or legs[0]["symbol"] != params.get("symbol"):
                return _error(400, -2013, "Order does not exist.")
            return JSONResponse(legs[0])
        if path == "/sapi/v1/capital/deposit/hisrec":
            return deposits(params)
        return _error(404, -1, "not here")

    def deposits(params: dict[str, str]) -> Response:
        end = int(params.get("endTime") or time.time() * 1000)
        start = int(params.get("startTime") or end - 90 * DAY_MS)
        if not 0 <= end - start <= 90 * DAY_MS:
            return _error(400, -1127, "More than 90 days between startTime and endTime.")
        found = [d for d in fake.deposits if start <= d["insertTime"] <= end]
        if "status" in params:
            found = [d for d in found if str(d["status"]) == params["status"]]
        found.sort(key=lambda d: -d["insertTime"])  # newest first, as Binance
        offset, limit = int(params.get("offset", 0)), int(params.get("limit", 1000))
        return JSONResponse(found[offset : offset + limit])

    async def place(params: dict[str, str]) -> Response:
        cid = params["listClientOrderId"]

        def accept() -> None:
            list_id = len(fake.order_lists) + 1
            orders = [
                {"symbol": params["symbol"], "orderId": list_id * 10 + i, "clientOrderId": f"{cid}-{i}"}
                for i in (1, 2)
            ]
            below, above = params["belowType"], params["aboveType"]
            fake.order_lists[cid] = {
                "orderListId": list_id,
                "transactionTime": int(time.time() * 1000),
                "contingencyType": "OCO",
                "listStatusType": "EXEC_STARTED",
                "listOrderStatus": "EXECUTING",
                "listClientOrderId": cid,
                "symbol": params["symbol"],
                "orders": orders,
                "orderReports": [
                    {**orders[0], "type": below, "status": "NEW"},
                    {**orders[1], "type": above, "status": "NEW"},
                ],
            }

        if cid in fake.order_lists:
            return _error(400, -2010, "Duplicate order sent.")
        down = await failure("/api/v3/orderList/oco", accept)
        if down is not None:
            return down
        base, quote = SYMBOLS[params["symbol"]]["base"], "USDT"
        quantity = Decimal(params["quantity"])
        need = {"SELL": (base, quantity), "BUY": (quote, quantity * Decimal(params["abovePrice"]))}
        asset, amount = need[params["side"]]
        if amount > Decimal(FREE.get(asset, "0")):
            return _error(400, -2010, "Account has insufficient balance for requested action.")
        accept()
        return JSONResponse(fake.order_lists[cid])

    async def public(request: Request) -> Response:
        fake.requests.append(request.url.path)
        fake.calls.append((request.url.path, dict(request.query_params)))
        down = await failure(request.url.path)
        if down is not None:
            return down
        if request.url.path == "/api/v3/time":
            return JSONResponse({"serverTime": int(time.time() * 1000) + fake.skew_ms})
        symbol = request.query_params.get("symbol", "")
        if symbol not in SYMBOLS:
            return _error(400, -1121, "Invalid symbol.")
        s = SYMBOLS[symbol]
        if request.url.path == "/api/v3/ticker/price":
            return JSONResponse({"symbol": symbol, "price": s["price"]})
        filters = [
            {"filterType": "PRICE_FILTER", "tickSize": s["tick"]},
            {"filterType": "LOT_SIZE", "stepSize": s["step"], "minQty": s["min_qty"]},
            {"filterType": "NOTIONAL", "minNotional": s["notional"]},
        ]
        return JSONResponse(
            {
                "symbols": [
                    {"symbol": symbol, "baseAsset": s["base"], "quoteAsset": "USDT", "filters": filters}
                ]
            }
        )

    signed_paths = [
        "/api/v3/account",
        "/sapi/v1/account/apiRestrictions",
        "/sapi/v1/account/apiRestrictions/ipRestriction",
        "/api/v3/orderList",
        "/api/v3/openOrderList",
        "/api/v3/order",
        "/sapi/v1/capital/deposit/hisrec",
        "/fapi/v2/balance",
    ]
    routes = [Route(p, signed, methods=["GET"]) for p in signed_paths]
    routes += [
        Route(p, signed, methods=["POST"])
        for p in ("/api/v3/orderList/oco", "/sapi/v1/asset/get-funding-asset")
    ]
    routes += [
        Route(p, public, methods=["GET"])
        for p in ("/api/v3/time", "/api/v3/exchangeInfo", "/api/v3/ticker/price")
    ]
    return Starlette(routes=routes)


@contextmanager
def running_binance() -> Iterator[BinanceFake]:
    """The fake served by uvicorn on a free loopback port for the duration of the block."""
    fake = BinanceFake()
    with serve(_app(fake)) as url:
        fake.url = url
        yield fake
