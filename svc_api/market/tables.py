"""Table of the market domain: each user's favorite coins.

Example:
    >>> sorted(t for t in metadata.tables if t.startswith("favorite"))
    ['favorite_coins']
"""

from __future__ import annotations

import sqlalchemy as sa

from svc_api.core.tables import metadata

favorite_coins = sa.Table(
    "favorite_coins",
    metadata,
    sa.Column("svc_id", sa.String(6), sa.ForeignKey("accounts.svc_id"), primary_key=True),
    sa.Column("symbol", sa.String(32), primary_key=True),
    sa.Column("created_at", sa.BigInteger, nullable=False),
)

TABLES = (favorite_coins,)
