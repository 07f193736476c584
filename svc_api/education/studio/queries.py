"""Every SQL statement of the studio: instructor roles, seller profiles, onboarding sessions,
drafts, submissions and answers."""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Row

from svc_api.core.upsert import inserted
from svc_api.education.catalog.tables import products
from svc_api.education.studio.tables import (
    drafts,
    instructor_roles,
    onboarding_sessions,
    seller_profiles,
    submissions,
)

OS = onboarding_sessions.c


def role(conn: Connection, svc_id: str) -> str | None:
    row = conn.execute(sa.select(instructor_roles.c.role).where(instructor_roles.c.svc_id == svc_id)).first()
    return None if row is None else str(row.role)


def set_role(conn: Connection, svc_id: str, role_: str | None, now: int) -> None:
    conn.execute(instructor_roles.delete().where(instructor_roles.c.svc_id == svc_id))
    if role_ is not None:
        conn.execute(instructor_roles.insert().values(svc_id=svc_id, role=role_, granted_at=now))


def profile(conn: Connection, svc_id: str) -> Row[Any] | None:
    return conn.execute(sa.select(seller_profiles).where(seller_profiles.c.svc_id == svc_id)).first()


def save_profile(conn: Connection, svc_id: str, now: int, **values: Any) -> None:
    """Insert or update the seller's profile row."""
    if not inserted(conn, seller_profiles, {"svc_id": svc_id, "updated_at": now, **values}):
        conn.execute(
            seller_profiles.update()
            .where(seller_profiles.c.svc_id == svc_id)
            .values(updated_at=now, **values)
        )


def open_onboarding(conn: Connection, svc_id: str, now: int) -> Row[Any] | None:
    query = sa.select(onboarding_sessions).where(OS.svc_id == svc_id, OS.state == "open", OS.expires_at > now)
    return conn.execute(query.limit(1)).first()


def insert_onboarding(conn: Connection, **values: Any) -> None:
    conn.execute(onboarding_sessions.insert().values(**values))


def onboarding_by_token(conn: Connection, token: str) -> Row[Any] | None:
    return conn.execute(sa.select(onboarding_sessions).where(OS.token == token)).first()


def complete_onboarding(conn: Connection, session_id: str, now: int) -> bool:
    result = conn.execute(
        onboarding_sessions.update()
        .where(OS.session_id == session_id, OS.state == "open")
        .values(state="completed", completed_at=now)
    )
    return result.rowcount == 1


def draft(conn: Connection, product_id: str) -> Row[Any] | None:
    return conn.execute(sa.select(drafts).where(drafts.c.product_id == product_id)).first()


def insert_draft(conn: Connection, **values: Any) -> None:
    conn.execute(drafts.insert().values(**values))


def title_taken(conn: Connection, leader_id: str, title: str) -> bool:
    """Whether one of the leader's drafts already has this title (case-insensitively)."""
    query = sa.select(drafts.c.fields).join(products, products.c.product_id == drafts.c.product_id)
    rows = conn.execute(query.where(products.c.leader_id == leader_id))
    return any(str(row.fields.get("title", "")).casefold() == title.casefold() for row in rows)


def update_draft(conn: Connection, product_id: str, expected: int, **values: Any) -> bool:
    """Compare-and-set on the draft's version (``expected``): True when this call changed it."""
    where = (drafts.c.product_id == product_id, drafts.c.version == expected)
    result = conn.execute(drafts.update().where(*where).values(**values))
    return result.rowcount == 1


def pending_submission(conn: Connection, product_id: str) -> Row[Any] | None:
    query = sa.select(submissions).where(
        submissions.c.product_id == product_id, submissions.c.state == "pending"
    )
    return conn.execute(query.limit(1)).first()


def insert_submission(conn: Connection, **values: Any) -> None:
    conn.execute(submissions.insert().values(**values))


def submission(conn: Connection, submission_id: str) -> Row[Any] | None:
    return conn.execute(sa.select(submissions).where(submissions.c.submission_id == submission_id)).first()


def pending_submissions(conn: Connection, limit: int) -> list[Row[Any]]:
    query = sa.select(submissions).where(submissions.c.state == "pending").order_by(submissions.c.created_at)
    return list(conn.execute(query.limit(limit)))


def decide_submission(conn: Connection, submission_id: str, state: str, reason: str | None, now: int) -> bool:
    result = conn.execute(
        submissions.update()
        .where(submissions.c.submission_id == submission_id, submissions.c.state == "pending")
        .values(state=state, reason=reason, decided_at=now)
    )
    return result.rowcount == 1
