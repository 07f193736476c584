"""Importing a whole changelog (the shape of the bundled ``changelog.json``) and seeding the store
with that sample when it holds no changelog yet.

An import is a merge: the version fields present in the file are set, the released versions are
added or re-dated, and each entry is matched to a stored one by version, title and date: a match
gets the file's items, anything else is added. Nothing is removed, so importing the same file twice
changes nothing the second time. The file is checked whole before anything is written.

Example:
    >>> seed_changelog_if_empty(store), seed_changelog_if_empty(store)
    (True, False)
    >>> import_file(store, CHANGELOG)["entries_unchanged"]
    4
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy.engine import Connection

from svc_api.core.errors import Invalid
from svc_api.core.store import Store
from svc_api.platform import queries
from svc_api.platform.changelog import (
    insert_entry,
    valid_build,
    valid_date,
    valid_entry,
    valid_version,
    version_sort,
)

CHANGELOG = Path(__file__).with_name("changelog.json")
"""The bundled sample changelog, seeded into an empty store at start-up."""
_KEYS = {"current_version", "latest_build", "min_supported_version", "released", "entries"}
_ENTRY_KEYS = {"version", "title", "date", "items", "entry_id"}  # entry_id: ``show`` output re-imports


@dataclass(frozen=True)
class Plan:
    """A checked changelog file: the version fields it sets, its releases and its entries."""

    versions: dict[str, Any]
    released: list[tuple[str, str]]
    entries: list[tuple[str, str, str | None, list[str]]]


def parse_changelog(data: object) -> Plan:
    """Check a changelog document whole (a bad one is an :class:`Invalid` naming the place).

    Example:
        >>> parse_changelog({"latest_build": 7, "released": [{"version": "1.0", "date": "2026-01-02"}]})
        Plan(versions={'latest_build': 7}, released=[('1.0', '2026-01-02')], entries=[])
        >>> parse_changelog({"entries": [{"version": "1.0", "title": "x", "date": "today", "items": ["y"]}]})
        Traceback (most recent call last):
        ...
        svc_api.core.errors.Invalid: entries[0].date must be a date YYYY-MM-DD, got 'today'
    """
    if not isinstance(data, dict):
        raise Invalid("a changelog must be a JSON object")
    unknown = sorted(set(data) - _KEYS)
    if unknown:
        raise Invalid(f"unknown changelog fields: {', '.join(unknown)}")
    versions: dict[str, Any] = {}
    for name in ("current_version", "min_supported_version"):
        if name in data:
            versions[name] = None if data[name] is None else valid_version(data[name], name)
    if "latest_build" in data:
        versions["latest_build"] = None if data["latest_build"] is None else valid_build(data["latest_build"])
    released = [_release(r, f"released[{i}]") for i, r in enumerate(_list(data, "released"))]
    if len({version for version, _ in released}) < len(released):
        raise Invalid("released lists a version twice")
    entries = [_entry(e, f"entries[{i}]") for i, e in enumerate(_list(data, "entries"))]
    seen: dict[tuple[str, str, str | None], int] = {}
    for i, (version, title, date, _) in enumerate(entries):
        first = seen.setdefault((version, title, date), i)
        if first != i:
            raise Invalid(f"entries[{i}] repeats the version, title and date of entries[{first}]")
    return Plan(versions, released, entries)


def _list(data: dict[str, Any], name: str) -> list[Any]:
    value = data.get(name, [])
    if not isinstance(value, list):
        raise Invalid(f"{name} must be a list")
    return value


def _release(value: object, where: str) -> tuple[str, str]:
    if not isinstance(value, dict) or set(value) != {"version", "date"}:
        raise Invalid(f"{where} must be an object with a version and a date")
    return valid_version(value["version"], f"{where}.version"), valid_date(value["date"], f"{where}.date")


def _entry(value: object, where: str) -> tuple[str, str, str | None, list[str]]:
    if not isinstance(value, dict) or not {"version", "title", "items"} <= set(value) <= _ENTRY_KEYS:
        raise Invalid(f"{where} must be an object with a version, a title, a date and items")
    version = valid_version(value["version"], f"{where}.version")
    date = value.get("date")
    date = None if date is None else valid_date(date, f"{where}.date")
    title, items = valid_entry(value["title"], value["items"], where)
    return version, title, date, items


def import_changelog(store: Store, data: object) -> dict[str, Any]:
    """Merge a changelog document into the store (see the module); returns what changed.

    Example:
        >>> doc = {"entries": [{"version": "1.0.0", "title": "Hi", "date": None, "items": ["x"]}]}
        >>> import_changelog(store, doc)["entries_added"], import_changelog(store, doc)["entries_added"]
        (1, 0)
    """
    plan = parse_changelog(data)
    with store.write() as conn:
        return _apply(conn, plan)


def import_file(store: Store, path: str | Path) -> dict[str, Any]:
    """:func:`import_changelog` of a JSON file (unreadable or not JSON is an :class:`Invalid`).

    Example:
        >>> from svc_api.core.store import Store
        >>> import_file(Store("sqlite://"), "/nonexistent.json")
        Traceback (most recent call last):
        ...
        svc_api.core.errors.Invalid: cannot read /nonexistent.json: No such file or directory
    """
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise Invalid(f"cannot read {path}: {exc.strerror or exc}") from None
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise Invalid(f"{path} is not JSON: {exc}") from None
    return import_changelog(store, data)


def seed_changelog_if_empty(store: Store, path: str | Path = CHANGELOG) -> bool:
    """Import ``path`` (the bundled sample by default) when the store holds no changelog at all;
    whether it did. Racing start-ups seed once: the first to write the version row wins.

    Example:
        >>> seed_changelog_if_empty(store, "/nonexistent.json"), seed_changelog_if_empty(store)
        (False, True)
    """
    if not Path(path).is_file():
        return False
    plan = parse_changelog(json.loads(Path(path).read_text(encoding="utf-8")))
    with store.write() as conn:
        if not queries.changelog_is_empty(conn):
            return False
        if not queries.create_versions(conn, dict.fromkeys(queries.VERSION_FIELDS) | plan.versions):
            return False
        _apply(conn, plan)
    return True


def _apply(conn: Connection, plan: Plan) -> dict[str, Any]:
    row = queries.versions(conn)
    stored = dict(row._mapping) if row is not None else {}
    changed_versions = {k: v for k, v in plan.versions.items() if row is None or stored.get(k) != v}
    if changed_versions:
        queries.set_versions(conn, changed_versions)
    releases = 0
    for version, date in plan.released:
        if queries.release_date(conn, version) != date:
            queries.set_release(conn, version, version_sort(version), date)
            releases += 1
    added = updated = 0
    # The file lists entries newest first: the last is added first, so among equals the first is newest.
    for version, title, date, items in reversed(plan.entries):
        found = queries.find_entry(conn, version, title, date)
        if found is None:
            insert_entry(conn, version, title, items, date)
            added += 1
        elif json.loads(found.items) != items:
            queries.set_entry_items(conn, found.entry_id, json.dumps(items))
            updated += 1
    return {
        "versions_changed": sorted(changed_versions),
        "releases_written": releases,
        "entries_added": added,
        "entries_updated": updated,
        "entries_unchanged": len(plan.entries) - added - updated,
    }
