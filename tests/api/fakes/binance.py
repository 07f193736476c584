"""A loopback fake of Binance's spot REST protocol: it checks every signature (HMAC-SHA256 of the exact
query string with the key's secret) and timestamp window like Binance (-1022, -1021), keeps one
account in memory, refuses a second order list of a client ID (-2010 "Duplicate order sent."), and
fails on cue: ``fail_next(kind)`` with kind ``timeout_after_accept`` (the order is stored, the answer
never comes in time), ``server_error``, ``malformed``, ``rate_limit`` (429 + Retry-After) or
``banned`` (418 + Retry-After)."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from tests.api.fakes.loopback import serve

KEY, SECRET = "k" * 64, "s" * 64
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
    failures: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)
    order_lists: dict[str, dict[str, Any]] = field(default_factory=dict)
    ip_list: list[str] = field(default_factory=lambda: ["127.0.0.1"])
    spot_trading: bool = True
    deposits: list[dict[str, Any]] = field(default_factory=list)

    def fail_next(self, kind: str) -> None:
        """Make the next signed or public request fail as ``kind``."""
        self.failures.append(kind)


def _error(status: int, code: int, msg: str) -> JSONResponse:
    return JSONResponse({"code": code, "msg": msg}, status_code=status)


def _app(fake: BinanceFake) -> Starlette:
    async def failure(accept: Any = None) -> Response | None:
        if not fake.failures:
            return None
        kind = fake.failures.pop(0)
        if kind == "timeout_after_accept":
            if accept is not None:
                accept()
            await asyncio.sleep(3)
            return JSONResponse({})
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
        refused = check(request)
        if refused is not None:
            return refused
        params = dict(request.query_params)
        path = request.url.path
        if path == "/api/v3/orderList/oco":
            return await place(params)
        down = await failure()
        if down is not None:
            return down
        if path == "/api/v3/account":
            return JSONResponse(
                {
                    "uid": 354937868,
                    "canTrade": True,
                    "balances": [
                        {"asset": "BTC", "free": "0.50000000", "locked": "0"},
                        {"asset": "USDT", "free": "1000.00000000", "locked": "0"},
                        {"asset": "BNB", "free": "0.00000000", "locked": "0"},
                    ],
                }
            )
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
            return JSONResponse([{"asset": "USDT", "availableBalance": "100.0", "balance": "100.0"}])
        if path == "/api/v3/orderList":
            found = fake.order_lists.get(params.get("origClientOrderId", ""))
            return JSONResponse(found) if found else _error(400, -2011, "Order list does not exist.")
        if path == "/sapi/v1/capital/deposit/hisrec":
            return JSONResponse(fake.deposits)
        return _error(404, -1, "not here")

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
        down = await failure(accept)
        if down is not None:
            return down
        accept()
        return JSONResponse(fake.order_lists[cid])

    async def public(request: Request) -> Response:
        fake.requests.append(request.url.path)
        down = await failure()
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
