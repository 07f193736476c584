"""The one SQLAlchemy ``MetaData`` every domain's tables live on, and the tables of ``core`` itself.

Each domain declares its tables in its own ``tables.py`` on :data:`metadata`; the schema is created
and changed by the Alembic revisions of :mod:`svc_api.migrations`, never by ``create_all``.
:func:`svc_api.schema.load_all` imports every domain's tables, for migrations and tests.

Example:
    >>> "idempotency_keys" in metadata.tables
    True
"""

from __future__ import annotations

import sqlalchemy as sa

metadata = sa.MetaData()

idempotency_keys = sa.Table(
    "idempotency_keys",
    metadata,
    sa.Column("principal", sa.String(64), primary_key=True),
    sa.Column("key", sa.String(128), primary_key=True),
    sa.Column("fingerprint", sa.String(64), nullable=False),
    sa.Column("state", sa.String(16), nullable=False),
    sa.Column("status_code", sa.Integer, nullable=True),
    sa.Column("content_type", sa.String(100), nullable=True),
    sa.Column("body", sa.LargeBinary, nullable=True),
    sa.Column("created_at", sa.BigInteger, nullable=False),
    # The process working on an in-flight key (core.liveness.HOLDER) and until when its claim holds
    # unless renewed: a dead holder's key is free at once, an unrenewed one after the lease.
    sa.Column("holder", sa.String(128), nullable=True),
    sa.Column("lease_until", sa.BigInteger, nullable=True),
)

object_deletions = sa.Table(
    "object_deletions",
    metadata,
    # Object-store keys whose store row is already gone: the retention worker deletes the object,
    # then this row (core.objectqueue), so a crash between the two only delays the deletion.
    sa.Column("key", sa.String(1024), primary_key=True),
    sa.Column("queued_at", sa.BigInteger, nullable=False),
)
