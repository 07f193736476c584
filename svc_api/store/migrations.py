"""Versioned schema migrations, applied at start-up.

Each :class:`Migration` has a version, a name and a function that receives a connection inside the
migration transaction. Applied versions are rows of ``schema_migrations``. :func:`migrate` applies
the missing ones in order, in one write transaction; it is idempotent, and start-ups racing each
other are serialised (``BEGIN IMMEDIATE`` on SQLite, an advisory transaction lock on PostgreSQL), so
every version is applied exactly once.

A new table is a new migration (``create_tables("name")``). A change to an existing table is a new
migration with explicit DDL; never edit a migration that has shipped.

Example:
    >>> from svc_api.store.engine import Store
    >>> store = Store("sqlite:///:memory:")
    >>> migrate(store) == sorted(m.version for m in MIGRATIONS)
    True
    >>> migrate(store)
    []
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from svc_api.store import market_tables, tables
from svc_api.store.engine import Store

_LOCK_ID = 7_215_400_606  # arbitrary, constant: the advisory lock of svc migrations

schema_migrations = sa.Table(
    "schema_migrations",
    sa.MetaData(),
    sa.Column("version", sa.Integer, primary_key=True, autoincrement=False),
    sa.Column("name", sa.String(200), nullable=False),
)


@dataclass(frozen=True)
class Migration:
    """One schema step.

    Example:
        >>> Migration(1, "noop", lambda conn: None).name
        'noop'
    """

    version: int
    name: str
    apply: Callable[[Connection], None]


def create_tables(*names: str) -> Callable[[Connection], None]:
    """A migration step creating the named tables of :mod:`svc_api.store.tables` (with their indexes).

    Example:
        >>> step = create_tables("accounts")
        >>> callable(step)
        True
    """

    def apply(conn: Connection) -> None:
        for name in names:
            tables.metadata.tables[name].create(conn)

    return apply


MIGRATIONS: list[Migration] = [
    Migration(
        1,
        "accounts, sessions, logins, api keys, credits ledger, plans, notifications, idempotency",
        create_tables(
            "accounts",
            "notification_settings",
            "sessions",
            "logins",
            "api_keys",
            "credit_transactions",
            "plan_grants",
            "referral_commissions",
            "notifications",
            "platform_notifications",
            "idempotency_keys",
        ),
    ),
    Migration(3, "strategies and their versions", create_tables("strategies", "strategy_versions")),
    Migration(2, "favorite coins, trend signals and their tracking", create_tables(*market_tables.TABLES)),
    Migration(4, "backtest jobs", create_tables("backtest_jobs")),
]


def migrate(store: Store, migrations: list[Migration] | None = None) -> list[int]:
    """Apply the migrations not yet applied; return the versions applied now, in order.

    Example:
        >>> store = Store("sqlite:///:memory:")
        >>> migrate(store, [Migration(1, "t", lambda c: c.execute(sa.text("create table t (x int)")))])
        [1]
    """
    steps = sorted(MIGRATIONS if migrations is None else migrations, key=lambda m: m.version)
    versions = [m.version for m in steps]
    if len(set(versions)) != len(versions):
        raise ValueError(f"duplicate migration versions in {versions}")
    with store.write() as conn:
        if store.dialect == "postgresql":
            conn.execute(sa.text("SELECT pg_advisory_xact_lock(:id)"), {"id": _LOCK_ID})
        schema_migrations.create(conn, checkfirst=True)
        done = set(conn.execute(sa.select(schema_migrations.c.version)).scalars())
        applied = []
        for step in steps:
            if step.version in done:
                continue
            step.apply(conn)
            conn.execute(schema_migrations.insert().values(version=step.version, name=step.name))
            applied.append(step.version)
    return applied


def applied_versions(store: Store) -> list[int]:
    """Versions recorded in ``schema_migrations`` (empty before the first :func:`migrate`).

    Example:
        >>> store = Store("sqlite:///:memory:")
        >>> _ = migrate(store)
        >>> applied_versions(store) == sorted(m.version for m in MIGRATIONS)
        True
    """
    with store.read() as conn:
        if not sa.inspect(conn).has_table("schema_migrations"):
            return []
        return sorted(conn.execute(sa.select(schema_migrations.c.version)).scalars())
