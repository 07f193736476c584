"""The store: migrations (idempotent, concurrent start-ups), SQLite pragmas, write serialisation,
rollback, and outage detection."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
import sqlalchemy as sa

from svc_api.store import MIGRATIONS, Migration, Store, StoreUnavailable, applied_versions, migrate
from svc_api.store.migrations import schema_migrations

ALL = sorted(m.version for m in MIGRATIONS)
NEXT = ALL[-1] + 1


def test_migrate_applies_each_version_once(database_url: str) -> None:
    store = Store(database_url)
    assert applied_versions(store) == []
    assert migrate(store) == ALL
    assert migrate(store) == []
    assert applied_versions(store) == ALL
    with store.read() as conn:
        names = set(sa.inspect(conn).get_table_names())
    assert {"accounts", "api_keys", "credit_transactions", "sessions", "idempotency_keys"} <= names
    store.dispose()


def test_later_migration_applies_on_top(database_url: str) -> None:
    store = Store(database_url)
    migrate(store)
    extra = Migration(NEXT, "add t2", lambda conn: conn.execute(sa.text("CREATE TABLE t2 (x INTEGER)")))
    assert migrate(store, [*MIGRATIONS, extra]) == [NEXT]
    assert applied_versions(store) == [*ALL, NEXT]
    store.dispose()


def test_failed_migration_leaves_nothing_behind(database_url: str) -> None:
    store = Store(database_url)

    def broken(conn: sa.Connection) -> None:
        conn.execute(sa.text("CREATE TABLE half (x INTEGER)"))
        raise RuntimeError("migration bug")

    with pytest.raises(RuntimeError, match="migration bug"):
        migrate(store, [*MIGRATIONS, Migration(NEXT, "broken", broken)])
    # The whole run is one transaction: no earlier version is recorded either, and no table was left.
    assert applied_versions(store) == []
    with store.read() as conn:
        assert not sa.inspect(conn).has_table("half")
        assert not sa.inspect(conn).has_table("accounts")
    store.dispose()


def test_concurrent_startups_apply_each_migration_exactly_once(database_url: str) -> None:
    stores = [Store(database_url) for _ in range(6)]
    barrier = threading.Barrier(len(stores))
    results: list[list[int]] = []
    errors: list[BaseException] = []

    def start(store: Store) -> None:
        barrier.wait()
        try:
            results.append(migrate(store))
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=start, args=(s,)) for s in stores]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert sorted(results) == [[], [], [], [], [], ALL]
    with stores[0].read() as conn:
        assert conn.execute(sa.select(sa.func.count()).select_from(schema_migrations)).scalar() == len(ALL)
    for s in stores:
        s.dispose()


def test_sqlite_uses_wal_and_foreign_keys(tmp_path: Path) -> None:
    store = Store(f"sqlite:///{tmp_path / 'a.db'}")
    with store.read() as conn:
        assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
        assert conn.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
    migrate(store)
    with pytest.raises(sa.exc.IntegrityError), store.write() as conn:
        conn.exec_driver_sql(
            "INSERT INTO sessions (token_hash, svc_id, created_at, expires_at) VALUES ('h', 'NOPE00', 0, 1)"
        )
    store.dispose()


def test_concurrent_read_modify_write_loses_no_update(database_url: str) -> None:
    """Read-then-write in one write transaction: BEGIN IMMEDIATE (SQLite) / row lock (PostgreSQL)."""
    _bump_from_eight_threads(Store(database_url))


def test_in_memory_sqlite_transactions_take_turns() -> None:
    """One shared connection: concurrent transactions neither collide nor lose an update."""
    _bump_from_eight_threads(Store("sqlite:///:memory:"))


def _bump_from_eight_threads(store: Store) -> None:
    with store.write() as conn:
        conn.execute(sa.text("CREATE TABLE counter (id INTEGER PRIMARY KEY, n INTEGER NOT NULL)"))
        conn.execute(sa.text("INSERT INTO counter VALUES (1, 0)"))
    lock = " FOR UPDATE" if store.dialect == "postgresql" else ""

    def bump() -> None:
        for _ in range(10):
            with store.write() as conn:
                n = conn.execute(sa.text(f"SELECT n FROM counter WHERE id = 1{lock}")).scalar()
                conn.execute(sa.text("UPDATE counter SET n = :n WHERE id = 1"), {"n": n + 1})

    threads = [threading.Thread(target=bump) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    with store.read() as conn:
        assert conn.execute(sa.text("SELECT n FROM counter")).scalar() == 80
    store.dispose()


def test_exception_rolls_back_the_write(database_url: str) -> None:
    store = Store(database_url)
    with store.write() as conn:
        conn.execute(sa.text("CREATE TABLE t (x INTEGER)"))
    with pytest.raises(ValueError), store.write() as conn:
        conn.execute(sa.text("INSERT INTO t VALUES (1)"))
        raise ValueError("abort")
    with store.read() as conn:
        assert conn.execute(sa.text("SELECT count(*) FROM t")).scalar() == 0
    store.dispose()


def test_unreachable_postgres_raises_store_unavailable() -> None:
    store = Store("postgresql+psycopg://postgres@127.0.0.1:1/test", retry_after=7)
    with pytest.raises(StoreUnavailable) as info, store.read():
        pass
    assert info.value.retry_after == 7
    assert store.ping() is False


def test_unopenable_sqlite_raises_store_unavailable(tmp_path: Path) -> None:
    store = Store(f"sqlite:///{tmp_path / 'db' / 'svc.db'}")
    (tmp_path / "db").rmdir()
    (tmp_path / "db").write_text("a file where the directory was")
    with pytest.raises(StoreUnavailable, match="unable to open database file"):
        migrate(store)
