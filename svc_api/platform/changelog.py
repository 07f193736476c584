"""The app changelog, read from ``changelog.json`` shipped beside this module.

Example:
    >>> log = changelog(limit=50)
    >>> log["current_version"], log["entries"][0]["date"] is None
    ('1.2.0', True)
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from pathlib import Path
from typing import Any

from svc_api.core.errors import Invalid

CHANGELOG = Path(__file__).with_name("changelog.json")
_VERSION = re.compile(r"^\d+(\.\d+){0,3}$")
_EMPTY = {
    "current_version": None,
    "latest_build": None,
    "min_supported_version": None,
    "released": [],
    "entries": [],
}


def version_key(version: str) -> tuple[int, ...]:
    """A sortable key of a dotted version; malformed is a 400.

    Example:
        >>> version_key("1.10.0") > version_key("1.9.3")
        True
    """
    if not isinstance(version, str) or not _VERSION.match(version):
        raise Invalid(f"version must look like 1.2.3, got {version!r}")
    return tuple(int(part) for part in version.split("."))


@lru_cache(maxsize=4)
def _load(path: Path) -> dict[str, Any]:
    if not path.exists():
        return dict(_EMPTY)
    return json.loads(path.read_text())


def changelog(*, limit: int, min_version: str | None = None, path: Path = CHANGELOG) -> dict[str, Any]:
    """The Changelog resource: newest entries first, at most ``limit``, those of ``min_version`` or later.

    Example:
        >>> [e["version"] for e in changelog(limit=50, min_version="1.1.0")["entries"]]
        ['1.2.0', '1.2.0', '1.1.0']
        >>> changelog(limit=5, path=Path("/nonexistent.json"))["entries"]
        []
    """
    data = _load(path)
    entries = data.get("entries", [])
    if min_version is not None:
        floor = version_key(min_version)
        entries = [e for e in entries if version_key(e["version"]) >= floor]
    return {**data, "entries": entries[:limit]}
