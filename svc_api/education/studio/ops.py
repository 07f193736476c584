"""The contracts (:class:`~svc_api.education.contract.Op`) of the studio's routes: what each takes,
replies and answers, as the API description shows it. The request models are in
:mod:`~svc_api.education.studio.contract`, the replies in :mod:`~svc_api.education.studio.replies`.

Example:
    >>> SELLER_STATUS.operation_id, CREATE_PRODUCT.status
    ('edu_seller_status', 201)
"""

from __future__ import annotations

from svc_api.education.contract import Answer, NoBody, Op, if_match
from svc_api.education.studio import contract as body
from svc_api.education.studio import replies

_QUERY = "a query parameter (this route takes none)"
_KEYED = "`idempotency_key_required`, `invalid_idempotency_key`, `invalid_json`; `invalid_request`: "
_SESSION = Answer(401, shared="EduUnauthorized")
_PAGE_TOKEN = Answer(401, shared="EduTokenRejected")
_NOT_INSTRUCTOR = Answer(403, "`not_instructor`: the caller holds no instructor role.")
_NOT_OWNER = Answer(
    403,
    "`not_instructor`: no instructor role; `not_owner`: another instructor's product, an unknown id, or a"
    " product not made in the studio.",
)
_NOT_BUNDLE_OWNER = Answer(
    403, "`not_instructor`: no instructor role; `not_owner`: another instructor's bundle or an unknown id."
)
_READ = Answer(400, f"`invalid_request`: {_QUERY}; a NUL character in the path.")
_NO_FIELDS = Answer(400, f"{_KEYED}a body field (this operation takes none), {_QUERY}.")
_RACE = "`idempotency_key_reused`, `request_in_progress`."
_STALE = "`precondition_failed`: `If-Match` names another version (re-read the {})."
_MISSING = Answer(428, "`precondition_required`: `If-Match` is missing.")
_IF_MATCH = " Send `If-Match` with the {} `ETag` (or `*`)."
_TOKEN = {"token": {"schema": {"$ref": "#/components/schemas/EduId"}}}
_PRODUCT = {"product_id": "EduProductId"}
_BUNDLE = {"bundle_id": {"schema": {"$ref": "#/components/schemas/EduId"}}}
_PAGE = ({},)
"""The hosted onboarding page: its token is the credential."""

