"""Routes of buying: capabilities, checkouts, orders, refunds, and the sandbox provider's hosted
page and callback.

Example:
    >>> sorted({r.path for r in ROUTES})[:2]
    ['/checkouts', '/commerce/capabilities']
"""

from __future__ import annotations

import html
from functools import partial
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response

from svc_api.education.commerce import contract as op
from svc_api.education.commerce import requests
from svc_api.education.commerce import service as commerce
from svc_api.education.commerce.provider import provider_for
from svc_api.education.conventions import Req, route
from svc_api.education.learning import service as learning


def _provider(req: Req) -> Any:
    return provider_for(req.services.settings)


def capabilities(req: Req) -> dict[str, Any]:
    settings = req.services.settings
    return {
        "checkout_open": bool(settings.edu_checkout_open),
        "currency": settings.edu_currency,
        "payment_providers": [_provider(req).name],
        "refund_window_days": commerce.REFUND_WINDOW_SECONDS // 86_400,
        "bundles": True,
        "certificates": True,
    }


def create_checkout(req: Req) -> dict[str, Any]:
    svc_id = req.svc_id
    body: op.EduCheckoutRequest = req.fields
    settings = req.services.settings
    return requests.checkout(
        req.store,
        _provider(req),
        svc_id,
        body.item(),
        now=req.now,
        is_open=bool(settings.edu_checkout_open),
        ttl=int(settings.edu_checkout_ttl_seconds),
        expected=body.expected_price,
    )


def get_order(req: Req) -> dict[str, Any]:
    svc_id = req.svc_id
    return requests.order(req.store, _provider(req), svc_id, req.path["order_id"], now=req.now)


def create_refund(req: Req) -> dict[str, Any]:
    svc_id = req.svc_id
    reason = req.fields.reason
    return learning.refund_order(req.store, _provider(req), svc_id, req.path["order_id"], reason, now=req.now)


def get_refund(req: Req) -> dict[str, Any]:
    svc_id = req.svc_id
    return requests.refund(req.store, svc_id, req.path["order_id"], req.path["refund_request_id"])


async def sandbox_page(request: Request) -> Response:
    """``GET /sandbox/checkout/{token}``: the sandbox provider's hosted checkout page."""
    services = request.app.state.services
    token = request.path_params["token"]

    order = await run_in_threadpool(
        partial(requests.sandbox_order, services.store, token, now=services.clock.now())
    )
    amount = f"{order.amount_minor} {html.escape(order.currency)} (minor units)"
    actions = "".join(
        f'<form method="post" action="{html.escape(token)}/{outcome}"><button>{label}</button></form>'
        for outcome, label in (("approve", "Pay"), ("decline", "Decline"))
    )
    return HTMLResponse(
        f"<!doctype html><title>Sandbox checkout</title><h1>Sandbox checkout</h1>"
        f"<p>Order {html.escape(order.order_id)}: {amount}</p>{actions}"
    )


async def sandbox_decide(request: Request) -> Response:
    """``POST /sandbox/checkout/{token}/{approve|decline}``: the buyer's choice on the page; the
    provider's signed callback follows (at once, and retried until accepted)."""
    services = request.app.state.services
    token, choice = request.path_params["token"], request.path_params["choice"]
    outcome = {"approve": "paid", "decline": "declined"}.get(choice)
    if outcome is None:
        return JSONResponse({"error": "choose approve or decline", "code": "not_found"}, status_code=404)
    provider = provider_for(services.settings)

    def decide() -> dict[str, Any]:
        order_id = requests.sandbox_outcome(
            services.store, provider, token, outcome, now=services.clock.now()
        )
        return {"order_id": order_id, "outcome": outcome}

    return JSONResponse(await run_in_threadpool(decide))


async def payment_callback(request: Request) -> Response:
    """``POST /payments/callback``: a signed event of the payment provider."""
    services = request.app.state.services
    payload = await request.body()
    provider = provider_for(services.settings)
    signature = request.headers.get("x-sandbox-signature")

    applied = partial(
        requests.callback, services.store, provider, payload, signature, now=services.clock.now()
    )
    return JSONResponse(await run_in_threadpool(applied))


_REFUND = "/orders/{order_id}/refund-requests"
ROUTES = [
    route("/commerce/capabilities", capabilities, "GET", access="public", op=op.CAPABILITIES),
    route("/checkouts", create_checkout, "POST", access="session", op=op.CHECKOUT),
    route("/orders/{order_id}", get_order, "GET", access="session", op=op.ORDER),
    route(_REFUND, create_refund, "POST", access="session", op=op.REFUND),
    route(_REFUND + "/{refund_request_id}", get_refund, "GET", access="session", op=op.REFUND_REQUEST),
    route("/sandbox/checkout/{token}", sandbox_page, "GET", access="public", raw=True, op=op.SANDBOX_PAGE),
    route(
        "/sandbox/checkout/{token}/{choice}",
        sandbox_decide,
        "POST",
        access="public",
        raw=True,
        op=op.SANDBOX_DECIDE,
    ),
    route("/payments/callback", payment_callback, "POST", access="public", raw=True, op=op.CALLBACK),
]
