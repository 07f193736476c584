"""The contracts (:class:`~svc_api.education.contract.Op`) of learning's routes: operation ids,
summaries, descriptions and every documented answer, as clients read them in the API description.

Example:
    >>> PROGRESS.headers, ISSUE_CERTIFICATE.status
    (('ETag',), 201)
"""

from __future__ import annotations

from svc_api.education.contract import Answer, NoBody, Op, SignedQuery, if_match
from svc_api.education.learning import contract, replies

_EDU_ID = {"$ref": "#/components/schemas/EduId"}
_PRODUCT = {"product_id": "EduProductId"}
_SESSION = {"session_id": "EduSessionId"}
_NO_STORE = " (`Cache-Control: private, no-store`)."
_NONE_TAKEN = "`invalid_request`: a query parameter (this route takes none)"
_KEYS = "`idempotency_key_required`, `invalid_idempotency_key`, `invalid_json`"
_REPLAY = "`idempotency_key_reused`, `request_in_progress`"

_READ = Answer(400, f"{_NONE_TAKEN}, or a NUL character in the path (refused on every store).")
_PAGE = Answer(
    400, "`invalid_request`: an unknown or repeated parameter; `invalid_cursor`, `invalid_page_size`."
)
_KEYED = Answer(400, f"{_KEYS}; {_NONE_TAKEN}.")
_SIGNED_IN = Answer(401, shared="EduUnauthorized")
_ENTITLED = Answer(403, "`no_entitlement`: the student holds no active entitlement to the product.")
_NO_PRODUCT = Answer(404, "`not_found`: no published or unpublished product has this id.")
_REPLAYED = Answer(409, f"{_REPLAY}.")


def _bad_body(fields: str) -> Answer:
    return Answer(400, f"{_KEYS}; `invalid_request`: a query parameter, an unknown field, {fields}.")


