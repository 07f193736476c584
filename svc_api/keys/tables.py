"""Table of the developer API keys (secrets stored as keyed hashes only).

Example:
    >>> sorted(t.name for t in TABLES)
    ['api_keys']
"""

from __future__ import annotations

import sqlalchemy as sa

from svc_api.core.tables import metadata

api_keys = sa.Table(
    "api_keys",
    metadata,
    sa.Column("api_key", sa.String(48), primary_key=True),
    sa.Column("svc_id", sa.String(6), sa.ForeignKey("accounts.svc_id"), nullable=False, index=True),
    # Equal to svc_id while the key is active, NULL once revoked: the unique constraint is the
    # "one active key per user" rule, enforced by the database even under concurrent requests.
    sa.Column("active_owner", sa.String(6), nullable=True, unique=True),
    sa.Column("secret_hash", sa.String(64), nullable=False),
    sa.Column("label", sa.String(64), nullable=False),
    sa.Column("permissions", sa.String(128), nullable=False),
    sa.Column("created_at", sa.BigInteger, nullable=False),
    sa.Column("revoked_at", sa.BigInteger, nullable=True),
)

TABLES = (api_keys,)
