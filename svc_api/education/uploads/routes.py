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
from starlette.routing import Route

from svc_api.core.errors import ApiError
from svc_api.education.contract import Op, signed
from svc_api.education.conventions import Handler, Req, page, page_params, route
from svc_api.education.uploads import completion, processing, service
from svc_api.education.uploads import operations as op
from svc_api.education.uploads.multipart import LocalMultipart, part_signature_ok


def register(req: Req) -> dict[str, Any]:
    mp = processing.multipart_of(req.services)
    return service.register(req.store, mp, req.svc_id, req.fields, now=req.now)


def listing(req: Req) -> dict[str, Any]:
    svc_id, status = req.svc_id, req.params.status
    list_name = f"uploads:{svc_id}:{status or ''}"
    after, limit = page_params(req, list_name)
    items, more = service.listing(req.store, svc_id, status, after, limit)
    return page(req, list_name, items, more, lambda item: {"t": item["created_at"], "id": item["upload_id"]})


def read(req: Req) -> dict[str, Any]:
    return service.read(req.store, req.svc_id, req.path["upload_id"])


def abort(req: Req) -> dict[str, Any]:
    mp = processing.multipart_of(req.services)
    return service.abort(req.store, mp, req.svc_id, req.path["upload_id"], now=req.now)


def part_urls(req: Req) -> dict[str, Any]:
    mp = processing.multipart_of(req.services)
    asked = req.fields.part_numbers
    return service.part_urls(req.store, mp, req.svc_id, req.path["upload_id"], asked, now=req.now)


def part_receipts(req: Req) -> dict[str, Any]:
    mp = processing.multipart_of(req.services)
    parts = req.fields.parts
    return service.receipts(req.store, mp, req.svc_id, req.path["upload_id"], parts, now=req.now)


def reconcile(req: Req) -> dict[str, Any]:
    mp = processing.multipart_of(req.services)
    return service.reconcile(req.store, mp, req.svc_id, req.path["upload_id"], now=req.now)


def complete(req: Req) -> dict[str, Any]:
    mp = processing.multipart_of(req.services)
    resends = int(req.services.settings.edu_upload_part_resends)
    manifest = req.fields.parts
    return completion.complete(
        req.store, mp, req.svc_id, req.path["upload_id"], manifest, now=req.now, resends=resends
    )


def processing_retry(req: Req) -> dict[str, Any]:
    return completion.retry(req.store, req.svc_id, req.path["upload_id"], now=req.now)


def _owner(req: Req) -> None:
    service.gate(req.store, req.svc_id, req.path.get("upload_id"))


def gated(path: str, handler: Handler, method: str, contract: Op, *, unknown_first: bool = True) -> Route:
    """A route whose body rules run after the caller's role (403) and, on an upload's path, its
    ownership (404) are checked, as the upload routes always answered (an empty body from a
    non-instructor is a 403, not a 400 naming a field); ``unknown_first``: a field the route does
    not take is a 400 before them.

    Example:
        >>> gated("/studio/uploads", register, "POST", op.REGISTER).endpoint.op.body.__name__
        'EduUploadRegistration'
    """
    return route(
        path, handler, method, access="identified", op=contract, gate=_owner, unknown_first=unknown_first
    )


async def put_part(request: Request) -> Response:
    """``PUT /studio/upload-parts/{upload_id}/{n}``: one part into the local store, behind a signed,
    expiring URL (403 tampered or expired; 404 unknown upload or not the local store; 409 upload
    not open; 413 larger than the upload's part size). Answers the part's entity tag."""
    services = request.app.state.services
    upload_id, number = request.path_params["upload_id"], int(request.path_params["part_number"])
    now = int(services.clock.now())
    expires, signature = signed(request.query_params)
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
    gated("/studio/uploads", register, "POST", op.REGISTER, unknown_first=False),
    route("/studio/uploads", listing, "GET", access="identified", op=op.LIST),
    route("/studio/uploads/{upload_id}", read, "GET", access="identified", op=op.READ),
    route("/studio/uploads/{upload_id}", abort, "DELETE", access="identified", op=op.ABORT),
    gated("/studio/uploads/{upload_id}/part-urls", part_urls, "POST", op.PART_URLS),
    gated("/studio/uploads/{upload_id}/part-receipts", part_receipts, "POST", op.RECEIPTS),
    route("/studio/uploads/{upload_id}/reconcile", reconcile, "POST", access="identified", op=op.RECONCILE),
    gated("/studio/uploads/{upload_id}/complete", complete, "POST", op.COMPLETE),
    route(
        "/studio/uploads/{upload_id}/processing-retries",
        processing_retry,
        "POST",
        access="identified",
        op=op.RETRY,
    ),
    route(
        "/studio/upload-parts/{upload_id}/{part_number:int}",
        put_part,
        "PUT",
        access="public",
        raw=True,
        op=op.PUT_PART,
    ),
]
