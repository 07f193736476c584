"""Alembic migrations: an empty database upgrades from base to head and matches the tables in code,
a database written at the baseline (or by the pre-Alembic migrator) keeps every row, and racing
start-ups apply each revision exactly once. Every test runs on SQLite and PostgreSQL."""

from __future__ import annotations

import threading

import sqlalchemy as sa
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext

from svc_api.core.store import Store
from svc_api.migrations import BASELINE, current_revision, head, include_object, migrate
from svc_api.schema import load_all


def _differences(store: Store) -> list[object]:
    with store.read() as conn:
        context = MigrationContext.configure(conn, opts={"include_object": include_object})
        return list(compare_metadata(context, load_all()))


def test_base_to_head_matches_the_tables_in_code(blank_database_url: str) -> None:
    store = Store(blank_database_url)
    assert current_revision(store) is None
    assert migrate(store)[-1] == head()
    assert migrate(store) == []
    assert current_revision(store) == head()
    assert _differences(store) == []
    with store.read() as conn:
        names = set(sa.inspect(conn).get_table_names())
    assert set(load_all().tables) <= names
    store.dispose()


def _seed(conn: sa.Connection) -> None:
    conn.execute(
        sa.text(
            "INSERT INTO accounts (svc_id, email, password_hash, password_salt, referral_code, created_at,"
            " credits)"
            " VALUES ('AB12CD', 'a@example.com', 'h', 's', 'REF123', 1700000000, 50000)"
        )
    )
    conn.execute(
        sa.text(
            "INSERT INTO credit_transactions (transaction_id, svc_id, seq, type, action, amount,"
            " balance_after, description, created_at)"
            " VALUES ('AB12CD-1', 'AB12CD', 1, 'deposit', 'deposit', 50000, 50000, 'welcome', 1700000000)"
        )
    )


def _rows(store: Store) -> tuple[list[tuple[object, ...]], list[tuple[object, ...]]]:
    with store.read() as conn:
        accounts = conn.execute(sa.text("SELECT svc_id, email, credits FROM accounts")).all()
        ledger = conn.execute(
            sa.text("SELECT transaction_id, amount, balance_after FROM credit_transactions")
        ).all()
    return [tuple(r) for r in accounts], [tuple(r) for r in ledger]


def test_a_database_written_at_baseline_keeps_its_rows(blank_database_url: str) -> None:
    store = Store(blank_database_url)
    assert migrate(store, BASELINE) == [BASELINE]
    with store.write() as conn:
        _seed(conn)
    before = _rows(store)
    migrate(store)
    assert current_revision(store) == head()
    assert _rows(store) == before == ([("AB12CD", "a@example.com", 50000)], [("AB12CD-1", 50000, 50000)])
    assert _differences(store) == []
    store.dispose()


def test_a_pre_alembic_database_is_stamped_at_baseline_and_keeps_its_rows(blank_database_url: str) -> None:
    store = Store(blank_database_url)
    migrate(store, BASELINE)
    with store.write() as conn:
        _seed(conn)
        # What the old migrator left: its own version table, and no alembic_version.
        conn.execute(sa.text("DROP TABLE alembic_version"))
        legacy = "CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name VARCHAR(200))"
        conn.execute(sa.text(legacy))
        for version in (1, 2, 3, 4):
            conn.execute(sa.text("INSERT INTO schema_migrations VALUES (:v, 'old')"), {"v": version})
    assert current_revision(store) is None
    migrate(store)
    assert current_revision(store) == head()
    assert _rows(store)[0] == [("AB12CD", "a@example.com", 50000)]
    store.dispose()


def test_concurrent_startups_apply_each_revision_exactly_once(blank_database_url: str) -> None:
    stores = [Store(blank_database_url) for _ in range(6)]
    barrier = threading.Barrier(len(stores))
    results: list[list[str]] = []
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
    applied = [r for r in results if r]
    assert len(applied) == 1 and applied[0][-1] == head()
    assert sorted(map(len, results))[:5] == [0, 0, 0, 0, 0]
    for s in stores:
        s.dispose()
