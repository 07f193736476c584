"""The reply models of the studio's routes: seller readiness and onboarding, studio products and
their draft tree, submissions, bundles and answered questions.

Example:
    >>> EduGate.model_validate({"state": "missing", "lacks": ["tax_id"]}).lacks
    ['tax_id']
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from svc_api.education.contract import Money, Shape, Timestamp
from svc_api.education.learning import service as learning

Kind = Literal["course", "publication"]
Level = Literal["beginner", "intermediate", "advanced"]


class EduGate(Shape):
    """One seller gate."""

    state: Literal["passed", "missing", "not_required"]
    lacks: list[str]
    """What the gate still needs (empty unless `missing`)."""


class EduGates(Shape):
    """The five seller gates."""

    contract: EduGate
    tax: EduGate
    e_document: EduGate
    ap_bank: EduGate
    identity: EduGate


class EduSellerStatus(Shape):
    """Whether the caller sells here, and how far the onboarding got."""

    role: Literal["community_leader", "admin", "moderator", "leader", "owner"]
    gates: EduGates
    ready_to_submit: bool
    """`contract` and `identity` pass: submissions are allowed."""
    ready_for_payouts: bool
    """No gate is `missing`: the monthly run pays the balance."""
    country: str | None
    """The payout profile's ISO 3166-1 alpha-2 country, once given."""


class EduOnboardingSession(Shape):
    """An open onboarding session."""

    session_id: str
    state: Literal["open"]
    onboarding_url: str
    """The hosted page, `/education/v1/seller/onboarding/{token}` (the token is the credential)."""
    expires_at: Timestamp
    contract_version: str
    profile_fields: list[str]


class EduOnboardingFormSubmit(Shape):
    """The shape to POST back (placeholder values)."""

    accept_contract: bool
    payout_profile: dict[str, str]


class EduOnboardingForm(Shape):
    """What the hosted onboarding page asks for."""

    session_id: str
    expires_at: Timestamp
    contract_version: str
    submit: EduOnboardingFormSubmit
    rules: str
    """The payout profile's rules, in words."""


class EduOnboardingDone(Shape):
    """A completed onboarding."""

    session_id: str
    state: Literal["completed"]
    gates: EduGates


class EduStudioLesson(Shape):
    """A lesson of a draft's tree, with the media its upload gave it."""

    lesson_id: str
    title: str
    kind: Literal["video", "pdf", "article"]
    preview: bool
    duration_seconds: Annotated[int, Field(ge=1)] | None = None
    """`video`."""
    pages: Annotated[int, Field(ge=1)] | None = None
    """`pdf` and `article`."""
    media_key: str | None = None
    """`video` and `pdf`: the processed upload's object."""
    upload_id: str | None = None
    """`video` and `pdf`: the upload the media came from (checked again at submission)."""


class EduStudioSection(Shape):
    """A section of a draft's tree."""

    section_id: str
    title: str
    lessons: list[EduStudioLesson]


class EduStudioTree(Shape):
    """A draft's lesson tree."""

    sections: list[EduStudioSection]


class EduStudioDraft(Shape):
    """A product's draft: its own fields and lesson tree (nothing of it reaches the catalog before an
    approved submission)."""

    kind: Kind
    title: str
    subtitle: str
    description: str
    language: str
    level: Level
    price: Money
    topics: list[str]
    refundable: bool
    curriculum: EduStudioTree | None
    """Null until a tree is set."""


class EduStudioProduct(Shape):
    """A studio product: its draft beside the published state."""

    product_id: str
    state: Literal["draft", "published", "unpublished"]
    """The catalog's state of the product."""
    published_revision: int | None
    """The revision on sale (null before the first approval)."""
    draft: EduStudioDraft
    etag: str
    """`"product-N"`, also the `ETag` header."""
    updated_at: Timestamp


class EduStudioSubmission(Shape):
    """The receipt of a submission for review."""

    submission_id: str
    product_id: str
    state: Literal["pending"]
    draft_version: int
    created_at: Timestamp


class EduStudioUnpublished(Shape):
    """A product taken off sale."""

    product_id: str
    state: Literal["unpublished"]


class EduBundle(Shape):
    """A bundle of the instructor's products."""

    bundle_id: str
    title: str
    state: Literal["published", "unpublished"]
    price: Money
    product_ids: list[str]
    etag: str
    """`"bundle-N"`, also the `ETag` header."""


class EduStudioAnswer(Shape):
    """An instructor's answer to a question."""

    answer_id: str
    leader_id: str
    body: str
    created_at: Timestamp


class EduQuestionAnswered(learning.EduQuestion):
    """A learner's question with its answers."""

    answers: list[EduStudioAnswer]
