"""Billing's routes: ``/user`` ``iap_verify`` and the webhooks of the card store and the app stores.

Example:
    >>> sorted(USER), [r.path for r in WEBHOOKS]
    (['iap_verify'], ['/webhooks/card', '/webhooks/store/{platform}'])
"""

from __future__ import annotations

from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse

from svc_api.billing import contract as c
from svc_api.billing import service as billing
from svc_api.billing import webhooks
from svc_api.core.contract import described
from svc_api.core.dispatch import Call, Operation


def _iap(call: Call, req: c.IapVerify) -> dict[str, Any]:
    services = call.services
    return billing.iap_verify(
        services.store,
        services.settings,
        call.svc_id,
        req.platform,
        req.product_id,
        req.transaction_id,
        req.receipt,
        now=call.now,
    )


async def card_webhook(request: Request) -> JSONResponse:
    """``POST /webhooks/card``: a signed card-store event."""
    services = request.app.state.services
    body = await request.body()
    reply = await run_in_threadpool(
        billing.card_webhook,
        services.store,
        services.settings.card_webhook_secret,
        body,
        request.headers.get("x-signature"),
        now=services.clock.now(),
    )
    return JSONResponse(reply, status_code=202 if reply.get("outcome") == "queued" else 200)


async def store_webhook(request: Request) -> JSONResponse:
    """``POST /webhooks/store/{platform}``: an app store's server notification."""
    services = request.app.state.services
    body = await request.body()
    token, expected = request.headers.get("x-store-token"), services.settings.store_webhook_token
    platform, now = request.path_params["platform"], services.clock.now()
    reply = await run_in_threadpool(
        billing.store_notification, services.store, token, expected, platform, body, now=now
    )
    return JSONResponse(reply, status_code=202 if reply.get("outcome") == "queued" else 200)


USER: dict[str, Operation] = {
    "iap_verify": Operation(
        _iap,
        scope="trade",
        request=c.IapVerify,
        reply=c.Purchase,
        summary="Apply an in-app purchase of the caller, verified with its store.",
        errors=c.IAP_ERRORS,
    )
}
WEBHOOKS = [
    described("/webhooks/card", card_webhook, "POST", webhooks.CARD),
    described("/webhooks/store/{platform}", store_webhook, "POST", webhooks.STORE),
]
