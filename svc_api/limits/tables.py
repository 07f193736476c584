"""Rate-limit overrides: the per-minute limit an operator set for one account, for all its requests
(``endpoint`` ``default``) or for one costly kind of request (an endpoint group of
:data:`svc_api.core.ratelimit.ENDPOINT_LIMITS`).

Example:
    >>> [c.name for c in rate_limit_overrides.primary_key.columns]
    ['svc_id', 'endpoint']
"""

from __future__ import annotations

import sqlalchemy as sa

from svc_api.core.tables import metadata

rate_limit_overrides = sa.Table(
    "rate_limit_overrides",
    metadata,
    sa.Column("svc_id", sa.String(6), sa.ForeignKey("accounts.svc_id"), primary_key=True),
    sa.Column("endpoint", sa.String(32), primary_key=True),
    sa.Column("per_minute", sa.Integer, nullable=False),
    sa.Column("reason", sa.String(500), nullable=False),
    sa.Column("set_at", sa.BigInteger, nullable=False),
    sa.CheckConstraint("per_minute > 0", name="ck_rate_limit_overrides_positive"),
)

TABLES = (rate_limit_overrides,)