SELLER_STATUS = Op(
    "edu_seller_status",
    "Seller readiness: the five gates (contract, tax, e-document, AP bank, identity).",
    replies.EduSellerStatus,
    done="`{role, gates: {<gate>: {state: passed|missing|not_required, lacks}}, ready_to_submit,"
    " ready_for_payouts, country}`.",
    errors=(_READ, _SESSION, _NOT_INSTRUCTOR),
)
START_ONBOARDING = Op(
    "edu_onboarding_start",
    "Open a hosted onboarding session (24 hours) for the contract and the payout profile.",
    replies.EduOnboardingSession,
    body=NoBody,
    status=201,
    done="The open session: `{session_id, state, onboarding_url, expires_at, contract_version,"
    " profile_fields}`.",
    errors=(
        _NO_FIELDS,
        _SESSION,
        _NOT_INSTRUCTOR,
        Answer(
            409,
            f"`onboarding_open`: a session is still open; `onboarding_complete`: every gate passes; {_RACE}",
        ),
    ),
)
_NO_SESSION = Answer(404, "`not_found`: no onboarding session has this token.")
_CLOSED = Answer(409, "`session_closed`: the session is finished or expired.")
ONBOARDING_PAGE = Op(
    "edu_onboarding_page",
    "What the hosted onboarding page asks for (the token is the credential; no session).",
    replies.EduOnboardingForm,
    path=_TOKEN,
    done="The onboarding form.",
    errors=(_READ, _PAGE_TOKEN, _NO_SESSION, _CLOSED),
    security=_PAGE,
)
SUBMIT_ONBOARDING = Op(
    "edu_onboarding_submit",
    "Accept the contract and give the payout profile (no `Idempotency-Key`: the provider-like hosted page).",
    replies.EduOnboardingDone,
    description="`{accept_contract: true, payout_profile: {country, legal_entity, tax_id, bank_account,"
    " swift_bic?, payout_currency?, e_document_type?}}`; the rules of each field are in"
    " docs/education-api.md.",
    body=body.EduOnboardingSubmit,
    path=_TOKEN,
    done="The completed onboarding.",
    errors=(
        Answer(
            400,
            "`invalid_json`; `invalid_request`: an unknown field, the contract not accepted, the first"
            f" broken payout-profile rule, {_QUERY}.",
        ),
        _PAGE_TOKEN,
        _NO_SESSION,
        _CLOSED,
    ),
    security=_PAGE,
)
_DRAFT = 'The draft, with `etag` (`"product-N"`, also the `ETag` header).'
CREATE_PRODUCT = Op(
    "edu_studio_product_create",
    "Create a course or publication draft (with its `ETag`).",
    replies.EduStudioProduct,
    description="`{kind, title (3-160), subtitle?, description?, language, level, price, topics?,"
    " refundable?}`.",
    body=body.EduStudioProductCreate,
    status=201,
    done=_DRAFT,
    headers=("ETag",),
    errors=(
        Answer(
            400,
            f"{_KEYED}a broken field (a price in another currency than the catalog's included), an unknown"
            f" topic, {_QUERY}.",
        ),
        _SESSION,
        _NOT_INSTRUCTOR,
        Answer(409, f"`duplicate_title`: the instructor has a product of this title; {_RACE}"),
    ),
)
PRODUCT = Op(
    "edu_studio_product",
    "Re-read a draft and its `ETag`.",
    replies.EduStudioProduct,
    path=_PRODUCT,
    done="The draft, with `etag`.",
    headers=("ETag",),
    errors=(_READ, _SESSION, _NOT_OWNER),
)
UPDATE_PRODUCT = Op(
    "edu_studio_product_update",
    "Update a draft's metadata (`If-Match`).",
    replies.EduStudioProduct,
    description=_IF_MATCH.format("draft's").strip(),
    body=body.EduStudioProductPatch,
    path=_PRODUCT,
    parameters=(if_match("The draft's `ETag`, or `*`."),),
    done="The draft, with its new `etag`.",
    headers=("ETag",),
    errors=(
        Answer(
            400,
            f"{_KEYED}an unknown or broken field (the first one named), no field at all, an unknown topic,"
            f" a price in another currency than the catalog's, {_QUERY}.",
        ),
        _SESSION,
        _NOT_OWNER,
        Answer(409, f"`under_review`: a submission waits for review; `duplicate_title`; {_RACE}"),
        Answer(412, _STALE.format("draft")),
        _MISSING,
    ),
)
REPLACE_CURRICULUM = Op(
    "edu_studio_curriculum_replace",
    "Replace the draft's whole lesson tree (`If-Match`).",
    replies.EduStudioProduct,
    description="`{sections: [{section_id, title, lessons: [{lesson_id, title, kind: video|pdf|article,"
    " preview,\nupload_id (video and pdf: a processed upload of the same instructor), pages"
    " (article)}]}]}`;\n"
    "a video lesson takes its duration, a pdf its page count, from the processed upload."
    + _IF_MATCH.format("draft's"),
    body=body.EduStudioCurriculumRequest,
    path=_PRODUCT,
    parameters=(if_match("The draft's `ETag`, or `*`."),),
    done="The draft with its new tree and its new `etag`.",
    headers=("ETag",),
    errors=(
        Answer(
            400,
            f"{_KEYED}an unknown field, a rule of the tree is broken (shape, kinds, unique lesson ids,"
            " bounds), or a lesson's `upload_id` is not a processed upload of the caller of its kind;"
            f" {_QUERY}.",
        ),
        _SESSION,
        _NOT_OWNER,
        Answer(409, f"`under_review`: a submission waits for review; {_RACE}"),
        Answer(412, _STALE.format("draft")),
        _MISSING,
    ),
)
SUBMIT_PRODUCT = Op(
    "edu_studio_submission_create",
    "Freeze the draft as an immutable snapshot for review.",
    replies.EduStudioSubmission,
    description="The operator decides with `svc admin edu review SUBMISSION approve|reject`; approval"
    " publishes the snapshot as the product's next revision.",
    body=NoBody,
    path=_PRODUCT,
    status=201,
    done="The submission receipt.",
    errors=(
        _NO_FIELDS,
        _SESSION,
        _NOT_OWNER,
        Answer(409, f"`already_pending`: a submission of the product waits for review; {_RACE}"),
        Answer(
            422,
            "`not_ready`: no curriculum yet, or a lesson's media is no longer processed;"
            " `seller_not_ready`: the `contract` or `identity` gate is missing.",
        ),
    ),
)
UNPUBLISH = Op(
    "edu_studio_product_unpublish",
    "Close new sales of a product; entitlements and progress stay.",
    replies.EduStudioUnpublished,
    body=NoBody,
    path=_PRODUCT,
    done="The unpublished product.",
    errors=(
        _NO_FIELDS,
        _SESSION,
        Answer(403, "`not_instructor`: no instructor role; `not_owner`: another instructor's product."),
        Answer(404, "`not_found`: no product has this id."),
        Answer(409, f"`not_published`: the product is not on sale; {_RACE}"),
    ),
)
_BUNDLE_CONFLICT = Answer(
    409,
    "`not_own_product`: a product is unknown or someone else's; `not_published`: a product is not on"
    f" sale; {_RACE}",
)
CREATE_BUNDLE = Op(
    "edu_studio_bundle_create",
    "Create a bundle of the instructor's own published products: `{title, price, product_ids (2-20)}`.",
    replies.EduBundle,
    body=body.EduBundleCreate,
    status=201,
    done='The bundle, with `etag` (`"bundle-N"`, also the `ETag` header).',
    headers=("ETag",),
    errors=(
        Answer(
            400,
            f"{_KEYED}an unknown or broken field (the first one named), a price in another currency than"
            f" the catalog's, {_QUERY}.",
        ),
        _SESSION,
        _NOT_INSTRUCTOR,
        _BUNDLE_CONFLICT,
    ),
)
BUNDLE = Op(
    "edu_studio_bundle",
    "Re-read a bundle and its `ETag`.",
    replies.EduBundle,
    path=_BUNDLE,
    done="The bundle, with `etag`.",
    headers=("ETag",),
    errors=(_READ, _SESSION, _NOT_BUNDLE_OWNER),
)
UPDATE_BUNDLE = Op(
    "edu_studio_bundle_update",
    "Update a bundle (`If-Match`): title, price, product_ids, state `published`/`unpublished`.",
    replies.EduBundle,
    description=_IF_MATCH.format("bundle's").strip(),
    body=body.EduBundlePatch,
    path=_BUNDLE,
    parameters=(if_match("The bundle's `ETag`, or `*`."),),
    done="The bundle, with its new `etag`.",
    headers=("ETag",),
    errors=(
        Answer(
            400,
            f"{_KEYED}an unknown or broken field (the first one named), no field at all, a price in another"
            f" currency than the catalog's, {_QUERY}.",
        ),
        _SESSION,
        _NOT_BUNDLE_OWNER,
        _BUNDLE_CONFLICT,
        Answer(412, _STALE.format("bundle")),
        _MISSING,
    ),
)
ANSWER = Op(
    "edu_studio_answer",
    "Answer a student's question on one's own product: `{body (1-4000)}`; an open question becomes"
    " `answered`.",
    replies.EduQuestionAnswered,
    body=body.EduAnswerRequest,
    path={"question_id": {"schema": {"$ref": "#/components/schemas/EduId"}}},
    status=201,
    done="The question with its answers.",
    errors=(
        Answer(400, f"{_KEYED}an unknown field, `body` not 1-4,000 characters, {_QUERY}."),
        _SESSION,
        Answer(
            403,
            "`not_instructor`: no instructor role; `not_owner`: a question on another instructor's product.",
        ),
        Answer(404, "`not_found`: no question has this id."),
        Answer(409, f"`invalid_transition`: the student resolved the question; {_RACE}"),
    ),
)
