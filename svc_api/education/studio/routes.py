"""Instructor routes: seller status and onboarding, studio products, submissions, bundles, answers.
Every one needs an instructor role (403 otherwise); changes need ``Idempotency-Key``, edits
``If-Match``.

Example:
    >>> "/seller/status" in [r.path for r in ROUTES]
    True
"""

from __future__ import annotations

from typing import Any

from starlette.responses import Response

from svc_api.education.conventions import Req, check_if_match, reply, route
from svc_api.education.fields import only_fields
from svc_api.education.studio import requests


def _currency(req: Req) -> str:
    return str(req.services.settings.edu_currency)


def _tagged(body: dict[str, Any], status: int = 200) -> Response:
    return reply(body, status, headers={"ETag": body["etag"]})


def seller_status(req: Req) -> dict[str, Any]:
    svc_id = req.svc_id
    return requests.seller_status(req.store, svc_id)


def start_onboarding(req: Req) -> Response:
    svc_id = req.svc_id
    only_fields(req.body, ())
    return reply(requests.start_onboarding(req.store, svc_id, now=req.now), 201)


def onboarding_page(req: Req) -> dict[str, Any]:
    """What the hosted onboarding page asks for (a client renders it as a form)."""
    return requests.onboarding_form(req.store, req.path["token"], now=req.now)


def submit_onboarding(req: Req) -> dict[str, Any]:
    only_fields(req.body, ("accept_contract", "payout_profile"))
    return requests.complete_onboarding(req.store, req.path["token"], req.body, now=req.now)


def create_product(req: Req) -> Response:
    svc_id = req.svc_id
    return _tagged(
        requests.create_product(req.store, svc_id, req.body, currency=_currency(req), now=req.now), 201
    )


def get_product(req: Req) -> Response:
    svc_id = req.svc_id
    return _tagged(requests.read_product(req.store, svc_id, req.path["product_id"]))


def update_product(req: Req) -> Response:
    svc_id = req.svc_id
    body = requests.update_product(
        req.store,
        svc_id,
        req.path["product_id"],
        req.body,
        lambda tag: check_if_match(req, tag),
        currency=_currency(req),
        now=req.now,
    )
    return _tagged(body)


def submit_product(req: Req) -> Response:
    svc_id = req.svc_id
    only_fields(req.body, ())
    return reply(requests.submit_product(req.store, svc_id, req.path["product_id"], now=req.now), 201)


def replace_curriculum(req: Req) -> Response:
    svc_id = req.svc_id
    only_fields(req.body, ("sections",))
    body = requests.replace_curriculum(
        req.store, svc_id, req.path["product_id"], req.body, lambda tag: check_if_match(req, tag), now=req.now
    )
    return _tagged(body)


def unpublish(req: Req) -> dict[str, Any]:
    svc_id = req.svc_id
    only_fields(req.body, ())
    return requests.unpublish(req.store, svc_id, req.path["product_id"], now=req.now)


def create_bundle(req: Req) -> Response:
    svc_id = req.svc_id
    return _tagged(
        requests.create_bundle(req.store, svc_id, req.body, currency=_currency(req), now=req.now), 201
    )


def get_bundle(req: Req) -> Response:
    svc_id = req.svc_id
    return _tagged(requests.read_bundle(req.store, svc_id, req.path["bundle_id"]))


def update_bundle(req: Req) -> Response:
    svc_id = req.svc_id
    body = requests.update_bundle(
        req.store,
        svc_id,
        req.path["bundle_id"],
        req.body,
        lambda tag: check_if_match(req, tag),
        currency=_currency(req),
        now=req.now,
    )
    return _tagged(body)


def answer(req: Req) -> Response:
    svc_id = req.svc_id
    only_fields(req.body, ("body",))
    return reply(requests.answer(req.store, svc_id, req.path["question_id"], req.body, now=req.now), 201)


ROUTES = [
    route("/seller/status", seller_status, "GET", access="identified"),
    route("/seller/onboarding-sessions", start_onboarding, "POST", access="session"),
    route("/seller/onboarding/{token}", onboarding_page, "GET", access="public"),
    route("/seller/onboarding/{token}", submit_onboarding, "POST", access="public"),
    route("/studio/products", create_product, "POST", access="identified"),
    route("/studio/products/{product_id}", get_product, "GET", access="identified"),
    route("/studio/products/{product_id}", update_product, "PATCH", access="identified"),
    route("/studio/products/{product_id}/curriculum", replace_curriculum, "PUT", access="identified"),
    route("/studio/products/{product_id}/submissions", submit_product, "POST", access="identified"),
    route("/studio/products/{product_id}/unpublish", unpublish, "POST", access="identified"),
    route("/studio/bundles", create_bundle, "POST", access="identified"),
    route("/studio/bundles/{bundle_id}", get_bundle, "GET", access="identified"),
    route("/studio/bundles/{bundle_id}", update_bundle, "PATCH", access="identified"),
    route("/studio/questions/{question_id}/answers", answer, "POST", access="identified"),
]
