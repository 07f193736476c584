"""The store: SQLite pragmas, write serialisation, rollback, and outage detection (migrations:
test_migrations.py)."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
import sqlalchemy as sa

from svc_api.core.store import Store, StoreUnavailable
from svc_api.migrations import migrate


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


def test_a_read_sees_one_snapshot_while_others_commit(database_url: str) -> None:
    """Two statements of one read transaction agree although a write committed between them."""
    store = Store(database_url)
    with store.write() as conn:
        conn.execute(sa.text("CREATE TABLE snap (x INTEGER)"))
        conn.execute(sa.text("INSERT INTO snap VALUES (1)"))
    with store.read() as conn:
        first = conn.execute(sa.text("SELECT count(*) FROM snap")).scalar()
        writer = threading.Thread(target=_insert_one, args=(store,))
        writer.start()
        writer.join(10)
        second = conn.execute(sa.text("SELECT count(*) FROM snap")).scalar()
    with store.read() as conn:
        after = conn.execute(sa.text("SELECT count(*) FROM snap")).scalar()
    assert (first, second, after) == (1, 1, 2)
    store.dispose()


def _insert_one(store: Store) -> None:
    with store.write() as conn:
        conn.execute(sa.text("INSERT INTO snap VALUES (2)"))
