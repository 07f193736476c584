"""Every SQL statement of learning: enrollments, lesson progress, playback sessions, reviews,
questions and certificates."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Row

from svc_api.core.upsert import inserted
from svc_api.education.learning.tables import (
    answers,
    certificates,
    enrollments,
    lesson_progress,
    playback_sessions,
    questions,
    reviews,
)

EN = enrollments.c
LP = lesson_progress.c
PS = playback_sessions.c


def enrollment(conn: Connection, svc_id: str, product_id: str) -> Row[Any] | None:
    query = sa.select(enrollments).where(EN.svc_id == svc_id, EN.product_id == product_id)
    return conn.execute(query).first()


def enroll(conn: Connection, svc_id: str, product_id: str, revision: int, now: int) -> None:
    values = {
        "svc_id": svc_id,
        "product_id": product_id,
        "revision": revision,
        "enrolled_at": now,
        "updated_at": now,
    }
    inserted(conn, enrollments, values)


def enrollments_of(conn: Connection, svc_id: str, product_ids: Sequence[str]) -> dict[str, Row[Any]]:
    if not product_ids:
        return {}
    query = sa.select(enrollments).where(EN.svc_id == svc_id, EN.product_id.in_(list(product_ids)))
    return {row.product_id: row for row in conn.execute(query)}


def touch_enrollment(conn: Connection, svc_id: str, product_id: str, now: int, **values: Any) -> None:
    conn.execute(
        enrollments.update()
        .where(EN.svc_id == svc_id, EN.product_id == product_id)
        .values(updated_at=now, **values)
    )


def adopt(conn: Connection, svc_id: str, product_id: str, version: int, revision: int, now: int) -> bool:
    """Compare-and-set on the enrollment's version: True when this call moved it to ``revision``."""
    result = conn.execute(
        enrollments.update()
        .where(EN.svc_id == svc_id, EN.product_id == product_id, EN.version == version)
        .values(revision=revision, version=version + 1, updated_at=now, completed_at=None)
    )
    return result.rowcount == 1


def progress_rows(conn: Connection, svc_id: str, product_id: str) -> dict[str, Row[Any]]:
    query = sa.select(lesson_progress).where(LP.svc_id == svc_id, LP.product_id == product_id)
    return {row.lesson_id: row for row in conn.execute(query)}


def progress_row(
    conn: Connection, svc_id: str, product_id: str, lesson_id: str, *, lock: bool = False
) -> Row[Any] | None:
    query = sa.select(lesson_progress).where(
        LP.svc_id == svc_id, LP.product_id == product_id, LP.lesson_id == lesson_id
    )
    return conn.execute(query.with_for_update() if lock else query).first()


def ensure_progress(conn: Connection, svc_id: str, product_id: str, lesson_id: str, now: int) -> None:
    values = {
        "svc_id": svc_id,
        "product_id": product_id,
        "lesson_id": lesson_id,
        "intervals": [],
        "updated_at": now,
    }
    inserted(conn, lesson_progress, values)


def update_progress(conn: Connection, svc_id: str, product_id: str, lesson_id: str, **values: Any) -> None:
    conn.execute(
        lesson_progress.update()
        .where(LP.svc_id == svc_id, LP.product_id == product_id, LP.lesson_id == lesson_id)
        .values(**values)
    )


def insert_session(conn: Connection, **values: Any) -> None:
    conn.execute(playback_sessions.insert().values(**values))


def session(conn: Connection, session_id: str) -> Row[Any] | None:
    return conn.execute(sa.select(playback_sessions).where(PS.session_id == session_id)).first()


def last_batch_at(
    conn: Connection, svc_id: str, product_id: str, lesson_id: str, besides: str
) -> float | None:
    """When the account's latest batch on this lesson in a session other than ``besides`` came."""
    query = sa.select(sa.func.max(PS.last_at)).where(
        PS.svc_id == svc_id,
        PS.product_id == product_id,
        PS.lesson_id == lesson_id,
        PS.session_id != besides,
        PS.last_seq > 0,
    )
    value = conn.execute(query).scalar_one()
    return None if value is None else float(value)


def open_sessions(conn: Connection, svc_id: str, now: int) -> int:
    """How many unclosed, unexpired playback sessions the account has."""
    query = (
        sa.select(sa.func.count())
        .select_from(playback_sessions)
        .where(PS.svc_id == svc_id, PS.closed_at.is_(None), PS.expires_at > now)
    )
    return int(conn.execute(query).scalar_one())


def advance_session(conn: Connection, session_id: str, seq: int, **values: Any) -> bool:
    """Compare-and-set on the batch number: True when batch ``seq`` is the one that moved it."""
    result = conn.execute(
        playback_sessions.update()
        .where(PS.session_id == session_id, PS.last_seq == seq - 1, PS.closed_at.is_(None))
        .values(last_seq=seq, **values)
    )
    return result.rowcount == 1


