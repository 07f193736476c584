"""Learning as other education domains see it: enrollments and progress (:mod:`.progress`),
playback sessions (:mod:`.sessions`), reviews, questions and certificates (:mod:`.engagement`), and
the reply model of a question (the studio answers one).

Example:
    >>> callable(answer)
    True
"""

from __future__ import annotations

from svc_api.education.learning.engagement import answer, forfeit, question_view, refund_order
from svc_api.education.learning.progress import completed, dashboard, enrollment, library, progress, resume
from svc_api.education.learning.replies import EduQuestion

__all__ = [
    "EduQuestion",
    "answer",
    "completed",
    "dashboard",
    "enrollment",
    "forfeit",
    "library",
    "progress",
    "question_view",
    "refund_order",
    "resume",
]
