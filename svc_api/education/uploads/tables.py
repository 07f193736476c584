"""Tables of uploads: multipart transfers of instructors' media and the parts the store holds.
``education/tables.py`` lists them with every other subdomain's.

Example:
    >>> sorted(c.name for c in upload_parts.c)[:2]
    ['etag', 'part_number']
"""

from __future__ import annotations

import sqlalchemy as sa

from svc_api.core.tables import metadata

_ACCOUNT = "accounts.svc_id"

uploads = sa.Table(
    "edu_uploads",
    metadata,
    sa.Column("upload_id", sa.String(24), primary_key=True),
    sa.Column("leader_id", sa.String(6), sa.ForeignKey(_ACCOUNT), nullable=False),
    sa.Column("kind", sa.String(8), nullable=False),
    sa.Column("filename", sa.String(255), nullable=False),
    sa.Column("content_type", sa.String(100), nullable=False),
    sa.Column("size_bytes", sa.BigInteger, nullable=False),
    sa.Column("sha256", sa.String(64), nullable=False),
    sa.Column("part_size", sa.BigInteger, nullable=False),
    sa.Column("part_count", sa.Integer, nullable=False),
    sa.Column("object_key", sa.String(300), nullable=False),
    sa.Column("store_upload_id", sa.String(1024), nullable=False),
    sa.Column("status", sa.String(16), nullable=False),
    sa.Column("lease_until", sa.BigInteger, nullable=False),
    sa.Column("claimed_by", sa.String(80), nullable=True),
    sa.Column("claim_until", sa.BigInteger, nullable=True),
    sa.Column("attempts", sa.Integer, nullable=False, server_default="0"),
    # completes that found parts disagreeing with their reported SHA-256 (bounded re-sends)
    sa.Column("part_failures", sa.Integer, nullable=False, server_default="0"),
    sa.Column("media", sa.JSON, nullable=True),
    sa.Column("error_code", sa.String(40), nullable=True),
    sa.Column("error_message", sa.String(300), nullable=True),
    sa.Column("retryable", sa.Boolean, nullable=True),
    sa.Column("created_at", sa.BigInteger, nullable=False),
    sa.Column("updated_at", sa.BigInteger, nullable=False),
    sa.Index("ix_edu_uploads_leader", "leader_id", "created_at", "upload_id"),
    sa.Index("ix_edu_uploads_status", "status", "lease_until"),
)

upload_parts = sa.Table(
    "edu_upload_parts",
    metadata,
    sa.Column("upload_id", sa.String(24), sa.ForeignKey("edu_uploads.upload_id"), primary_key=True),
    sa.Column("part_number", sa.Integer, primary_key=True, autoincrement=False),
    sa.Column("etag", sa.String(80), nullable=False),
    sa.Column("size_bytes", sa.BigInteger, nullable=False),
    # the SHA-256 the client reported for the part's bytes (optional): complete finds corrupt parts
    sa.Column("sha256", sa.String(64), nullable=True),
    sa.Column("received_at", sa.BigInteger, nullable=False),
)
