"""Every SQL statement of the platform domain: the changelog's version fields, releases and entries.

Example:
    >>> with store.read() as conn:
    ...     changelog_is_empty(conn), versions(conn), releases(conn), entries(conn, limit=5)
    (True, None, [], [])
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Row

from svc_api.core.upsert import inserted
from svc_api.platform.tables import changelog_entries, changelog_releases, changelog_versions

_v, _r, _e = changelog_versions.c, changelog_releases.c, changelog_entries.c
VERSION_FIELDS = ("current_version", "latest_build", "min_supported_version")


def changelog_is_empty(conn: Connection) -> bool:
    """True when the store holds no changelog at all (no version row, release or entry)."""
    return not any(
        conn.execute(sa.select(sa.literal(1)).select_from(table).limit(1)).first()
        for table in (changelog_versions, changelog_releases, changelog_entries)
    )


# ---- the version fields ---------------------------------------------------------------------------


def versions(conn: Connection) -> Row[Any] | None:
    """The one row of version fields, if written."""
    return conn.execute(sa.select(*(_v[name] for name in VERSION_FIELDS))).first()


def create_versions(conn: Connection, values: Mapping[str, Any]) -> bool:
    """Write the row of version fields unless it exists; whether this call wrote it."""
    return inserted(conn, changelog_versions, {"singleton": 1, **values})


def set_versions(conn: Connection, values: Mapping[str, Any]) -> None:
    """Change the given version fields (the row is created first when missing)."""
    if not create_versions(conn, values):
        conn.execute(sa.update(changelog_versions).where(_v.singleton == 1).values(**values))


# ---- releases --------------------------------------------------------------------------------------


def releases(conn: Connection) -> list[Row[Any]]:
    """Released versions ``(version, date)``, newest version first."""
    query = sa.select(_r.version, _r.date).order_by(_r.version_sort.desc(), _r.version.desc())
    return list(conn.execute(query))


def release_date(conn: Connection, version: str) -> str | None:
    """The date ``version`` was released, if it was."""
    return conn.execute(sa.select(_r.date).where(_r.version == version)).scalar()


def set_release(conn: Connection, version: str, version_sort: str, date: str) -> None:
    """Record ``version`` as released on ``date`` (replacing an earlier date)."""
    row = {"version": version, "version_sort": version_sort, "date": date}
    if not inserted(conn, changelog_releases, row):
        conn.execute(sa.update(changelog_releases).where(_r.version == version).values(date=date))


# ---- entries ---------------------------------------------------------------------------------------


def entries(conn: Connection, *, limit: int | None, min_sort: str | None = None) -> list[Row[Any]]:
    """Entries newest first: by version, then the uncategorized note (NULL date), then by date, then
    the later added; at most ``limit`` (all when None), of versions sorting at ``min_sort`` or later."""
    query = sa.select(_e.entry_id, _e.version, _e.title, _e.date, _e["items"]).order_by(
        _e.version_sort.desc(),
        sa.case((_e.date.is_(None), 0), else_=1),
        _e.date.desc(),
        _e.position.desc(),
    )
    if min_sort is not None:
        query = query.where(_e.version_sort >= min_sort)
    if limit is not None:
        query = query.limit(limit)
    return list(conn.execute(query))


def find_entry(conn: Connection, version: str, title: str, date: str | None) -> Row[Any] | None:
    """The entry of ``version`` with this title and date (NULL date matched as such), if any."""
    same_date = _e.date.is_(None) if date is None else _e.date == date
    query = sa.select(_e.entry_id, _e["items"]).where(_e.version == version, _e.title == title, same_date)
    return conn.execute(query.order_by(_e.position).limit(1)).first()


def next_position(conn: Connection) -> int:
    """The position of the next entry added: after every existing one."""
    return int(conn.execute(sa.select(sa.func.coalesce(sa.func.max(_e.position), 0))).scalar() or 0) + 1


def insert_entry(conn: Connection, values: Mapping[str, Any]) -> None:
    """A new entry."""
    conn.execute(changelog_entries.insert().values(**values))


def set_entry_items(conn: Connection, entry_id: str, items: str) -> None:
    """Replace the items (JSON text) of an entry."""
    conn.execute(sa.update(changelog_entries).where(_e.entry_id == entry_id).values(items=items))


def delete_entry(conn: Connection, entry_id: str) -> bool:
    """Delete an entry; whether it existed."""
    found = conn.execute(sa.select(_e.entry_id).where(_e.entry_id == entry_id)).first()
    if found is not None:
        conn.execute(sa.delete(changelog_entries).where(_e.entry_id == entry_id))
    return found is not None
