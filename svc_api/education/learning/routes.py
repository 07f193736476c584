"""Student routes of learning: dashboard, library, resume, progress, revision adoption, reading
progress, playback sessions, reviews, questions, certificates, and media downloads.

Example:
    >>> "/me/dashboard" in [r.path for r in ROUTES]
    True
"""

from __future__ import annotations

from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response

from svc_api.core.errors import ApiError
from svc_api.core.objectstore import ObjectNotFound, from_settings
from svc_api.education.contract import signed
from svc_api.education.conventions import (
    NO_STORE,
    Req,
    check_if_match,
    page,
    page_params,
    reply,
    route,
)
from svc_api.education.learning import ops as op
from svc_api.education.learning import requests, sessions


def _objects(services: Any) -> Any:
    return services.cached("edu-objects", 3600, lambda: from_settings(services.settings))


def dashboard(req: Req) -> Response:
    svc_id = req.svc_id
    return reply(requests.dashboard(req.store, svc_id), headers=NO_STORE)


def library(req: Req) -> Response:
    svc_id = req.svc_id
    list_name = f"library:{svc_id}"
    after, limit = page_params(req, list_name)
    items, more = requests.library(req.store, svc_id, after, limit)
    body = page(req, list_name, items, more, lambda item: {"t": item["granted_at"], "id": item["product_id"]})
    return reply(body, headers=NO_STORE)


def resume(req: Req) -> Response:
    svc_id = req.svc_id
    return reply(requests.resume(req.store, svc_id, req.path["product_id"], now=req.now), headers=NO_STORE)


def progress(req: Req) -> Response:
    svc_id = req.svc_id
    body = requests.progress(req.store, svc_id, req.path["product_id"], now=req.now)
    return reply(body, headers={**NO_STORE, "ETag": body["etag"]})


def adopt(req: Req) -> Response:
    svc_id = req.svc_id
    body = requests.adopt_revision(
        req.store, svc_id, req.path["product_id"], lambda current: check_if_match(req, current), now=req.now
    )
    return reply(body, headers={"ETag": body["etag"]})


def reading(req: Req) -> Response:
    svc_id, sent = req.svc_id, req.fields
    body = requests.reading_progress(
        req.store, svc_id, req.path["product_id"], sent.lesson_id, sent.version, sent.page, now=req.now
    )
    return reply(body, headers={"ETag": body["etag"]})


def start_playback(req: Req) -> dict[str, Any]:
    svc_id = req.svc_id
    objects = _objects(req.services)
    return requests.start_playback(
        req.store, objects, req.secret, svc_id, req.path["product_id"], req.fields.lesson_id, now=req.now
    )


def playback_events(req: Req) -> dict[str, Any]:
    svc_id, sent = req.svc_id, req.fields
    return requests.playback_events(
        req.store, svc_id, req.path["session_id"], sent.seq, sent.events, now=req.now
    )


def close_playback(req: Req) -> dict[str, Any]:
    svc_id = req.svc_id
    return requests.close_playback(req.store, svc_id, req.path["session_id"], now=req.now)


def put_review(req: Req) -> dict[str, Any]:
    svc_id, sent = req.svc_id, req.fields
    return requests.put_review(
        req.store, svc_id, req.path["product_id"], sent.rating, sent.comment, now=req.now
    )


def delete_review(req: Req) -> dict[str, Any]:
    svc_id = req.svc_id
    return requests.delete_review(req.store, svc_id, req.path["product_id"])


def ask(req: Req) -> dict[str, Any]:
    svc_id, sent = req.svc_id, req.fields
    return requests.ask(
        req.store, svc_id, req.path["product_id"], sent.title, sent.body, sent.lesson_id, now=req.now
    )


def update_question(req: Req) -> dict[str, Any]:
    svc_id = req.svc_id
    return requests.update_question(req.store, svc_id, req.path["question_id"], req.fields.state, now=req.now)


def issue_certificate(req: Req) -> dict[str, Any]:
    svc_id, sent = req.svc_id, req.fields
    return requests.issue_certificate(req.store, svc_id, sent.product_id, sent.holder_name, now=req.now)


def certificates(req: Req) -> Response:
    svc_id = req.svc_id
    list_name = f"certificates:{svc_id}"
    after, limit = page_params(req, list_name)
    items, more = requests.certificates(req.store, svc_id, after, limit)
    body = page(
        req, list_name, items, more, lambda item: {"t": item["issued_at"], "id": item["certificate_id"]}
    )
    return reply(body, headers=NO_STORE)


def verify_certificate(req: Req) -> dict[str, Any]:
    return requests.verify_certificate(req.store, req.path["verification_token"])


async def media(request: Request) -> Response:
    """``GET /media/{key}``: a media object behind a signed, expiring URL (403 tampered or expired)."""
    services = request.app.state.services
    key = request.path_params["key"]
    expires, signature = signed(request.query_params)
    if "\x00" in key or not sessions.media_signature_ok(
        bytes(services.settings.secret_key), key, expires, signature, now=services.clock.now()
    ):
        raise ApiError(
            403, "invalid_media_url", extra={"message": "this media URL is tampered with or expired"}
        )
    try:
        data = await run_in_threadpool(_objects(services).get, key)
    except (ObjectNotFound, ValueError):
        raise ApiError(404, "not_found", extra={"message": "no such media"}) from None
    return Response(
        data, media_type="application/octet-stream", headers={"Cache-Control": "private, max-age=300"}
    )


ROUTES = [
    route("/me/dashboard", dashboard, "GET", access="session", op=op.DASHBOARD),
    route("/me/library", library, "GET", access="session", op=op.LIBRARY),
    route("/me/enrollments/{product_id}/resume", resume, "GET", access="session", op=op.RESUME),
    route("/me/enrollments/{product_id}/progress", progress, "GET", access="session", op=op.PROGRESS),
    route("/me/enrollments/{product_id}/revision-adoptions", adopt, "POST", access="session", op=op.ADOPT),
    route("/me/enrollments/{product_id}/reading-progress", reading, "PUT", access="session", op=op.READING),
    route(
        "/products/{product_id}/playback-sessions",
        start_playback,
        "POST",
        access="session",
        op=op.START_PLAYBACK,
    ),
    route(
        "/playback-sessions/{session_id}/events",
        playback_events,
        "POST",
        access="session",
        op=op.PLAYBACK_EVENTS,
    ),
    route(
        "/playback-sessions/{session_id}", close_playback, "DELETE", access="session", op=op.CLOSE_PLAYBACK
    ),
    route("/products/{product_id}/reviews/me", put_review, "PUT", access="session", op=op.PUT_REVIEW),
    route(
        "/products/{product_id}/reviews/me", delete_review, "DELETE", access="session", op=op.DELETE_REVIEW
    ),
    route("/products/{product_id}/questions", ask, "POST", access="session", op=op.ASK),
    route("/questions/{question_id}", update_question, "PATCH", access="session", op=op.UPDATE_QUESTION),
    route("/me/certificates", issue_certificate, "POST", access="session", op=op.ISSUE_CERTIFICATE),
    route("/me/certificates", certificates, "GET", access="session", op=op.CERTIFICATES),
    route(
        "/certificates/verify/{verification_token}",
        verify_certificate,
        "GET",
        access="public",
        op=op.VERIFY_CERTIFICATE,
    ),
    route("/media/{key:path}", media, "GET", access="public", raw=True, op=op.MEDIA),
]
