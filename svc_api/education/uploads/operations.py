"""The contracts (:class:`~svc_api.education.contract.Op`) of the upload routes: the request models
are in :mod:`.contract`, the reply models in :mod:`.replies`.

Every route needs a session or an API key (401) of an account holding an instructor role:
community_leader, admin, moderator, leader or owner (403 ``not_instructor``); another instructor's
upload is unknown (404 ``not_found``). Changes need ``Idempotency-Key`` (400
``idempotency_key_required`` without it; 409 ``request_in_progress`` while the same key runs, or
the key reused for another request). The part PUT behind a signed URL needs none of them.

Example:
    >>> REGISTER.status, PUT_PART.security
    (201, ({},))
"""

from __future__ import annotations

from svc_api.education.contract import Answer, NoBody, NoQuery, Op, SignedQuery
from svc_api.education.uploads import contract as c
from svc_api.education.uploads import replies

_UPLOAD = {"upload_id": {"schema": {"type": "string"}}}
_BAD_BODY = Answer(400, "A body field (this operation takes none) or no `Idempotency-Key`.")
_UNAUTHORIZED = Answer(401, shared="EduUnauthorized")
_NOT_INSTRUCTOR = Answer(403, "`code: not_instructor`: the account holds no instructor role.")
_UNKNOWN = Answer(404, "`code: not_found`: no such upload among the caller's.")
_IN_PROGRESS = Answer(
    409, "`code: request_in_progress`: the same `Idempotency-Key` is running or was used for another request."
)
_NOT_OPEN = Answer(
    409,
    "`code: upload_finished` (assembling, processing, processed or failed), `upload_aborted`,"
    " `lease_expired` (the worker is aborting it), or `request_in_progress` (`Idempotency-Key`).",
)
_WHO = (_UNAUTHORIZED, _NOT_INSTRUCTOR)
_DONE = "The upload."

