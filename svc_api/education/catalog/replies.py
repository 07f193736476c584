"""The reply models of the catalog's routes: product summaries and pages, the curriculum preview,
topics and reviews.

Example:
    >>> EduTopic.model_validate({"topic_id": "risk", "name": "Risk"}).name
    'Risk'
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import ConfigDict, Field

from svc_api.education.contract import Money, Page, Shape, Timestamp

Kind = Literal["course", "publication"]
Level = Literal["beginner", "intermediate", "advanced"]


class EduTopic(Shape):
    """A topic products are filed under."""

    topic_id: str
    name: str


class EduLeader(Shape):
    """The instructor who sells a product."""

    leader_id: str
    name: str


class EduRating(Shape):
    """A product's average rating and how many reviews make it."""

    average: Annotated[float, Field(ge=0, le=5)]
    count: Annotated[int, Field(ge=0)]


class EduViewer(Shape):
    """The caller's relation to a product (only with a session token)."""

    owned: bool
    """The caller holds an active entitlement."""


class EduProductSummary(Shape):
    """A product as the catalog lists it."""

    product_id: str
    kind: Kind
    title: str
    subtitle: str
    language: str
    """ISO 639-1 code."""
    level: Level
    topics: list[EduTopic]
    leader: EduLeader
    price: Money
    rating: EduRating
    student_count: Annotated[int, Field(ge=0)]
    lesson_count: Annotated[int, Field(ge=0)]
    duration_seconds: Annotated[int, Field(ge=0)]
    """Seconds of video."""
    state: Literal["published", "unpublished"]
    published_at: Timestamp
    viewer: EduViewer | None = None
    """Only with a session token."""


class EduProduct(EduProductSummary):
    """The product page."""

    description: str
    revision: Annotated[int, Field(ge=1)]
    """The newest curriculum revision."""
    purchasable: bool
    """On sale (published)."""
    refundable: bool
    """The instructor allows refunds within the window."""


class EduCatalogPage(Page):
    """A page of catalog entries."""

    items: list[EduProductSummary]


class EduTopicPage(Page):
    """A page of topics."""

    items: list[EduTopic]


class EduPublicLesson(Shape):
    """A lesson as the curriculum preview shows it: never its media."""

    model_config = ConfigDict(json_schema_extra={"not": {"required": ["media_key"]}})

    lesson_id: str
    title: str
    kind: Literal["video", "pdf", "article"]
    preview: bool
    locked: bool
    """False for preview lessons and for an owner."""
    duration_seconds: Annotated[int, Field(ge=1)] | None = None
    """Video lessons."""
    pages: Annotated[int, Field(ge=1)] | None = None
    """PDF and article lessons."""


class EduPublicSection(Shape):
    """A section of the curriculum preview."""

    section_id: str
    title: str
    lessons: list[EduPublicLesson]


class EduCurriculum(Shape):
    """The lesson tree of a product's newest revision."""

    product_id: str
    revision: Annotated[int, Field(ge=1)]
    sections: list[EduPublicSection]


class EduPublicReview(Shape):
    """One review of a product."""

    reviewer_id: str
    rating: Annotated[int, Field(ge=1, le=5)]
    comment: str
    updated_at: Timestamp


class EduReviewPage(Page):
    """A page of reviews, newest first."""

    items: list[EduPublicReview]
