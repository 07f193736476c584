"""The reply models of learning's routes: the dashboard and library, progress and resume, playback
sessions and their batches, reviews, questions and certificates.

Example:
    >>> EduReviewDeleted.model_validate({"product_id": "pr_1", "deleted": True}).deleted
    True
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Literal

from pydantic import Field

from svc_api.education.contract import Page, Shape, Timestamp

Count = Annotated[int, Field(ge=0)]
Percent = Annotated[int, Field(ge=0, le=100)]
Seconds = Annotated[float, Field(ge=0)]


class EduLearningStatus(StrEnum):
    """Where a student is in a product."""

    NOT_STARTED = "not_started"
    IN_PROGRESS = "in_progress"
    COMPLETED = "completed"


class EduLastActivity(Shape):
    """The last lesson the student touched."""

    product_id: str
    lesson_id: str
    at: Timestamp


class EduDashboard(Shape):
    """The student's learning summary."""

    products: Count
    in_progress: Count
    completed: Count
    not_started: Count
    certificates: Count
    last_activity: EduLastActivity | None
    """Null before the first lesson."""


class EduLibraryItem(Shape):
    """A product of the student's library."""

    product_id: str
    kind: Literal["course", "publication"]
    title: str
    leader_id: str
    status: EduLearningStatus
    percent_complete: Percent
    granted_at: Timestamp


class EduLibraryPage(Page):
    """A page of the library, in order of first grant."""

    items: list[EduLibraryItem]


class EduLessonProgress(Shape):
    """Video lessons carry `duration_seconds`, `watched_seconds` (measured by the server) and
    `position_seconds`; PDF and article lessons `pages`, `furthest_page` and `page`."""

    lesson_id: str
    kind: Literal["video", "pdf", "article"]
    completed: bool
    duration_seconds: Annotated[int, Field(ge=1)] | None = None
    watched_seconds: Seconds | None = None
    position_seconds: Seconds | None = None
    pages: Annotated[int, Field(ge=1)] | None = None
    furthest_page: Count | None = None
    page: Count | None = None


class EduResume(Shape):
    """Where to continue."""

    product_id: str
    revision: Annotated[int, Field(ge=1)]
    lesson: EduLessonProgress
    updated_at: Timestamp


class EduProgress(Shape):
    """An enrollment's server-measured progress."""

    product_id: str
    revision: Annotated[int, Field(ge=1)]
    """The revision the enrollment is on."""
    latest_revision: Annotated[int, Field(ge=1)]
    newer_revision_available: bool
    status: EduLearningStatus
    completed_lessons: Count
    total_lessons: Count
    percent_complete: Percent
    completed_at: int | None
    lessons: list[EduLessonProgress]
    etag: str
    """The enrollment's `ETag` (for `If-Match`)."""
    applied: bool | None = None
    """Reading progress only: false when the checkpoint's `version` was stale."""


class EduMediaCredentials(Shape):
    """How to fetch the lesson's media."""

    media_url: str | None
    """Signed, expiring URL of the lesson's media (null when it has none)."""
    expires_at: Timestamp


class EduPlaybackSession(Shape):
    """A playback session and its credentials."""

    session_id: str
    product_id: str
    lesson_id: str
    tracked: bool
    """False for a preview played without entitlement (no progress)."""
    next_seq: Annotated[int, Field(ge=1)]
    position_seconds: Seconds
    """The last checkpoint of the lesson."""
    expires_at: Timestamp
    credentials: EduMediaCredentials


class EduWatchedLesson(Shape):
    """A tracked session also reports the lesson's watched time and completion."""

    lesson_id: str
    tracked: bool
    position_seconds: Seconds
    watched_seconds: Seconds | None = None
    duration_seconds: Seconds | None = None
    completed: bool | None = None


class EduPlaybackCredited(Shape):
    """What one batch credited."""

    session_id: str
    seq: Annotated[int, Field(ge=1)]
    next_seq: Annotated[int, Field(ge=2)]
    credited_seconds: Seconds
    """What the lesson's watched time grew by (0 for a stretch watched before or an untracked
    preview). Across all of the student's sessions of a lesson, credited time never exceeds the
    wall clock times the highest rate."""
    lesson: EduWatchedLesson


class EduPlaybackClosed(Shape):
    """A closed playback session."""

    session_id: str
    closed: Literal[True]
    closed_at: Timestamp
    position_seconds: Seconds


class EduReview(Shape):
    """The student's review of a product."""

    product_id: str
    rating: Annotated[int, Field(ge=1, le=5)]
    comment: str
    created_at: Timestamp
    updated_at: Timestamp


class EduReviewDeleted(Shape):
    """The receipt of a deleted review."""

    product_id: str
    deleted: Literal[True]


class EduQuestion(Shape):
    """A student's question on a product."""

    question_id: str
    product_id: str
    lesson_id: str | None
    title: str
    body: str
    state: Literal["open", "answered", "resolved"]
    created_at: Timestamp
    updated_at: Timestamp


class EduCertificate(Shape):
    """A certificate of completion."""

    certificate_id: str
    product_id: str
    course_title: str
    holder_name: str
    issued_at: Timestamp
    revoked_at: int | None = None
    """When a refund of the product revoked it (null while valid)."""
    verification_token: str
    """Unguessable; anyone may verify with it."""
    verification_url: str


class EduCertificatePage(Page):
    """A page of certificates, newest first."""

    items: list[EduCertificate]


class EduCertificateCourse(Shape):
    """The course a certificate is of."""

    product_id: str
    title: str


class EduCertificateHolder(Shape):
    """Whom a certificate was issued to."""

    name: str


class EduCertificateCheck(Shape):
    """A certificate's public facts."""

    valid: bool
    """False once a refund revoked it (`revoked_at` says when)."""
    revoked_at: int | None
    """When it was revoked; null while valid."""
    course: EduCertificateCourse
    holder: EduCertificateHolder
    issued_at: Timestamp