def close_session(conn: Connection, session_id: str, now: int) -> None:
    conn.execute(
        playback_sessions.update()
        .where(PS.session_id == session_id, PS.closed_at.is_(None))
        .values(closed_at=now)
    )


def review(conn: Connection, product_id: str, svc_id: str) -> Row[Any] | None:
    query = sa.select(reviews).where(reviews.c.product_id == product_id, reviews.c.svc_id == svc_id)
    return conn.execute(query).first()


def put_review(conn: Connection, product_id: str, svc_id: str, rating: int, comment: str, now: int) -> bool:
    """Insert or update the account's review; True when it was new."""
    values = {
        "product_id": product_id,
        "svc_id": svc_id,
        "rating": rating,
        "comment": comment,
        "created_at": now,
        "updated_at": now,
    }
    if inserted(conn, reviews, values):
        return True
    conn.execute(
        reviews.update()
        .where(reviews.c.product_id == product_id, reviews.c.svc_id == svc_id)
        .values(rating=rating, comment=comment, updated_at=now)
    )
    return False


def delete_review(conn: Connection, product_id: str, svc_id: str) -> bool:
    result = conn.execute(
        reviews.delete().where(reviews.c.product_id == product_id, reviews.c.svc_id == svc_id)
    )
    return result.rowcount == 1


def insert_question(conn: Connection, **values: Any) -> None:
    conn.execute(questions.insert().values(**values))


def question(conn: Connection, question_id: str) -> Row[Any] | None:
    return conn.execute(sa.select(questions).where(questions.c.question_id == question_id)).first()


def move_question(conn: Connection, question_id: str, from_state: str, to_state: str, now: int) -> bool:
    result = conn.execute(
        questions.update()
        .where(questions.c.question_id == question_id, questions.c.state == from_state)
        .values(state=to_state, updated_at=now)
    )
    return result.rowcount == 1


def insert_answer(conn: Connection, **values: Any) -> None:
    conn.execute(answers.insert().values(**values))


def answers_of(conn: Connection, question_id: str) -> list[Row[Any]]:
    query = sa.select(answers).where(answers.c.question_id == question_id).order_by(answers.c.created_at)
    return list(conn.execute(query))


def issue_certificate(conn: Connection, **values: Any) -> bool:
    """Insert a certificate unless the account has one for the product."""
    return inserted(conn, certificates, values, keys=["svc_id", "product_id"])


def certificate_by_token(conn: Connection, token: str) -> Row[Any] | None:
    return conn.execute(sa.select(certificates).where(certificates.c.token == token)).first()


def certificate_of(conn: Connection, svc_id: str, product_id: str) -> Row[Any] | None:
    query = sa.select(certificates).where(
        certificates.c.svc_id == svc_id, certificates.c.product_id == product_id
    )
    return conn.execute(query).first()


def certificate_page(
    conn: Connection, svc_id: str, after: tuple[int, str] | None, limit: int
) -> list[Row[Any]]:
    query = sa.select(certificates).where(certificates.c.svc_id == svc_id)
    if after is not None:
        query = query.where(sa.tuple_(certificates.c.issued_at, certificates.c.certificate_id) < after)
    order = (certificates.c.issued_at.desc(), certificates.c.certificate_id.desc())
    return list(conn.execute(query.order_by(*order).limit(limit)))


def count_certificates(conn: Connection, svc_id: str) -> int:
    """The account's valid (unrevoked) certificates."""
    query = (
        sa.select(sa.func.count())
        .select_from(certificates)
        .where(certificates.c.svc_id == svc_id, certificates.c.revoked_at.is_(None))
    )
    return int(conn.execute(query).scalar_one())


def revoke_certificate(conn: Connection, svc_id: str, product_id: str, now: int) -> bool:
    """Mark the account's certificate of a product revoked (once); whether one was."""
    result = conn.execute(
        certificates.update()
        .where(
            certificates.c.svc_id == svc_id,
            certificates.c.product_id == product_id,
            certificates.c.revoked_at.is_(None),
        )
        .values(revoked_at=now)
    )
    return result.rowcount == 1


def reissue_certificate(conn: Connection, svc_id: str, product_id: str, **values: Any) -> bool:
    """A revoked certificate issued anew (bought and completed again): new token, not revoked."""
    result = conn.execute(
        certificates.update()
        .where(
            certificates.c.svc_id == svc_id,
            certificates.c.product_id == product_id,
            certificates.c.revoked_at.is_not(None),
        )
        .values(revoked_at=None, **values)
    )
    return result.rowcount == 1
