"""Instructor routes: seller status and onboarding, studio products, submissions, bundles, answers.
Every one but the hosted onboarding page needs an instructor role (403 otherwise, before the body
is read); changes need ``Idempotency-Key``, edits ``If-Match``. Each route's contract is in
:mod:`.ops`.

Example:
    >>> "/seller/status" in [r.path for r in ROUTES]
    True
"""

from __future__ import annotations

from typing import Any

from starlette.responses import Response
from starlette.routing import Route

from svc_api.education.contract import Op
from svc_api.education.conventions import Req, check_if_match, reply, route
from svc_api.education.studio import ops, requests


def _currency(req: Req) -> str:
    return str(req.services.settings.edu_currency)


def _tagged(body: dict[str, Any], status: int = 200) -> Response:
    return reply(body, status, headers={"ETag": body["etag"]})


def seller_status(req: Req) -> dict[str, Any]:
    return requests.seller_status(req.store, req.svc_id)


def start_onboarding(req: Req) -> dict[str, Any]:
    return requests.start_onboarding(req.store, req.svc_id, now=req.now)


def onboarding_page(req: Req) -> dict[str, Any]:
    """What the hosted onboarding page asks for (a client renders it as a form)."""
    return requests.onboarding_form(req.store, req.path["token"], now=req.now)


def submit_onboarding(req: Req) -> dict[str, Any]:
    return requests.complete_onboarding(req.store, req.path["token"], req.fields, now=req.now)


def create_product(req: Req) -> Response:
    created = requests.create_product(req.store, req.svc_id, req.fields, currency=_currency(req), now=req.now)
    return _tagged(created, 201)


def get_product(req: Req) -> Response:
    return _tagged(requests.read_product(req.store, req.svc_id, req.path["product_id"]))


def update_product(req: Req) -> Response:
    body = requests.update_product(
        req.store,
        req.svc_id,
        req.path["product_id"],
        req.fields,
        lambda tag: check_if_match(req, tag),
        currency=_currency(req),
        now=req.now,
    )
    return _tagged(body)


def submit_product(req: Req) -> dict[str, Any]:
    return requests.submit_product(req.store, req.svc_id, req.path["product_id"], now=req.now)


def replace_curriculum(req: Req) -> Response:
    body = requests.replace_curriculum(
        req.store,
        req.svc_id,
        req.path["product_id"],
        req.fields,
        lambda tag: check_if_match(req, tag),
        now=req.now,
    )
    return _tagged(body)


def unpublish(req: Req) -> dict[str, Any]:
    return requests.unpublish(req.store, req.svc_id, req.path["product_id"], now=req.now)


def create_bundle(req: Req) -> Response:
    created = requests.create_bundle(req.store, req.svc_id, req.fields, currency=_currency(req), now=req.now)
    return _tagged(created, 201)


def get_bundle(req: Req) -> Response:
    return _tagged(requests.read_bundle(req.store, req.svc_id, req.path["bundle_id"]))


def update_bundle(req: Req) -> Response:
    body = requests.update_bundle(
        req.store,
        req.svc_id,
        req.path["bundle_id"],
        req.fields,
        lambda tag: check_if_match(req, tag),
        currency=_currency(req),
        now=req.now,
    )
    return _tagged(body)


def answer(req: Req) -> dict[str, Any]:
    return requests.answer(req.store, req.svc_id, req.path["question_id"], req.fields.body, now=req.now)


def _instructor(req: Req) -> None:
    requests.require_instructor(req.store, req.svc_id)


def instructor(path: str, handler: Any, method: str, op: Op, access: str = "identified") -> Route:
    """An instructor route: its ``access`` and, before the body's rules, the instructor role (so a
    learner gets 403 ``not_instructor`` whatever it sends).

    Example:
        >>> instructor("/seller/status", seller_status, "GET", ops.SELLER_STATUS).endpoint.policy.access
        'identified'
    """
    return route(path, handler, method, access=access, op=op, gate=_instructor)


ROUTES = [
    instructor("/seller/status", seller_status, "GET", ops.SELLER_STATUS),
    instructor("/seller/onboarding-sessions", start_onboarding, "POST", ops.START_ONBOARDING, "session"),
    route("/seller/onboarding/{token}", onboarding_page, "GET", access="public", op=ops.ONBOARDING_PAGE),
    route("/seller/onboarding/{token}", submit_onboarding, "POST", access="public", op=ops.SUBMIT_ONBOARDING),
    instructor("/studio/products", create_product, "POST", ops.CREATE_PRODUCT),
    instructor("/studio/products/{product_id}", get_product, "GET", ops.PRODUCT),
    instructor("/studio/products/{product_id}", update_product, "PATCH", ops.UPDATE_PRODUCT),
    instructor("/studio/products/{product_id}/curriculum", replace_curriculum, "PUT", ops.REPLACE_CURRICULUM),
    instructor("/studio/products/{product_id}/submissions", submit_product, "POST", ops.SUBMIT_PRODUCT),
    instructor("/studio/products/{product_id}/unpublish", unpublish, "POST", ops.UNPUBLISH),
    instructor("/studio/bundles", create_bundle, "POST", ops.CREATE_BUNDLE),
    instructor("/studio/bundles/{bundle_id}", get_bundle, "GET", ops.BUNDLE),
    instructor("/studio/bundles/{bundle_id}", update_bundle, "PATCH", ops.UPDATE_BUNDLE),
    instructor("/studio/questions/{question_id}/answers", answer, "POST", ops.ANSWER),
]
