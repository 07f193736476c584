"""Upload routes under ``/studio/uploads`` (instructor role; changes need ``Idempotency-Key``), and
the local store's part PUT behind signed URLs (``/studio/upload-parts/...``, no key, no session:
the signature is the credential).

Example:
    >>> sorted({r.path for r in ROUTES})[:2]
    ['/studio/upload-parts/{upload_id}/{part_number:int}', '/studio/uploads']
"""

from __future__ import annotations

from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from svc_api.core.errors import ApiError, Invalid
from svc_api.education.conventions import Req, page, page_params, reply, route
from svc_api.education.fields import only_fields
from svc_api.education.uploads import completion, policy, processing, service
from svc_api.education.uploads.multipart import LocalMultipart, part_signature_ok


def register(req: Req) -> Response:
    svc_id = req.svc_id
    mp = processing.multipart_of(req.services)
    return reply(service.register(req.store, mp, svc_id, req.body, now=req.now), 201)


def listing(req: Req) -> dict[str, Any]:
    svc_id = req.svc_id
    status = req.query.get("status")
    if status is not None and status not in policy.STATUSES:
        raise Invalid(f"status must be one of {', '.join(policy.STATUSES)}, got {status!r}")
    list_name = f"uploads:{svc_id}:{status or ''}"
    after, limit = page_params(req, list_name)
    items, more = service.listing(req.store, svc_id, status, after, limit)
    return page(req, list_name, items, more, lambda item: {"t": item["created_at"], "id": item["upload_id"]})


def read(req: Req) -> dict[str, Any]:
    svc_id = req.svc_id
    return service.read(req.store, svc_id, req.path["upload_id"])


def abort(req: Req) -> dict[str, Any]:
    svc_id = req.svc_id
    only_fields(req.body, ())
    mp = processing.multipart_of(req.services)
    return service.abort(req.store, mp, svc_id, req.path["upload_id"], now=req.now)


def part_urls(req: Req) -> dict[str, Any]:
    svc_id = req.svc_id
    only_fields(req.body, ("part_numbers",))
    mp = processing.multipart_of(req.services)
    return service.part_urls(req.store, mp, svc_id, req.path["upload_id"], req.body, now=req.now)


def part_receipts(req: Req) -> dict[str, Any]:
    svc_id = req.svc_id
    only_fields(req.body, ("parts",))
    mp = processing.multipart_of(req.services)
    return service.receipts(req.store, mp, svc_id, req.path["upload_id"], req.body, now=req.now)


def reconcile(req: Req) -> dict[str, Any]:
    svc_id = req.svc_id
    only_fields(req.body, ())
    mp = processing.multipart_of(req.services)
    return service.reconcile(req.store, mp, svc_id, req.path["upload_id"], now=req.now)


def complete(req: Req) -> dict[str, Any]:
    svc_id = req.svc_id
    only_fields(req.body, ("parts",))
    mp = processing.multipart_of(req.services)
    resends = int(req.services.settings.edu_upload_part_resends)
    return completion.complete(
        req.store, mp, svc_id, req.path["upload_id"], req.body, now=req.now, resends=resends
    )


def processing_retry(req: Req) -> dict[str, Any]:
    svc_id = req.svc_id
    only_fields(req.body, ())
    return completion.retry(req.store, svc_id, req.path["upload_id"], now=req.now)


async def put_part(request: Request) -> Response:
    """``PUT /studio/upload-parts/{upload_id}/{n}``: one part into the local store, behind a signed,
    expiring URL (403 tampered or expired; 404 unknown upload or not the local store; 409 upload
    not open; 413 larger than the upload's part size). Answers the part's entity tag."""
    services = request.app.state.services
    upload_id, number = request.path_params["upload_id"], int(request.path_params["part_number"])
    now = int(services.clock.now())
    try:
        expires = int(request.query_params.get("expires", ""))
    except ValueError:
        expires = -1
    signature = request.query_params.get("signature", "")
    if not part_signature_ok(
        bytes(services.settings.secret_key), upload_id, number, expires, signature, now=now
    ):
        raise ApiError(
            403, "invalid_part_url", extra={"message": "this part URL is tampered with or expired"}
        )
    mp = processing.multipart_of(services)
    row = await run_in_threadpool(service.part_target, services.store, upload_id)
    if row is None or not isinstance(mp, LocalMultipart):
        raise ApiError(
            404, "not_found", code="not_found", extra={"message": f"no upload {upload_id} takes parts here"}
        )
    service.require_open(row, now)
    data = await request.body()
    if len(data) > int(row.part_size):
        raise ApiError(
            413,
            "payload_too_large",
            code="part_too_large",
            extra={"message": f"a part of this upload holds at most {int(row.part_size)} bytes"},
        )
    part = await run_in_threadpool(mp.write_part, row.store_upload_id, number, data)
    return JSONResponse(
        {"upload_id": upload_id, "part_number": number, "etag": part.etag, "size_bytes": part.size},
        headers={"ETag": f'"{part.etag}"'},
    )


ROUTES = [
    route("/studio/uploads", register, "POST", access="identified"),
    route("/studio/uploads", listing, "GET", access="identified"),
    route("/studio/uploads/{upload_id}", read, "GET", access="identified"),
    route("/studio/uploads/{upload_id}", abort, "DELETE", access="identified"),
    route("/studio/uploads/{upload_id}/part-urls", part_urls, "POST", access="identified"),
    route("/studio/uploads/{upload_id}/part-receipts", part_receipts, "POST", access="identified"),
    route("/studio/uploads/{upload_id}/reconcile", reconcile, "POST", access="identified"),
    route("/studio/uploads/{upload_id}/complete", complete, "POST", access="identified"),
    route("/studio/uploads/{upload_id}/processing-retries", processing_retry, "POST", access="identified"),
    route("/studio/upload-parts/{upload_id}/{part_number:int}", put_part, "PUT", access="public", raw=True),
]
