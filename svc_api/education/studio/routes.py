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
from svc_api.education.learning import service as learning
from svc_api.education.studio import bundles, products, sellers
from svc_api.education.uploads import service as uploads


def _media(conn: Any, leader_id: str) -> products.Media:
    """The leader's processed uploads, as the curriculum and submission rules look them up."""
    return lambda upload_id: uploads.processed_media(conn, leader_id, upload_id)


def _currency(req: Req) -> str:
    return str(req.services.settings.edu_currency)


def _tagged(body: dict[str, Any], status: int = 200) -> Response:
    return reply(body, status, headers={"ETag": body["etag"]})


def seller_status(req: Req) -> dict[str, Any]:
    svc_id = req.svc_id
    with req.store.read() as conn:
        return sellers.status(conn, svc_id)


def start_onboarding(req: Req) -> Response:
    svc_id = req.svc_id
    only_fields(req.body, ())
    with req.store.write() as conn:
        return reply(sellers.start_onboarding(conn, svc_id, now=req.now), 201)


def onboarding_page(req: Req) -> dict[str, Any]:
    """What the hosted onboarding page asks for (a client renders it as a form)."""
    with req.store.read() as conn:
        return sellers.onboarding_form(conn, req.path["token"], now=req.now)


def submit_onboarding(req: Req) -> dict[str, Any]:
    only_fields(req.body, ("accept_contract", "payout_profile"))
    with req.store.write() as conn:
        return sellers.complete_onboarding(conn, req.path["token"], req.body, now=req.now)


def create_product(req: Req) -> Response:
    svc_id = req.svc_id
    with req.store.write() as conn:
        return _tagged(products.create(conn, svc_id, req.body, currency=_currency(req), now=req.now), 201)


def get_product(req: Req) -> Response:
    svc_id = req.svc_id
    with req.store.read() as conn:
        return _tagged(products.read(conn, svc_id, req.path["product_id"]))


def update_product(req: Req) -> Response:
    svc_id = req.svc_id
    with req.store.write() as conn:
        body = products.update(
            conn,
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
    with req.store.write() as conn:
        media = _media(conn, svc_id)
        return reply(products.submit(conn, svc_id, req.path["product_id"], media, now=req.now), 201)


def replace_curriculum(req: Req) -> Response:
    svc_id = req.svc_id
    only_fields(req.body, ("sections",))
    with req.store.write() as conn:
        media = _media(conn, svc_id)
        body = products.replace_curriculum(
            conn,
            svc_id,
            req.path["product_id"],
            req.body,
            lambda tag: check_if_match(req, tag),
            media,
            now=req.now,
        )
    return _tagged(body)


def unpublish(req: Req) -> dict[str, Any]:
    svc_id = req.svc_id
    only_fields(req.body, ())
    with req.store.write() as conn:
        return products.unpublish(conn, svc_id, req.path["product_id"], now=req.now)


def create_bundle(req: Req) -> Response:
    svc_id = req.svc_id
    with req.store.write() as conn:
        return _tagged(bundles.create(conn, svc_id, req.body, currency=_currency(req), now=req.now), 201)


def get_bundle(req: Req) -> Response:
    svc_id = req.svc_id
    with req.store.read() as conn:
        return _tagged(bundles.read(conn, svc_id, req.path["bundle_id"]))


def update_bundle(req: Req) -> Response:
    svc_id = req.svc_id
    with req.store.write() as conn:
        body = bundles.update(
            conn,
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
    with req.store.write() as conn:
        sellers.require_instructor(conn, svc_id)
        return reply(learning.answer(conn, svc_id, req.path["question_id"], req.body, now=req.now), 201)


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
