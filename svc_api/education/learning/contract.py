"""The request models of learning's routes: each body field's format rule, in the order the
services checked them; the routes' :class:`~svc_api.education.contract.Op` are in
:mod:`~svc_api.education.learning.ops`, the reply models in :mod:`~svc_api.education.learning.replies`.
What needs the store stays in the services: whether a lesson is one of the enrollment's revision, a
page within the document's page count (its message names the count), entitlements, ownership, the
session's order of batches and ``If-Match``.

Example:
    >>> EduReviewRequest.parse({"rating": 4}).comment
    ''
    >>> EduReviewRequest.parse({"rating": 6})
    Traceback (most recent call last):
    ...
    svc_api.core.errors.Invalid: rating must be an integer from 1 to 5
"""

from __future__ import annotations

from typing import Any

from svc_api.core.errors import Invalid
from svc_api.core.params import AsSent
from svc_api.education.contract import Annotated, Check, Cursor, EduBody, EduQuery, Limit
from svc_api.education.fields import Text, text_field
from svc_api.education.learning import engagement, playback
from svc_api.education.learning import progress as learning

MAX_VERSION = 2**53
_ID = {"type": "string"}


class StudentPageQuery(EduQuery):
    """One page of a student's list."""

    cursor: Cursor
    limit: Limit


def _reading_lesson(value: object, name: str) -> str:
    if not isinstance(value, str):
        raise learning.not_a_reading_lesson(value)
    return value


class EduReadingRequest(EduBody):
    """A reading checkpoint."""

    lesson_id: Annotated[
        str,
        Check(
            _reading_lesson,
            {**_ID, "description": "A pdf or article lesson of the enrollment's revision."},
            required=True,
        ),
    ]
    version: Annotated[
        int,
        Check(
            learning.positive,
            {
                "type": "integer",
                "minimum": 1,
                "maximum": MAX_VERSION,
                "description": "Client checkpoint counter; only a higher one than the last moves the"
                " checkpoint.",
            },
            required=True,
            args=(MAX_VERSION,),
        ),
    ]
    page: AsSent(  # its range is the lesson's page count: the service checks it
        {"type": "integer", "minimum": 1, "maximum": 10000, "description": "Clipped to the lesson's pages."},
        required=True,
    )


def _video_lesson(value: object, name: str) -> str:
    if not isinstance(value, str):
        raise Invalid("lesson_id is required")
    return value


class EduPlaybackRequest(EduBody):
    """The lesson to play."""

    lesson_id: Annotated[
        str, Check(_video_lesson, {**_ID, "description": "A video lesson of the product."}, required=True)
    ]


def _seq(value: object, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise Invalid("seq must be an integer of at least 1 (the batch number)")
    return value


def _events(value: object, name: str) -> list[dict[str, Any]]:
    return playback.check_events(value)


_EVENT = {
    "oneOf": [
        {
            "type": "object",
            "required": ["type", "position"],
            "properties": {
                "type": {"enum": [kind for kind in playback.KINDS if kind != "rate"]},
                "position": {"type": "number", "minimum": 0, "description": "Seconds into the lesson."},
            },
        },
        {
            "type": "object",
            "required": ["type", "rate"],
            "properties": {
                "type": {"const": "rate"},
                "rate": {"type": "number", "minimum": playback.MIN_RATE, "maximum": playback.MAX_RATE},
            },
        },
    ]
}


class EduPlaybackBatch(EduBody):
    """One numbered batch of playback events."""

    seq: Annotated[
        int,
        Check(
            _seq,
            {"type": "integer", "minimum": 1, "description": "Batch number: 1, 2, ... each once, in order."},
            required=True,
        ),
    ]
    events: Annotated[
        list[dict[str, Any]],
        Check(
            _events,
            {"type": "array", "minItems": 1, "maxItems": playback.MAX_EVENTS, "items": _EVENT},
            required=True,
        ),
    ]


def _rating(value: object, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 5:
        raise Invalid("rating must be an integer from 1 to 5")
    return value


def _comment(value: object, name: str) -> str:
    return text_field({name: value}, name, lo=0, hi=2000, required=False) or ""


class EduReviewRequest(EduBody):
    """A review."""

    rating: Annotated[int, Check(_rating, {"type": "integer", "minimum": 1, "maximum": 5}, required=True)]
    comment: Annotated[str, Check(_comment, {"type": "string", "maxLength": 2000})]


def _question_lesson(value: object, name: str) -> str | None:
    if value is not None and not isinstance(value, str):
        raise engagement.not_a_lesson(value)
    return value


class EduQuestionRequest(EduBody):
    """A question."""

    title: Text(3, 160)
    body: Text(1, 4000)
    lesson_id: Annotated[
        str | None,
        Check(
            _question_lesson,
            {"type": ["string", "null"], "description": "A lesson of the student's revision."},
        ),
    ]


def _state(value: object, name: str) -> str:
    if value not in ("open", "resolved"):
        raise Invalid("state must be resolved or open")
    return str(value)


class EduQuestionPatch(EduBody):
    """A question's new state."""

    state: Annotated[
        str,
        Check(
            _state,
            {
                "enum": ["open", "resolved"],
                "description": "`resolved` from open or answered; `open` from resolved.",
            },
            required=True,
        ),
    ]


def _product_id(value: object, name: str) -> str:
    if not isinstance(value, str) or not 1 <= len(value) <= 24:
        raise Invalid("product_id is required")
    return value


class EduCertificateRequest(EduBody):
    """The certificate to issue."""

    product_id: Annotated[
        str, Check(_product_id, {"type": "string", "minLength": 1, "maxLength": 24}, required=True)
    ]
    holder_name: Text(2, 80)
