"""Schema migrations through Alembic, applied at start-up (and by ``svc admin migrate``).

The revisions in ``versions/`` are frozen once released: each writes its DDL out in full, never from
today's ``sa.Table`` objects, so a column added later cannot break an older database or a fresh
install. :func:`migrate` upgrades to head inside one write transaction; start-ups racing each other
are serialised (``BEGIN IMMEDIATE`` on SQLite, an advisory transaction lock on PostgreSQL), so every
revision is applied exactly once. A database made by the pre-Alembic migrator (a ``schema_migrations``
table holding versions 1-4, the same schema as the baseline) is stamped at the baseline first.

Example:
    >>> from svc_api.core.store import Store
    >>> store = Store("sqlite:///:memory:")
    >>> migrate(store)[0] == BASELINE and migrate(Store("sqlite://"))[-1] == head()
    True
    >>> migrate(store), current_revision(store) == head()
    ([], True)
"""

from __future__ import annotations

from pathlib import Path

import sqlalchemy as sa
from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy.engine import Connection

from svc_api.core.store import Store

UNMODELLED = ("edu_products_fts", "ix_edu_products_search")
"""Schema objects the revisions make by hand, with no ``sa.Table`` beside them: the catalog's
full-text index (an SQLite FTS5 table and its shadow tables; a PostgreSQL expression index)."""


def include_object(obj: object, name: str | None, type_: str, reflected: bool, compare_to: object) -> bool:
    """Alembic's comparison hook: leave the :data:`UNMODELLED` objects out.

    Example:
        >>> include_object(None, "edu_products_fts_data", "table", True, None)
        False
    """
    return not (reflected and compare_to is None and (name or "").startswith(UNMODELLED))


BASELINE = "0001"
"""The revision of the schema as it stood when migrations moved to Alembic."""
_LOCK_ID = 7_215_400_606  # arbitrary, constant: the advisory lock of svc migrations
_LEGACY_VERSIONS = {1, 2, 3, 4}


def config(connection: Connection | None = None) -> Config:
    """The Alembic configuration of this package (``connection`` is where revisions run).

    Example:
        >>> config().get_main_option("script_location").endswith("migrations")
        True
    """
    cfg = Config()
    cfg.set_main_option("script_location", str(Path(__file__).parent))
    cfg.attributes["connection"] = connection
    return cfg


def head() -> str:
    """The newest revision.

    Example:
        >>> head() >= BASELINE
        True
    """
    heads = ScriptDirectory.from_config(config()).get_heads()
    if len(heads) != 1:
        raise RuntimeError(f"the migrations must have one head, found {heads}")
    return heads[0]


def migrate(store: Store, target: str = "head") -> list[str]:
    """Upgrade the database to ``target``; return the revisions applied now, oldest first.

    Example:
        >>> migrate(Store("sqlite:///:memory:"), BASELINE)
        ['0001']
    """
    with store.write() as conn:
        if conn.dialect.name == "postgresql":
            conn.execute(sa.text("SELECT pg_advisory_xact_lock(:id)"), {"id": _LOCK_ID})
        before = _revision(conn)
        if before is None and _is_legacy(conn):
            command.stamp(config(conn), BASELINE)
            before = BASELINE
        command.upgrade(config(conn), target)
        return _applied_between(before, _revision(conn))


def current_revision(store: Store) -> str | None:
    """The revision the database is at (None before the first :func:`migrate`).

    Example:
        >>> current_revision(Store("sqlite:///:memory:")) is None
        True
    """
    with store.read() as conn:
        return _revision(conn)


def _revision(conn: Connection) -> str | None:
    return MigrationContext.configure(conn).get_current_revision()


def _is_legacy(conn: Connection) -> bool:
    if not sa.inspect(conn).has_table("schema_migrations"):
        return False
    versions = set(conn.execute(sa.text("SELECT version FROM schema_migrations")).scalars())
    if versions != _LEGACY_VERSIONS:
        raise RuntimeError(f"unknown pre-Alembic schema versions {sorted(versions)}; expected 1-4")
    return True


def _applied_between(before: str | None, after: str | None) -> list[str]:
    if after is None or after == before:
        return []
    scripts = ScriptDirectory.from_config(config())
    chain = [s.revision for s in scripts.iterate_revisions(after, before or "base")]
    return list(reversed(chain))


__all__ = ["BASELINE", "config", "current_revision", "head", "migrate"]
