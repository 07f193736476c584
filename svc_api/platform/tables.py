"""Tables of the platform: the changelog (its version fields, released versions and entries).

The version fields live in one row (``singleton`` = 1). Versions are stored with a sortable key
(``version_sort``, each dotted part zero-padded) so the store orders and filters them.

Example:
    >>> sorted(t.name for t in TABLES)
    ['changelog_entries', 'changelog_releases', 'changelog_versions']
"""

from __future__ import annotations

import sqlalchemy as sa

from svc_api.core.tables import metadata

changelog_versions = sa.Table(
    "changelog_versions",
    metadata,
    sa.Column("singleton", sa.Integer, primary_key=True, autoincrement=False),  # always 1
    sa.Column("current_version", sa.String(32), nullable=True),
    sa.Column("latest_build", sa.BigInteger, nullable=True),
    sa.Column("min_supported_version", sa.String(32), nullable=True),
)

changelog_releases = sa.Table(
    "changelog_releases",
    metadata,
    sa.Column("version", sa.String(32), primary_key=True),
    sa.Column("version_sort", sa.String(32), nullable=False),
    sa.Column("date", sa.String(10), nullable=False),  # YYYY-MM-DD
    sa.Index("ix_changelog_releases_sort", "version_sort"),
)

changelog_entries = sa.Table(
    "changelog_entries",
    metadata,
    sa.Column("entry_id", sa.String(40), primary_key=True),
    sa.Column("version", sa.String(32), nullable=False),
    sa.Column("version_sort", sa.String(32), nullable=False),
    sa.Column("title", sa.String(200), nullable=False),
    sa.Column("date", sa.String(10), nullable=True),  # NULL: an uncategorized note of the release
    sa.Column("items", sa.Text, nullable=False),  # JSON array of strings
    sa.Column("position", sa.BigInteger, nullable=False),  # later added, higher: newer among equals
    sa.Index("ix_changelog_entries_order", "version_sort", "date", "position"),
)

TABLES = (changelog_versions, changelog_releases, changelog_entries)
