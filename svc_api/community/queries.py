"""SQL of leaders, leader applications, nicknames and follows.

Example:
    >>> with store.read() as conn:
    ...     latest_application(conn, "AB12CD") is None, is_following(conn, "AB12CD", "EF34GH")
    (True, False)
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Row

from svc_api.community.tables import applications, follows, leaders, nicknames
from svc_api.core.prepared import Prepared, key_slots
from svc_api.core.upsert import insert_new, inserted

# ---- applications ------------------------------------------------------------------------------


def latest_application(conn: Connection, svc_id: str) -> Row[Any] | None:
    """The newest application of ``svc_id`` (None when they never applied)."""
    query = (
        sa.select(applications)
        .where(applications.c.svc_id == svc_id)
        .order_by(applications.c.application_id.desc())
        .limit(1)
    )
    return conn.execute(query).first()


def insert_application(conn: Connection, **values: Any) -> None:
    """A new application row."""
    conn.execute(applications.insert().values(**values))


def update_application(conn: Connection, application_id: int, **values: Any) -> None:
    """Change fields of one application."""
    conn.execute(
        applications.update().where(applications.c.application_id == application_id).values(**values)
    )


def decide_application(conn: Connection, application_id: int, status: str, now: int) -> bool:
    """Move a pending application to ``status``; False when it was no longer pending (a racing decision)."""
    result = conn.execute(
        applications.update()
        .where(applications.c.application_id == application_id, applications.c.status == "pending")
        .values(status=status, decided_at=now, updated_at=now)
    )
    return result.rowcount == 1


def applications_with_status(conn: Connection, status: str, limit: int) -> list[Row[Any]]:
    """Applications in ``status``, oldest first."""
    query = (
        sa.select(applications)
        .where(applications.c.status == status)
        .order_by(applications.c.application_id)
        .limit(limit)
    )
    return list(conn.execute(query))


# ---- nicknames -----------------------------------------------------------------------------------


def claim_nickname(conn: Connection, nickname: str, svc_id: str) -> str:
    """Hold ``nickname`` for ``svc_id`` unless someone holds it; returns the holder after the attempt."""
    conn.execute(insert_new(conn, nicknames, ["nickname"]).values(nickname=nickname, svc_id=svc_id))
    return str(
        conn.execute(sa.select(nicknames.c.svc_id).where(nicknames.c.nickname == nickname)).scalar_one()
    )


def release_nickname(conn: Connection, svc_id: str) -> None:
    """Give back whatever nickname ``svc_id`` holds."""
    conn.execute(nicknames.delete().where(nicknames.c.svc_id == svc_id))


def nickname_of(conn: Connection, svc_id: str) -> str | None:
    """The nickname ``svc_id`` holds."""
    return conn.execute(sa.select(nicknames.c.nickname).where(nicknames.c.svc_id == svc_id)).scalar()


# ---- leaders -------------------------------------------------------------------------------------


def leader(conn: Connection, svc_id: str) -> Row[Any] | None:
    """The leader profile of ``svc_id`` (None when not a leader)."""
    return conn.execute(sa.select(leaders).where(leaders.c.svc_id == svc_id)).first()


_LEADER_NAMES = Prepared(
    sa.select(leaders.c.svc_id, leaders.c.display_name).where(leaders.c.svc_id.in_(key_slots()))
)


def leader_names(conn: Connection, svc_ids: list[str]) -> dict[str, str]:
    """``svc_id -> display_name`` of the leaders among ``svc_ids``."""
    if not svc_ids:
        return {}
    return {row.svc_id: row.display_name for row in _LEADER_NAMES.all_keyed(conn, sorted(set(svc_ids)))}


def insert_leader(conn: Connection, **values: Any) -> None:
    """The profile of a newly approved leader (kept when re-approved)."""
    conn.execute(insert_new(conn, leaders).values(**values))


def update_leader(conn: Connection, svc_id: str, **values: Any) -> None:
    """Change a leader's profile."""
    conn.execute(leaders.update().where(leaders.c.svc_id == svc_id).values(**values))


def leaders_after(conn: Connection, *, limit: int, after: tuple[int, str] | None) -> list[Row[Any]]:
    """Leaders newest-approved first, after ``(approved_at, svc_id)``."""
    query = sa.select(leaders).order_by(leaders.c.approved_at.desc(), leaders.c.svc_id.desc()).limit(limit)
    if after is not None:
        query = query.where(sa.tuple_(leaders.c.approved_at, leaders.c.svc_id) < sa.tuple_(*after))
    return list(conn.execute(query))


# ---- follows -------------------------------------------------------------------------------------


def follow(conn: Connection, leader_id: str, follower_id: str, now: int) -> bool:
    """Add a follow; False when it existed."""
    values = {"leader_id": leader_id, "follower_id": follower_id, "created_at": now}
    return inserted(conn, follows, values)


def unfollow(conn: Connection, leader_id: str, follower_id: str) -> bool:
    """Remove a follow; False when there was none."""
    gone = follows.delete().where(follows.c.leader_id == leader_id, follows.c.follower_id == follower_id)
    return conn.execute(gone).rowcount == 1


def is_following(conn: Connection, leader_id: str, follower_id: str) -> bool:
    """Whether ``follower_id`` follows ``leader_id``."""
    query = sa.select(follows.c.leader_id).where(
        follows.c.leader_id == leader_id, follows.c.follower_id == follower_id
    )
    return conn.execute(query).first() is not None


def followed_among(conn: Connection, follower_id: str, leader_ids: list[str]) -> set[str]:
    """Which of ``leader_ids`` the follower follows."""
    query = sa.select(follows.c.leader_id).where(
        follows.c.follower_id == follower_id, follows.c.leader_id.in_(leader_ids)
    )
    return {str(r) for r in conn.execute(query).scalars()}


def followers_after(conn: Connection, leader_id: str, after: str | None, limit: int) -> list[str]:
    """Followers of ``leader_id`` in svc_id order after ``after`` (the fan-out's keyset)."""
    query = (
        sa.select(follows.c.follower_id)
        .where(follows.c.leader_id == leader_id)
        .order_by(follows.c.follower_id)
        .limit(limit)
    )
    if after is not None:
        query = query.where(follows.c.follower_id > after)
    return [str(r) for r in conn.execute(query).scalars()]


def add_followers(conn: Connection, leader_id: str, follower_ids: list[str], now: int) -> None:
    """Many follows at once (operators and benchmarks seeding an audience)."""
    rows = [{"leader_id": leader_id, "follower_id": f, "created_at": now} for f in follower_ids]
    if rows:
        conn.execute(insert_new(conn, follows), rows)
