"""The app changelog, kept in the store and changed by operator commands (``svc admin changelog``).

Three parts: the version fields of the client app (one row: ``current_version``, ``latest_build``,
``min_supported_version``), the released versions with their dates, and the entries (a version, a
title, a date or None for an uncategorized note of the release, and items). :func:`changelog` is the
public reply of ``/tradingdata?request_type=changelog``; :func:`show` is the operator's view, with
the entry ids. Importing files and the bundled sample live in :mod:`svc_api.platform.changelog_import`.

Example:
    >>> empty = changelog(store, limit=50)
    >>> empty["current_version"], empty["latest_build"], empty["released"], empty["entries"]
    (None, None, [], [])
    >>> _ = release(store, "1.0.0", "2026-08-15")
    >>> add_entry(store, "1.0.0", title="First release", items=["Backtests."])["date"]
    '2026-08-15'
"""

from __future__ import annotations

import datetime as dt
import json
import re
import secrets
from collections.abc import Sequence
from typing import Any

from sqlalchemy.engine import Connection

from svc_api.core.errors import Invalid, NotFound
from svc_api.core.store import Store
from svc_api.platform import queries

_VERSION = re.compile(r"^\d{1,6}(\.\d{1,6}){0,3}$")
_STORED_VERSION = re.compile(r"^(0|[1-9]\d{0,5})(\.(0|[1-9]\d{0,5})){1,3}$")
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
MAX_TITLE = 200
MAX_ITEM = 1000
MAX_ITEMS = 100


# ---- validation ------------------------------------------------------------------------------------


def version_key(version: str) -> tuple[int, ...]:
    """A sortable key of a dotted version (1 to 4 parts of at most 6 digits); malformed is a 400.

    Example:
        >>> version_key("1.10.0") > version_key("1.9.3")
        True
        >>> version_key("v1")
        Traceback (most recent call last):
        ...
        svc_api.core.errors.Invalid: version must look like 1.2.3, got 'v1'
    """
    if not isinstance(version, str) or not _VERSION.match(version):
        raise Invalid(f"version must look like 1.2.3, got {version!r}")
    return tuple(int(part) for part in version.split("."))


def version_sort(version: str) -> str:
    """The stored sort key of a version: four parts, each zero-padded to six digits.

    Example:
        >>> version_sort("1.10") > version_sort("1.9.3")
        True
        >>> version_sort("1.2.0")
        '000001.000002.000000.000000'
    """
    key = version_key(version)
    return ".".join(f"{part:06d}" for part in key + (0,) * (4 - len(key)))


def valid_version(value: object, name: str = "version") -> str:
    """A version to store: 2 to 4 dotted numbers without leading zeros (``1.3.0``).

    Example:
        >>> valid_version("1.3.0")
        '1.3.0'
        >>> valid_version("1.03", "current_version")
        Traceback (most recent call last):
        ...
        svc_api.core.errors.Invalid: current_version must be a dotted version such as 1.3.0, got '1.03'
    """
    if not isinstance(value, str) or not _STORED_VERSION.match(value):
        raise Invalid(f"{name} must be a dotted version such as 1.3.0, got {value!r}")
    return value


def valid_date(value: object, name: str = "date") -> str:
    """A calendar date written ``YYYY-MM-DD``.

    Example:
        >>> valid_date("2026-11-22")
        '2026-11-22'
        >>> valid_date("2026-02-30")
        Traceback (most recent call last):
        ...
        svc_api.core.errors.Invalid: date must be a date YYYY-MM-DD, got '2026-02-30'
    """
    try:
        if isinstance(value, str) and _DATE.match(value):
            dt.date.fromisoformat(value)
            return value
    except ValueError:
        pass
    raise Invalid(f"{name} must be a date YYYY-MM-DD, got {value!r}")


def valid_build(value: object, name: str = "latest_build") -> int:
    """A build number: an integer >= 0 (digits in a string are read as one).

    Example:
        >>> valid_build("130"), valid_build(0)
        (130, 0)
        >>> valid_build(-1)
        Traceback (most recent call last):
        ...
        svc_api.core.errors.Invalid: latest_build must be an integer >= 0, got -1
    """
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value.strip())
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 2**63:
        raise Invalid(f"{name} must be an integer >= 0, got {value!r}")
    return value


def valid_entry(title: object, items: object, name: str = "entry") -> tuple[str, list[str]]:
    """The title (1-200 characters) and items (1-100 non-empty strings of at most 1000) of an entry.

    Example:
        >>> valid_entry(" Alerts ", ["Push alerts."])
        ('Alerts', ['Push alerts.'])
        >>> valid_entry("Alerts", [])
        Traceback (most recent call last):
        ...
        svc_api.core.errors.Invalid: entry items must be 1 to 100 strings
    """
    if not isinstance(title, str) or not 0 < len(title.strip()) <= MAX_TITLE:
        raise Invalid(f"{name} title must be 1 to {MAX_TITLE} characters, got {title!r}")
    if not isinstance(items, list | tuple) or not 0 < len(items) <= MAX_ITEMS:
        raise Invalid(f"{name} items must be 1 to {MAX_ITEMS} strings")
    for item in items:
        if not isinstance(item, str) or not 0 < len(item.strip()) <= MAX_ITEM:
            raise Invalid(f"{name} items must be non-empty strings of at most {MAX_ITEM} characters")
    return title.strip(), [item.strip() for item in items]


# ---- reading ---------------------------------------------------------------------------------------


