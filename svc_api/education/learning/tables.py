"""Tables of learning: enrollments, lesson progress, playback sessions, reviews, questions and
their answers, certificates. Times are integer Unix seconds.

Example:
    >>> sorted(t.name for t in TABLES)[:2]
    ['edu_answers', 'edu_certificates']
"""

from __future__ import annotations

import sqlalchemy as sa

from svc_api.core.tables import metadata

_ACCOUNT = "accounts.svc_id"

enrollments = sa.Table(
    "edu_enrollments",
    metadata,
    sa.Column("svc_id", sa.String(6), sa.ForeignKey(_ACCOUNT), primary_key=True),
    sa.Column("product_id", sa.String(24), sa.ForeignKey("edu_products.product_id"), primary_key=True),
    sa.Column("revision", sa.Integer, nullable=False),
    sa.Column("version", sa.Integer, nullable=False, server_default="1"),
    sa.Column("enrolled_at", sa.BigInteger, nullable=False),
    sa.Column("updated_at", sa.BigInteger, nullable=False),
    sa.Column("completed_at", sa.BigInteger, nullable=True),
    sa.Column("last_lesson_id", sa.String(40), nullable=True),
    sa.Index("ix_edu_enrollments_recent", "svc_id", "updated_at"),
)

lesson_progress = sa.Table(
    "edu_lesson_progress",
    metadata,
    sa.Column("svc_id", sa.String(6), sa.ForeignKey(_ACCOUNT), primary_key=True),
    sa.Column("product_id", sa.String(24), primary_key=True),
    sa.Column("lesson_id", sa.String(40), primary_key=True),
    sa.Column("intervals", sa.JSON, nullable=False),
    sa.Column("watched_seconds", sa.Float, nullable=False, server_default="0"),
    sa.Column("position", sa.Float, nullable=False, server_default="0"),
    sa.Column("furthest_page", sa.Integer, nullable=False, server_default="0"),
    # When the furthest page last grew (NULL: not yet): the reading pace is measured from it.
    sa.Column("furthest_at", sa.BigInteger, nullable=True),
    sa.Column("page", sa.Integer, nullable=False, server_default="0"),
    sa.Column("reading_version", sa.BigInteger, nullable=False, server_default="0"),
    sa.Column("completed_at", sa.BigInteger, nullable=True),
    sa.Column("updated_at", sa.BigInteger, nullable=False),
)

playback_sessions = sa.Table(
    "edu_playback_sessions",
    metadata,
    sa.Column("session_id", sa.String(24), primary_key=True),
    sa.Column("svc_id", sa.String(6), sa.ForeignKey(_ACCOUNT), nullable=False),
    sa.Column("product_id", sa.String(24), nullable=False),
    sa.Column("lesson_id", sa.String(40), nullable=False),
    sa.Column("duration_seconds", sa.Float, nullable=False),
    sa.Column("tracked", sa.Boolean, nullable=False),
    sa.Column("last_seq", sa.Integer, nullable=False, server_default="0"),
    sa.Column("position", sa.Float, nullable=False, server_default="0"),
    sa.Column("rate", sa.Float, nullable=False, server_default="1"),
    sa.Column("last_at", sa.Float, nullable=False),
    sa.Column("created_at", sa.BigInteger, nullable=False),
    sa.Column("expires_at", sa.BigInteger, nullable=False),
    sa.Column("closed_at", sa.BigInteger, nullable=True),
    sa.Index("ix_edu_playback_owner", "svc_id", "closed_at"),
)

reviews = sa.Table(
    "edu_reviews",
    metadata,
    sa.Column("product_id", sa.String(24), sa.ForeignKey("edu_products.product_id"), primary_key=True),
    sa.Column("svc_id", sa.String(6), sa.ForeignKey(_ACCOUNT), primary_key=True),
    sa.Column("rating", sa.Integer, nullable=False),
    sa.Column("comment", sa.String(2000), nullable=False, server_default=""),
    sa.Column("created_at", sa.BigInteger, nullable=False),
    sa.Column("updated_at", sa.BigInteger, nullable=False),
    sa.Index("ix_edu_reviews_recent", "product_id", "updated_at"),
)

questions = sa.Table(
    "edu_questions",
    metadata,
    sa.Column("question_id", sa.String(24), primary_key=True),
    sa.Column("product_id", sa.String(24), sa.ForeignKey("edu_products.product_id"), nullable=False),
    sa.Column("svc_id", sa.String(6), sa.ForeignKey(_ACCOUNT), nullable=False),
    sa.Column("lesson_id", sa.String(40), nullable=True),
    sa.Column("title", sa.String(160), nullable=False),
    sa.Column("body", sa.String(4000), nullable=False),
    sa.Column("state", sa.String(16), nullable=False),
    sa.Column("created_at", sa.BigInteger, nullable=False),
    sa.Column("updated_at", sa.BigInteger, nullable=False),
    sa.Index("ix_edu_questions_product", "product_id", "created_at"),
)

certificates = sa.Table(
    "edu_certificates",
    metadata,
    sa.Column("certificate_id", sa.String(24), primary_key=True),
    sa.Column("svc_id", sa.String(6), sa.ForeignKey(_ACCOUNT), nullable=False),
    sa.Column("product_id", sa.String(24), sa.ForeignKey("edu_products.product_id"), nullable=False),
    sa.Column("token", sa.String(64), nullable=False, unique=True),
    sa.Column("holder_name", sa.String(80), nullable=False),
    sa.Column("course_title", sa.String(160), nullable=False),
    sa.Column("issued_at", sa.BigInteger, nullable=False),
    # Set when the entitlement it certified was refunded: verification then says revoked.
    sa.Column("revoked_at", sa.BigInteger, nullable=True),
    sa.UniqueConstraint("svc_id", "product_id"),
)

answers = sa.Table(
    "edu_answers",
    metadata,
    sa.Column("answer_id", sa.String(24), primary_key=True),
    sa.Column("question_id", sa.String(24), sa.ForeignKey("edu_questions.question_id"), nullable=False),
    sa.Column("svc_id", sa.String(6), sa.ForeignKey(_ACCOUNT), nullable=False),
    sa.Column("body", sa.String(4000), nullable=False),
    sa.Column("created_at", sa.BigInteger, nullable=False),
    sa.Index("ix_edu_answers_question", "question_id", "created_at"),
)

TABLES = (enrollments, lesson_progress, playback_sessions, reviews, questions, certificates, answers)
