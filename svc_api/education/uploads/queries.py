"""Every SQL statement of uploads: the upload rows, their part sets, and the worker's claims.

State changes are conditional updates (``... WHERE status = <expected>``): of two requests or
workers racing for one transition, exactly one sees its row count be 1.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Row

from svc_api.core.upsert import inserted
from svc_api.education.uploads.tables import upload_parts, uploads

U = uploads.c
P = upload_parts.c


def insert(conn: Connection, **values: Any) -> None:
    conn.execute(uploads.insert().values(**values))


def row(conn: Connection, upload_id: str, *, lock: bool = False) -> Row[Any] | None:
    """One upload (``lock``: held until the transaction ends, on PostgreSQL)."""
    query = sa.select(uploads).where(U.upload_id == upload_id)
    return conn.execute(query.with_for_update() if lock else query).first()


def in_flight(conn: Connection, leader_id: str, statuses: Sequence[str]) -> int:
    query = (
        sa.select(sa.func.count())
        .select_from(uploads)
        .where(U.leader_id == leader_id, U.status.in_(statuses))
    )
    return int(conn.execute(query).scalar_one())


def page(
    conn: Connection, leader_id: str, status: str | None, after: dict[str, Any] | None, limit: int
) -> tuple[list[Row[Any]], bool]:
    """The leader's uploads, newest first, after ``after`` (``{t, id}``); whether more follow."""
    query = sa.select(uploads).where(U.leader_id == leader_id)
    if status is not None:
        query = query.where(U.status == status)
    if after is not None:
        t, upload_id = int(after["t"]), str(after["id"])
        query = query.where(sa.or_(U.created_at < t, sa.and_(U.created_at == t, U.upload_id < upload_id)))
    rows = conn.execute(query.order_by(U.created_at.desc(), U.upload_id.desc()).limit(limit + 1)).all()
    return list(rows[:limit]), len(rows) > limit


def parts(conn: Connection, upload_id: str) -> dict[int, Row[Any]]:
    query = sa.select(upload_parts).where(P.upload_id == upload_id).order_by(P.part_number)
    return {int(r.part_number): r for r in conn.execute(query)}


def part_numbers(conn: Connection, upload_id: str) -> list[int]:
    query = sa.select(P.part_number).where(P.upload_id == upload_id).order_by(P.part_number)
    return [int(n) for n in conn.execute(query).scalars()]


def part_totals(conn: Connection, upload_ids: Sequence[str]) -> dict[str, tuple[int, int]]:
    """``{upload_id: (parts received, bytes received)}``."""
    if not upload_ids:
        return {}
    query = (
        sa.select(P.upload_id, sa.func.count(), sa.func.coalesce(sa.func.sum(P.size_bytes), 0))
        .where(P.upload_id.in_(upload_ids))
        .group_by(P.upload_id)
    )
    return {r[0]: (int(r[1]), int(r[2])) for r in conn.execute(query)}


def save_part(
    conn: Connection,
    upload_id: str,
    part_number: int,
    etag: str,
    size: int,
    now: int,
    sha256: str | None = None,
) -> None:
    """Record a part (a part sent again with other bytes takes the new tag and size). ``sha256``,
    when given, becomes the part's reported checksum; else the recorded one stays (it names the
    bytes the part should hold, whichever were sent)."""
    values = {"etag": etag, "size_bytes": size, "received_at": now}
    checks = {} if sha256 is None else {"sha256": sha256}
    key = {"upload_id": upload_id, "part_number": part_number}
    if not inserted(conn, upload_parts, {**key, **values, **checks}):
        this = (P.upload_id == upload_id, P.part_number == part_number)
        conn.execute(upload_parts.update().where(*this, P.etag != etag).values(**values))
        if checks:
            conn.execute(upload_parts.update().where(*this).values(**checks))


def drop_parts(conn: Connection, upload_id: str, keep: Sequence[int] | None = None) -> None:
    """Forget the upload's parts (all, or all but ``keep``)."""
    query = upload_parts.delete().where(P.upload_id == upload_id)
    if keep is not None:
        query = query.where(P.part_number.not_in(list(keep)))
    conn.execute(query)


def update(
    conn: Connection, upload_id: str, now: int, *, when: Sequence[str] | None = None, **values: Any
) -> bool:
    """Change an upload (only while its status is one of ``when``); whether it changed."""
    query = uploads.update().where(U.upload_id == upload_id)
    if when is not None:
        query = query.where(U.status.in_(list(when)))
    return conn.execute(query.values(updated_at=now, **values)).rowcount == 1


def claim(conn: Connection, upload_id: str, status: str, holder: str, now: int, until: int) -> bool:
    """Take the ``status`` claim of an upload when nobody holds it or its holder's lease ran out."""
    query = (
        uploads.update()
        .where(U.upload_id == upload_id, U.status == status)
        .where(sa.or_(U.claim_until.is_(None), U.claim_until < now))
        .values(claimed_by=holder, claim_until=until, attempts=U.attempts + 1, updated_at=now)
    )
    return conn.execute(query).rowcount == 1


def release(conn: Connection, upload_id: str, holder: str, now: int, **values: Any) -> bool:
    """Finish the work of a claim held by ``holder`` (False: it was taken over or aborted)."""
    query = (
        uploads.update()
        .where(U.upload_id == upload_id, U.claimed_by == holder, U.status.in_(("processing", "assembling")))
        .values(claimed_by=None, claim_until=None, updated_at=now, **values)
    )
    return conn.execute(query).rowcount == 1


def claimable(conn: Connection, status: str, now: int, limit: int) -> list[str]:
    """Uploads in ``status`` free to claim (never claimed, or their claim ran out), oldest first."""
    query = (
        sa.select(U.upload_id)
        .where(U.status == status, sa.or_(U.claim_until.is_(None), U.claim_until < now))
        .order_by(U.updated_at, U.upload_id)
        .limit(limit)
    )
    return [str(u) for u in conn.execute(query).scalars()]


def abandoned(conn: Connection, now: int, limit: int) -> list[Row[Any]]:
    """Uploads still ``uploading`` whose lease ran out."""
    query = sa.select(uploads).where(U.status == "uploading", U.lease_until < now).limit(limit)
    return list(conn.execute(query).all())


def stale_assembling(conn: Connection, now: int, limit: int) -> list[Row[Any]]:
    """Uploads whose complete died while assembling (its claim ran out)."""
    query = sa.select(uploads).where(U.status == "assembling", U.claim_until < now).limit(limit)
    return list(conn.execute(query).all())


def processed(conn: Connection, leader_id: str, upload_id: str) -> Row[Any] | None:
    query = sa.select(uploads).where(
        U.upload_id == upload_id, U.leader_id == leader_id, U.status == "processed"
    )
    return conn.execute(query).first()


def cleanup_pending(conn: Connection, limit: int) -> list[str]:
    """Aborted uploads whose store cleanup has not finished."""
    query = sa.select(U.upload_id).where(U.status == "aborted", U.claimed_by.like("cleanup%")).limit(limit)
    return [str(u) for u in conn.execute(query).scalars()]


def failed_before(conn: Connection, before: int, limit: int) -> list[str]:
    """Failed uploads nobody touched since ``before`` (their file is past its retention)."""
    query = sa.select(U.upload_id).where(U.status == "failed", U.updated_at < before).limit(limit)
    return [str(u) for u in conn.execute(query).scalars()]
