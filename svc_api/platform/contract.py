"""The request and reply models of the public ``/tradingdata`` types ``platform_notifications`` and
``changelog``.

Example:
    >>> ChangelogQuery.model_validate({"limit": "500", "min_version": "1.2"}).limit
    200
"""

from __future__ import annotations

import datetime as dt
from typing import Annotated

from pydantic import Field

from svc_api.core.contract import Check, Fields, Shape
from svc_api.core.params import Limit
from svc_api.platform.changelog import version_key


def min_version_of(value: object, name: str = "min_version") -> str | None:
    """The oldest version wanted, as sent (1 to 4 dotted numbers; None when absent); else 400.

    Example:
        >>> min_version_of(None), min_version_of("1.10")
        (None, '1.10')
    """
    if value is None:
        return None
    version_key(value)  # type: ignore[arg-type]  # a non-string is a 400 there
    return str(value)


class PlatformNotificationsQuery(Fields):
    """``platform_notifications``: the latest announcements."""

    limit: Limit(20, 1, 50, clamp=True)


class ChangelogQuery(Fields):
    """``changelog``: the client app's changelog, newest first."""

    limit: Limit(50, 1, 200, clamp=True)
    min_version: Annotated[
        str | None,
        Check(
            min_version_of,
            {
                "type": "string",
                "pattern": "^[0-9]{1,6}(\\.[0-9]{1,6}){0,3}$",
                "description": "Only entries of this version or later.",
            },
        ),
    ]


class PlatformNotification(Shape):
    """One announcement."""

    title: str
    body: str
    type: str
    timestamp: int
    """Unix seconds."""


class PlatformNotifications(Shape):
    """The latest announcements, newest first."""

    notifications: list[PlatformNotification]
    count: Annotated[int, Field(ge=0)]


class ChangelogRelease(Shape):
    """A released version."""

    version: str
    date: dt.date | None


class ChangelogEntry(Shape):
    """One changelog entry."""

    version: str | None = None
    """The app version the entry belongs to."""
    title: str
    date: str | None
    """null marks an uncategorized note of the latest release."""
    items: list[str]


class Changelog(Shape):
    """The client app's changelog. With no changelog the version fields are null and both lists are
    empty. Entries come newest first: by version, then a version's uncategorized note (null
    ``date``), then by date."""

    current_version: str | None
    latest_build: Annotated[int | None, Field(ge=0)]
    min_supported_version: str | None
    released: list[ChangelogRelease]
    """Released versions, newest first."""
    entries: list[ChangelogEntry]