def changelog(store: Store, *, limit: int, min_version: str | None = None) -> dict[str, Any]:
    """The Changelog resource: the version fields, the released versions and the entries newest
    first, at most ``limit``, of ``min_version`` or later (a malformed one is a 400).

    Example:
        >>> for v in ("1.9.0", "1.10.0"):
        ...     _ = add_entry(store, v, title=f"In {v}", items=["x"], uncategorized=True)
        >>> [e["version"] for e in changelog(store, limit=5, min_version="1.10")["entries"]]
        ['1.10.0']
    """
    min_sort = None if min_version is None else version_sort(min_version)
    with store.read() as conn:
        return _reply(conn, limit=limit, min_sort=min_sort, ids=False)


def show(store: Store) -> dict[str, Any]:
    """The whole changelog as operators see it: every entry, each with its ``entry_id``.

    Example:
        >>> added = add_entry(store, "1.0.0", title="Hi", items=["x"], date="2026-08-15")
        >>> show(store)["entries"][0]["entry_id"] == added["entry_id"]
        True
    """
    with store.read() as conn:
        return _reply(conn, limit=None, min_sort=None, ids=True)


def _reply(conn: Connection, *, limit: int | None, min_sort: str | None, ids: bool) -> dict[str, Any]:
    row = queries.versions(conn)
    fields = dict(row._mapping) if row is not None else dict.fromkeys(queries.VERSION_FIELDS)
    return {
        **fields,
        "released": [{"version": r.version, "date": r.date} for r in queries.releases(conn)],
        "entries": [_entry(e, ids) for e in queries.entries(conn, limit=limit, min_sort=min_sort)],
    }


def _entry(row: Any, ids: bool) -> dict[str, Any]:
    entry = {"version": row.version, "title": row.title, "date": row.date, "items": json.loads(row.items)}
    return {"entry_id": row.entry_id, **entry} if ids else entry


# ---- operator changes ------------------------------------------------------------------------------


def set_versions(
    store: Store,
    *,
    current: str | None = None,
    latest_build: int | str | None = None,
    min_supported: str | None = None,
) -> dict[str, Any]:
    """Set any of the version fields (the others are kept); returns all three.

    Example:
        >>> set_versions(store, current="1.3.0", latest_build="130")
        {'current_version': '1.3.0', 'latest_build': 130, 'min_supported_version': None}
    """
    values: dict[str, Any] = {}
    if current is not None:
        values["current_version"] = valid_version(current, "current_version")
    if latest_build is not None:
        values["latest_build"] = valid_build(latest_build)
    if min_supported is not None:
        values["min_supported_version"] = valid_version(min_supported, "min_supported_version")
    if not values:
        raise Invalid(
            "nothing to set: give the current version, the latest build or the minimum supported version"
        )
    with store.write() as conn:
        queries.set_versions(conn, values)
        return dict(queries.versions(conn)._mapping)  # type: ignore[union-attr]


def release(store: Store, version: str, date: str) -> dict[str, str]:
    """Record ``version`` as released on ``date`` (a second call changes the date).

    Example:
        >>> release(store, "1.3.0", "2026-12-01")
        {'version': '1.3.0', 'date': '2026-12-01'}
    """
    version, date = valid_version(version), valid_date(date)
    with store.write() as conn:
        queries.set_release(conn, version, version_sort(version), date)
    return {"version": version, "date": date}


def add_entry(
    store: Store,
    version: str,
    *,
    title: str,
    items: Sequence[str],
    date: str | None = None,
    uncategorized: bool = False,
) -> dict[str, Any]:
    """Add an entry to ``version``; returns it with its new ``entry_id``. Its date is ``date``, None
    when ``uncategorized``, else the date ``version`` was released (an error when it was not).

    Example:
        >>> entry = add_entry(store, "1.3.0", title="Notes", items=["Faster."], uncategorized=True)
        >>> entry["entry_id"].startswith("chl_"), entry["date"]
        (True, None)
    """
    version = valid_version(version)
    title, items = valid_entry(title, list(items))
    if date is not None and uncategorized:
        raise Invalid("an entry has a date or is uncategorized, not both")
    date = valid_date(date) if date is not None else None
    with store.write() as conn:
        if date is None and not uncategorized:
            date = queries.release_date(conn, version)
            if date is None:
                raise Invalid(f"{version} is not released: give the entry a date or make it uncategorized")
        return insert_entry(conn, version, title, items, date)


def insert_entry(
    conn: Connection, version: str, title: str, items: list[str], date: str | None
) -> dict[str, Any]:
    """Write a new, already validated entry after every other one; returns it with its id."""
    entry_id = f"chl_{secrets.token_hex(6)}"
    queries.insert_entry(
        conn,
        {
            "entry_id": entry_id,
            "version": version,
            "version_sort": version_sort(version),
            "title": title,
            "date": date,
            "items": json.dumps(items),
            "position": queries.next_position(conn),
        },
    )
    return {"entry_id": entry_id, "version": version, "title": title, "date": date, "items": items}


def remove_entry(store: Store, entry_id: str) -> dict[str, str]:
    """Delete one entry (an unknown id is a 404).

    Example:
        >>> remove_entry(store, "chl_nope")
        Traceback (most recent call last):
        ...
        svc_api.core.errors.NotFound: no changelog entry chl_nope
    """
    with store.write() as conn:
        if not queries.delete_entry(conn, entry_id):
            raise NotFound(f"no changelog entry {entry_id}")
    return {"removed": entry_id}
