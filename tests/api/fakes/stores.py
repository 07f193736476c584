"""A loopback fake of the two app stores' server APIs: Apple's transaction look-up (a JWS whose payload
is read) and Google Play's subscription look-up; ``down`` makes them answer 503."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from tests.api.fakes.loopback import serve

TOKEN = "store-api-token"


def _b64(data: dict[str, Any]) -> str:
    return base64.urlsafe_b64encode(json.dumps(data).encode()).decode().rstrip("=")


@dataclass
class Stores:
    """Purchases each store holds; ``url`` once started."""

    url: str = ""
    apple: dict[str, dict[str, Any]] = field(default_factory=dict)
    google: dict[str, dict[str, Any]] = field(default_factory=dict)
    down: bool = False


def _app(stores: Stores) -> Starlette:
    def refused(request: Request) -> JSONResponse | None:
        if stores.down:
            return JSONResponse({"error": "unavailable"}, status_code=503)
        if request.headers.get("authorization") != f"Bearer {TOKEN}":
            return JSONResponse({"error": "unauthorized"}, status_code=401)
        return None

    async def apple(request: Request) -> JSONResponse:
        answer = refused(request)
        if answer is not None:
            return answer
        payload = stores.apple.get(request.path_params["tx"])
        if payload is None:
            return JSONResponse({"errorCode": 4040010}, status_code=404)
        return JSONResponse({"signedTransactionInfo": f"{_b64({'alg': 'ES256'})}.{_b64(payload)}.c2ln"})

    async def google(request: Request) -> JSONResponse:
        answer = refused(request)
        if answer is not None:
            return answer
        found = stores.google.get(request.path_params["token"])
        return JSONResponse(found) if found else JSONResponse({"error": {"code": 404}}, status_code=404)

    return Starlette(
        routes=[
            Route("/inApps/v1/transactions/{tx}", apple),
            Route(
                "/androidpublisher/v3/applications/{package}/purchases/subscriptionsv2/tokens/{token}", google
            ),
        ]
    )


@contextmanager
def running_stores() -> Iterator[Stores]:
    """Both stores served by uvicorn on a free loopback port for the duration of the block."""
    stores = Stores()
    with serve(_app(stores)) as url:
        stores.url = url
        yield stores