DASHBOARD = Op(
    "edu_dashboard",
    "The student's learning summary (counts by status, certificates, last activity).",
    replies.EduDashboard,
    done="The summary" + _NO_STORE,
    errors=(_READ, _SIGNED_IN),
)
LIBRARY = Op(
    "edu_library",
    "The student's products (entitlements deduplicated), each with its status, in order of first grant.",
    replies.EduLibraryPage,
    query=contract.StudentPageQuery,
    done="A page of the library" + _NO_STORE,
    errors=(_PAGE, _SIGNED_IN),
)
RESUME = Op(
    "edu_resume",
    "Where to continue - the last lesson touched (the first when none) and its server checkpoint.",
    replies.EduResume,
    description="The first read of an entitled product enrolls the student on its newest revision.",
    path=_PRODUCT,
    done="The resume target" + _NO_STORE,
    errors=(_READ, _SIGNED_IN, _ENTITLED, _NO_PRODUCT),
)
PROGRESS = Op(
    "edu_progress",
    "Detailed, server-measured progress of the enrollment, with its `ETag`.",
    replies.EduProgress,
    path=_PRODUCT,
    done="The progress (`Cache-Control: private, no-store`; `ETag` of the enrollment, for `If-Match`).",
    headers=("ETag",),
    errors=(_READ, _SIGNED_IN, _ENTITLED, _NO_PRODUCT),
)
ADOPT = Op(
    "edu_revision_adopt",
    "Move the enrollment to the product's newest curriculum revision; progress of lessons that remain"
    " carries over.",
    replies.EduProgress,
    body=NoBody,
    path=_PRODUCT,
    parameters=(if_match("The enrollment's `ETag` (from `progress`), or `*`."),),
    done="The progress on the new revision, with the new `ETag` of the enrollment.",
    headers=("ETag",),
    errors=(
        Answer(
            400, f"{_KEYS}; `invalid_request`: a query parameter or a body field (this operation takes none)."
        ),
        _SIGNED_IN,
        _ENTITLED,
        _NO_PRODUCT,
        Answer(409, f"`nothing_newer`: the enrollment is on the newest revision; {_REPLAY}."),
        Answer(
            412,
            "`precondition_failed`: `If-Match` names another version of the enrollment (read `progress`"
            " again).",
        ),
        Answer(428, "`precondition_required`: `If-Match` is missing."),
    ),
)
READING = Op(
    "edu_reading_progress",
    "A versioned reading checkpoint of a PDF or article lesson.",
    replies.EduProgress,
    description="A higher `version` than the last moves the checkpoint (`applied: true`); the furthest"
    " page only grows, and at most one page per 10 s since it last grew (the first checkpoint: page 1),"
    " so a far page sent early is credited as time passes; a stale version changes nothing (`applied:"
    " false`). The lesson is complete once the furthest page is its last.",
    body=contract.EduReadingRequest,
    path=_PRODUCT,
    done="The enrollment's progress, with `applied` and the enrollment's `ETag`.",
    headers=("ETag",),
    errors=(
        _bad_body(
            "a `lesson_id` that is not a pdf or article lesson of the enrollment's revision, a `version`"
            " that is not an integer in range, a `page` that is not an integer from 1 to the document's"
            " page count"
        ),
        _SIGNED_IN,
        _ENTITLED,
        _NO_PRODUCT,
        _REPLAYED,
    ),
)
START_PLAYBACK = Op(
    "edu_playback_start",
    "Start a playback session of a video lesson, with signed, expiring media credentials.",
    replies.EduPlaybackSession,
    description="Needs an entitlement, except for a preview lesson (then `tracked: false`: no progress)."
    " A session lasts 4 hours; at most 3 may be open at once.",
    body=contract.EduPlaybackRequest,
    path=_PRODUCT,
    status=201,
    done="The session and its credentials.",
    errors=(
        _bad_body(
            "`lesson_id` missing or not a video lesson of the product (of the student's revision when"
            " enrolled)"
        ),
        _SIGNED_IN,
        Answer(403, "`no_entitlement`: the lesson is not a preview and the student holds no entitlement."),
        _NO_PRODUCT,
        Answer(409, f"`too_many_sessions`: 3 sessions are open (close one); {_REPLAY}."),
    ),
)
PLAYBACK_EVENTS = Op(
    "edu_playback_events",
    "One numbered batch of playback events; watched time is measured by the server.",
    replies.EduPlaybackCredited,
    description="`heartbeat` and `pause` report the play head (the stretch since the previous head"
    " counts), `seek` moves it (counts nothing), `rate` changes the speed. A batch credits at most the"
    " wall-clock seconds since the previous batch times the highest rate in effect; overlaps count"
    " once; a lesson is complete at 90% watched. Client percentages are never read.",
    body=contract.EduPlaybackBatch,
    path=_SESSION,
    done="What the batch credited, and the lesson's progress.",
    errors=(
        _bad_body(
            "`seq` not an integer of at least 1, `events` not a list of 1-200 events of a known type"
            " with a finite `position` of at least 0 (or a `rate` of 0.25-2.0), or an event with any"
            " other field (`percent`)"
        ),
        _SIGNED_IN,
        Answer(
            403,
            "`not_owner`: no playback session of the caller has this id; `no_entitlement`: the"
            " entitlement of a tracked session's product ended (refunded) since the session started.",
        ),
        Answer(
            409,
            "`duplicate`: this batch number was already applied; `out_of_order`: a batch number was"
            " skipped; `session_closed`: the session is closed or expired; `idempotency_key_reused`,"
            " `request_in_progress`.",
        ),
    ),
)
CLOSE_PLAYBACK = Op(
    "edu_playback_close",
    "Close a playback session (again - the same answer); the last checkpoint stays.",
    replies.EduPlaybackClosed,
    path=_SESSION,
    done="The closed session.",
    errors=(
        _KEYED,
        _SIGNED_IN,
        Answer(403, "`not_owner`: no playback session of the caller has this id."),
        _REPLAYED,
    ),
)
PUT_REVIEW = Op(
    "edu_review_put",
    "Create or replace the student's review of an entitled product; the product's rating follows.",
    replies.EduReview,
    body=contract.EduReviewRequest,
    path=_PRODUCT,
    done="The review.",
    errors=(
        _bad_body("`rating` not an integer 1-5, `comment` not a string of at most 2,000 characters"),
        _SIGNED_IN,
        _ENTITLED,
        _NO_PRODUCT,
        _REPLAYED,
    ),
)
DELETE_REVIEW = Op(
    "edu_review_delete",
    "Delete the student's review; the product's rating follows.",
    replies.EduReviewDeleted,
    path=_PRODUCT,
    done="The deletion receipt.",
    errors=(
        _KEYED,
        _SIGNED_IN,
        _ENTITLED,
        Answer(
            404,
            "`not_found`: no published or unpublished product has this id, or the student has no review"
            " of it.",
        ),
        _REPLAYED,
    ),
)
ASK = Op(
    "edu_question_ask",
    "Ask a question on an entitled product (optionally about one lesson).",
    replies.EduQuestion,
    body=contract.EduQuestionRequest,
    path=_PRODUCT,
    status=201,
    done="The question, `open`.",
    errors=(
        _bad_body(
            "`title` not 3-160 or `body` not 1-4,000 characters once trimmed, a `lesson_id` that is not a"
            " lesson of the student's revision"
        ),
        _SIGNED_IN,
        _ENTITLED,
        _NO_PRODUCT,
        _REPLAYED,
    ),
)
UPDATE_QUESTION = Op(
    "edu_question_update",
    "Resolve one's own question, or reopen a resolved one.",
    replies.EduQuestion,
    body=contract.EduQuestionPatch,
    path={"question_id": {"schema": _EDU_ID}},
    done="The question.",
    errors=(
        _bad_body("`state` not `open` or `resolved`"),
        _SIGNED_IN,
        Answer(403, "`not_owner`: the question is someone else's."),
        Answer(404, "`not_found`: no question has this id."),
        Answer(
            409,
            "`invalid_transition`: the question's state does not allow the move (open -> open, resolved"
            f" -> resolved, answered -> open); {_REPLAY}.",
        ),
    ),
)
ISSUE_CERTIFICATE = Op(
    "edu_certificate_issue",
    "Issue the certificate of a product the server measured as completed.",
    replies.EduCertificate,
    body=contract.EduCertificateRequest,
    status=201,
    done="The certificate with its public verification token.",
    errors=(
        _bad_body(
            "`product_id` missing or over 24 characters, `holder_name` not 2-80 characters once trimmed"
        ),
        _SIGNED_IN,
        Answer(
            403,
            "`not_completed`: the student holds no entitlement to the product or has not completed every"
            " lesson.",
        ),
        Answer(409, f"`already_issued`: the student's certificate for this product exists; {_REPLAY}."),
    ),
)
CERTIFICATES = Op(
    "edu_certificates",
    "The student's certificates, newest first.",
    replies.EduCertificatePage,
    query=contract.StudentPageQuery,
    done="A page of certificates" + _NO_STORE,
    errors=(_PAGE, _SIGNED_IN),
)
VERIFY_CERTIFICATE = Op(
    "edu_certificate_verify",
    "Whether a certificate is valid, with its course, holder and issue date (no authentication).",
    replies.EduCertificateCheck,
    path={"verification_token": {"schema": _EDU_ID}},
    done="A valid certificate's public facts.",
    errors=(
        _READ,
        Answer(401, shared="EduTokenRejected"),
        Answer(404, "`not_found`: no certificate has this verification token."),
    ),
    security=({},),
)
MEDIA = Op(
    "edu_media",
    "A lesson's media behind a signed, expiring URL (the `media_url` of a playback session).",
    None,
    description="The key may hold `/`. Served from the local object store; on S3 the URL is the store's own.",
    query=SignedQuery,
    path={"key": {"schema": {"type": "string", "minLength": 1}}},
    done="The media bytes (`Cache-Control: private, max-age=300`).",
    content={
        "application/octet-stream": {
            "schema": {"type": "string", "contentMediaType": "application/octet-stream"}
        }
    },
    errors=(
        Answer(401, shared="EduTokenRejected"),
        Answer(403, "`invalid_media_url`: the signature does not match, or the URL expired."),
        Answer(404, "`not_found`: the object store holds no media under this key."),
    ),
    security=({},),
)