REGISTER = Op(
    "eduRegisterUpload",
    "Register a multipart upload; returns its part policy and lease.",
    replies.EduUpload,
    description="Parts are 5 MiB to 64 MiB (the service picks the smallest whole number of MiB that"
    " needs at most 10,000 parts; `part_size_bytes` asks for another size within the bounds); every"
    " part but the last holds exactly the part size. A video is at most 20 GiB, a PDF 512 MiB. The"
    " lease runs 24 hours and is renewed by part URLs, receipts and reconcile; an upload whose lease"
    " ran out is aborted by the worker and its parts are removed from the store.",
    body=c.EduUploadRegistration,
    status=201,
    done="The new upload (`status: uploading`).",
    errors=(
        Answer(
            400,
            "A field breaks a rule (`code: invalid_request`, the message names it: unknown field, kind,"
            " filename, content type, size, sha256, part size, more than 10,000 parts), or no"
            " `Idempotency-Key`.",
        ),
        *_WHO,
        Answer(
            409,
            "`code: too_many_uploads`: 20 uploads of this instructor are `uploading` already; or the"
            " `Idempotency-Key` is in use.",
        ),
    ),
)
LIST = Op(
    "eduListUploads",
    "Own uploads, newest first, cursor paginated, with a status filter.",
    replies.EduUploadPage,
    query=c.EduUploadsQuery,
    done="A page of uploads.",
    errors=(
        Answer(
            400,
            "`code: invalid_cursor` (tampered, or from another list or filter) or an unknown `status` or"
            " `limit`; `invalid_request`: an unknown or repeated parameter.",
        ),
        *_WHO,
    ),
)
_NONE_TAKEN = Answer(400, "`invalid_request`: a query parameter (this route takes none).")
READ = Op(
    "eduGetUpload",
    "The authoritative snapshot of an upload.",
    replies.EduUpload,
    query=NoQuery,
    path=_UPLOAD,
    done=_DONE,
    errors=(_NONE_TAKEN, *_WHO, _UNKNOWN),
)
ABORT = Op(
    "eduAbortUpload",
    "Abort (idempotent), store side included.",
    replies.EduUpload,
    description="The upload ends `aborted`; its parts leave the store (S3 `abort_multipart_upload`, the"
    " local part directory removed) and so does its assembled file, unless it was processed (a"
    " published lesson may play it). Aborting again answers the same snapshot.",
    body=NoBody,
    path=_UPLOAD,
    done=_DONE,
    errors=(_BAD_BODY, *_WHO, _UNKNOWN, _IN_PROGRESS),
)
PART_URLS = Op(
    "eduUploadPartUrls",
    "URLs for missing parts only, at most 16 per call.",
    replies.EduUploadPartUrls,
    description="`part_numbers` asks for those parts (received ones are left out); without it, the"
    " first 16 missing parts. On S3 each URL is a presigned `upload_part` of the upload's S3 multipart"
    " upload; on the local store it is the service's own `PUT"
    " /education/v1/studio/upload-parts/...`, HMAC-signed with an expiry. The URL answers the part's"
    " `ETag` (MD5 of its bytes), which receipts and the complete manifest name. Renews the lease.",
    body=c.EduPartUrlsRequest,
    path=_UPLOAD,
    done="The URLs.",
    errors=(
        Answer(
            400,
            "`code: invalid_request`: more than 16 part numbers, a number outside 1..part_count, one"
            " named twice, an unknown field; or no `Idempotency-Key`.",
        ),
        *_WHO,
        _UNKNOWN,
        _NOT_OPEN,
    ),
)
RECEIPTS = Op(
    "eduUploadPartReceipts",
    "Report finished parts (idempotent); answers the updated snapshot.",
    replies.EduUpload,
    description="Each receipt names a part and the entity tag its PUT answered; the service checks it"
    " against the store's part listing before recording. Repeated or racing receipts leave one part"
    " set; after complete, receipts that agree with the recorded parts answer the snapshot. Renews"
    " the lease. A receipt may report `sha256`, the SHA-256 of the bytes the part should hold: when"
    " the assembled file's SHA-256 is not the registered one, complete then names the parts whose"
    " bytes disagree (422 `parts_corrupt`) and keeps the others, instead of failing the upload.",
    body=c.EduPartReceipts,
    path=_UPLOAD,
    done=_DONE,
    errors=(
        Answer(
            400,
            "`code: invalid_request`: `parts` missing or malformed (a `sha256` that is not 64 hex digits"
            " included), a part outside the upload or named twice; or no `Idempotency-Key`.",
        ),
        *_WHO,
        _UNKNOWN,
        Answer(
            409,
            "`code: checksum_mismatch` (the store holds the part with another entity tag),"
            " `part_not_in_store` (nothing stored under that part number), `upload_finished`,"
            " `upload_aborted`, `lease_expired`, or `request_in_progress` (`Idempotency-Key`).",
        ),
    ),
)
RECONCILE = Op(
    "eduReconcileUpload",
    "Rebuild the part set from the store's part listing (after client loss).",
    replies.EduUpload,
    description="S3 `list_parts`, or the local part directory; parts the store does not hold are"
    " forgotten (except when the store lists none beside an assembled file: a complete stopped by"
    " store trouble after joining, which the next complete checks). Renews the lease.",
    body=NoBody,
    path=_UPLOAD,
    done=_DONE,
    errors=(_BAD_BODY, *_WHO, _UNKNOWN, _NOT_OPEN),
)
COMPLETE = Op(
    "eduCompleteUpload",
    "Check every part, the manifest and the whole checksum, assemble, start processing.",
    replies.EduUpload,
    description="Before anything changes: every part recorded, the store holding each with the"
    " recorded tag and the size the policy gives it, and the optional manifest `parts` naming the same"
    " tags. Then one complete takes the `assembling` claim (a second at once gets 409"
    " `complete_in_progress`; once done, a complete answers the snapshot), joins the parts (S3"
    " `complete_multipart_upload`, local concatenation) and hashes the file. Answers the upload in"
    " `processing`.",
    body=c.EduUploadManifest,
    path=_UPLOAD,
    done=_DONE,
    errors=(
        Answer(
            400,
            "`code: invalid_request`: a malformed `parts` manifest or an unknown field; or no"
            " `Idempotency-Key`.",
        ),
        *_WHO,
        _UNKNOWN,
        Answer(
            409,
            "`code: upload_aborted`, `upload_finished` (the upload failed: its parts are final),"
            " `complete_in_progress` (another complete holds the claim), `lease_expired`, or"
            " `request_in_progress` (`Idempotency-Key`).",
        ),
        Answer(
            422,
            "`code: parts_missing` (with `missing_parts` runs), `store_disagrees` (the store holds"
            " another part than the recorded one: reconcile), `part_size_mismatch`, `manifest_mismatch`"
            " (the sent manifest names other parts or tags), `parts_corrupt` (the assembled file's"
            " SHA-256 is not the registered one and the parts listed in `parts` hold other bytes than"
            " the `sha256` of their receipts: they are dropped, the others kept, the upload is"
            " `uploading` again with its lease renewed; send those parts again (`part-urls` gives"
            " exactly them) and complete; `part_failures` counts such completes, `resends_left` how"
            " many more may answer so), or `checksum_mismatch` (the assembled file's SHA-256, given as"
            " `sha256`, is not the registered one and no part can be named: no receipt reported a"
            " part SHA-256, or every reported one matches (the registered SHA-256 is wrong); or"
            " `resends_left` was 0, the still corrupt parts in `parts`: the upload fails, not"
            " retryable, and its parts and file are removed). The upload stays `uploading` otherwise.",
        ),
        Answer(
            503,
            "The database or the object store failed (`reason: store_unavailable`); the upload stays"
            " `uploading`: retry.",
        ),
    ),
)
RETRY = Op(
    "eduRetryUploadProcessing",
    "Process again after a retryable failure.",
    replies.EduUpload,
    body=NoBody,
    path=_UPLOAD,
    done=_DONE,
    errors=(
        _BAD_BODY,
        *_WHO,
        _UNKNOWN,
        Answer(
            409,
            "`code: not_failed`: the upload is not `failed`; or `request_in_progress` (`Idempotency-Key`).",
        ),
        Answer(
            422,
            "`code: not_retryable`: it failed with `checksum_mismatch`, `corrupt_media` or"
            " `unsupported_media`: register again.",
        ),
    ),
)
PART_BYTES = {
    "required": True,
    "content": {"application/octet-stream": {"schema": {"type": "string", "format": "binary"}}},
}
"""The request body of the part PUT: the part's raw bytes."""
PUT_PART = Op(
    "eduPutUploadPart",
    "One part into the local object store, behind a signed URL from part-urls.",
    replies.EduUploadPart,
    description="Served only with the local object store (with S3 the URLs point at S3). The signature"
    " is the credential: no session and no `Idempotency-Key`. A part sent again replaces the earlier"
    " one. Body: the part's raw bytes (`application/octet-stream`), at most the upload's part size.",
    query=SignedQuery,
    path={**_UPLOAD, "part_number": {"schema": {"type": "integer", "minimum": 1}}},
    request=PART_BYTES,
    done="Stored; the `ETag` header (quoted MD5) is what the receipt names.",
    headers=("EduPartETag",),
    errors=(
        Answer(403, "`code: invalid_part_url`: the URL is tampered with or expired."),
        Answer(404, "`code: not_found`: no such upload, or the service's store is S3."),
        Answer(409, "`code: upload_finished`, `upload_aborted` or `lease_expired`."),
        Answer(413, "`code: part_too_large`: more bytes than the upload's part size."),
        Answer(
            507,
            "`code: insufficient_storage` with `retry_after` (30) and `Retry-After`: the service's disk"
            " is full. Nothing of the part is kept (a part is written whole or not at all); send the"
            " same part again later.",
        ),
    ),
    security=({},),
)
