"""The database handle: one SQLAlchemy engine, read and write transactions, outage detection.

SQLite (the default) runs in WAL mode with foreign keys on, and every write transaction starts with
``BEGIN IMMEDIATE``: a plain ``BEGIN`` takes the write lock late and loses updates under concurrency.
PostgreSQL goes through psycopg 3. A database that cannot be reached raises :class:`StoreUnavailable`,
which the HTTP layer turns into a 503; the transaction is rolled back, so nothing is half written.

Example:
    >>> import sqlalchemy as sa
    >>> store = Store("sqlite:///:memory:")
    >>> with store.read() as conn:
    ...     conn.execute(sa.text("select 1")).scalar()
    1
"""

from __future__ import annotations

import contextlib
import logging
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy import event
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.pool import StaticPool

from svc_api.core.errors import Unavailable

logger = logging.getLogger(__name__)
_WRITE = "svc_write"
_AFTER_COMMIT = "svc_after_commit"


def after_commit(conn: Connection, action: Callable[[], None]) -> None:
    """Run ``action`` once the transaction ``conn`` belongs to (a :class:`Store` one) has committed;
    drop it when the transaction rolls back. Announcements (real-time events) go out through this,
    so nobody hears of a row that was never written. The whole transaction decides: an action
    queued inside a SAVEPOINT (``begin_nested``) that rolls back still runs if the outer one commits,
    so announce outside savepoints.

    Example:
        >>> store, heard = Store("sqlite:///:memory:"), []
        >>> with store.write() as conn:
        ...     after_commit(conn, lambda: heard.append("committed"))
        ...     inside = list(heard)
        >>> inside, heard
        ([], ['committed'])
    """
    if not conn.in_transaction():
        action()
        return
    conn.info.setdefault(_AFTER_COMMIT, []).append(action)


@contextmanager
def _announcing(conn: Connection) -> Iterator[Connection]:
    # conn.info outlives the checkout (it is the driver connection's): always emptied here.
    try:
        with conn.begin():
            yield conn
    except BaseException:
        conn.info.pop(_AFTER_COMMIT, None)
        raise
    for action in conn.info.pop(_AFTER_COMMIT, ()):
        try:
            action()
        except Exception:  # the transaction is committed: its caller must not see it as failed
            logger.warning("an after-commit action failed", exc_info=True)


class StoreUnavailable(Unavailable):
    """The database could not be reached or refused the operation for a transient reason (a 503).

    Example:
        >>> StoreUnavailable("connection refused").retry_after
        5
        >>> StoreUnavailable("connection refused").body()
        {'error': 'service_unavailable', 'reason': 'store_unavailable', 'retry_after': 5}
    """

    def __init__(self, detail: str, retry_after: int = 5) -> None:
        super().__init__(None, retry_after=retry_after)
        Exception.__init__(self, detail)


def until_stored(
    action: Callable[[], Any], *, patience: float, stop: threading.Event | None = None, pause: float = 0.5
) -> Any:
    """Run ``action`` and return its result, retrying it while it raises :class:`StoreUnavailable`,
    for up to ``patience`` seconds (or until ``stop`` is set); then its last failure is raised.
    Background work that has done something worth keeping (a computed result, a payment sent) uses
    this to record it once the database is back, instead of leaving it half written.

    Example:
        >>> tries = []
        >>> def flaky():
        ...     tries.append(1)
        ...     if len(tries) < 3:
        ...         raise StoreUnavailable("connection refused")
        ...     return "stored"
        >>> until_stored(flaky, patience=5, pause=0.01), len(tries)
        ('stored', 3)
    """
    deadline = time.monotonic() + patience
    while True:
        try:
            return action()
        except StoreUnavailable:
            left = deadline - time.monotonic()
            if left <= 0 or (stop is not None and stop.is_set()):
                raise
            logger.warning("store unavailable; retrying for %.0f s more", left)
            if stop is not None:
                stop.wait(min(pause, left))
            else:
                time.sleep(min(pause, left))


# Errors that mean "the database is not there or not usable right now", as opposed to a bug or a
# constraint violation. SQLite reports a missing file, a read-only file and a lock timeout this way.
_OUTAGES = (sa.exc.OperationalError, sa.exc.InterfaceError, sa.exc.TimeoutError)


class Store:
    """A database with short read and write transactions.

    Args:
        url: SQLAlchemy URL (``sqlite:///path.db`` or ``postgresql+psycopg://...``).
        retry_after: seconds a client is told to wait when the database is unreachable.

    Example:
        >>> store = Store("sqlite:///:memory:")
        >>> store.dialect
        'sqlite'
    """

    def __init__(self, url: str, *, retry_after: int = 5) -> None:
        self.url = url
        self.retry_after = retry_after
        self.engine = _create_engine(url)
        self.dialect = self.engine.dialect.name
        # An in-memory SQLite database is one shared connection: its transactions must take turns.
        self.single_connection = _is_memory(sa.make_url(url))
        self._turns: contextlib.AbstractContextManager[Any] = (
            threading.RLock() if self.single_connection else contextlib.nullcontext()
        )
        self._local = threading.local()
        self._pinned: Connection | None = None

    @contextmanager
    def read(self) -> Iterator[Connection]:
        """A read transaction that sees one consistent snapshot: SQLite's deferred transaction reads
        one WAL snapshot; PostgreSQL runs it as ``REPEATABLE READ, READ ONLY`` (its default READ
        COMMITTED would let each statement see a different moment). A read opened inside another read
        of the same thread joins it.

        Example:
            >>> with Store("sqlite:///:memory:").read() as conn:
            ...     conn.execute(sa.text("select 2")).scalar()
            2
        """
        outer = getattr(self._local, "read", None)
        if outer is not None:  # a read inside a read of this thread joins it: one snapshot, one BEGIN
            yield outer
            return
        with self._transaction(write=False) as conn:
            self._local.read = conn
            try:
                yield conn
            finally:
                self._local.read = None

    @contextmanager
    def write(self) -> Iterator[Connection]:
        """A write transaction: committed when the block ends, rolled back on any exception.

        Example:
            >>> store = Store("sqlite:///:memory:")
            >>> with store.write() as conn:
            ...     _ = conn.execute(sa.text("create table t (x integer)"))
            >>> with store.read() as conn:
            ...     conn.execute(sa.text("select count(*) from t")).scalar()
            0
        """
        with self._transaction(write=True) as conn:
            yield conn

    def ping(self) -> bool:
        """True when the database answers a trivial query.

        Example:
            >>> Store("sqlite:///:memory:").ping()
            True
        """
        try:
            with self.read() as conn:
                conn.execute(sa.text("select 1"))
        except StoreUnavailable:
            return False
        return True

    def dispose(self) -> None:
        """Close every pooled connection (the next transaction opens a new one).

        Example:
            >>> store = Store("sqlite:///:memory:")
            >>> store.dispose()
        """
        self._unpin()
        self.engine.dispose()

    @contextmanager
    def _transaction(self, *, write: bool) -> Iterator[Connection]:
        if not write and self._pinnable():
            with self._pinned_read() as conn:
                yield conn
            return
        try:
            with self._turns, self.engine.connect() as conn:
                conn.execution_options(**{_WRITE: write})
                if not write and self.dialect == "postgresql":
                    conn.execution_options(isolation_level="REPEATABLE READ", postgresql_readonly=True)
                with _announcing(conn):
                    yield conn
        except _OUTAGES as exc:
            raise StoreUnavailable(_describe(exc), self.retry_after) from exc

    def _pinnable(self) -> bool:
        # The server's event loop runs in the main thread and does its store-only reads there on an
        # SQLite file (see core.dispatch, Operation.inline): one connection kept for them spares a
        # pool checkout and check-in per request.
        return (
            self.dialect == "sqlite"
            and not self.single_connection
            and threading.current_thread() is threading.main_thread()
        )

    @contextmanager
    def _pinned_read(self) -> Iterator[Connection]:
        try:
            if self._pinned is None:
                self._pinned = self.engine.connect()
                self._pinned.execution_options(**{_WRITE: False})
            with _announcing(self._pinned):
                yield self._pinned
        except _OUTAGES as exc:
            self._unpin()
            raise StoreUnavailable(_describe(exc), self.retry_after) from exc

    def _unpin(self) -> None:
        pinned, self._pinned = self._pinned, None
        if pinned is not None:
            with contextlib.suppress(Exception):
                pinned.close()


def _describe(exc: BaseException) -> str:
    return str(getattr(exc, "orig", exc)).splitlines()[0] if str(exc) else type(exc).__name__


def _create_engine(url: str) -> Engine:
    parsed = sa.make_url(url)
    if parsed.get_backend_name() == "sqlite":
        return _sqlite_engine(parsed)
    return sa.create_engine(
        parsed,
        pool_size=10,
        max_overflow=30,
        pool_timeout=10,
        pool_pre_ping=True,
        connect_args={"connect_timeout": 3},
    )


def _is_memory(url: sa.URL) -> bool:
    return url.get_backend_name() == "sqlite" and url.database in (None, "", ":memory:")


def _wal(cursor: Any, patience: float = 30.0) -> None:
    """Put the database in WAL mode. Switching needs a moment of exclusive access, and SQLite answers
    "database is locked" at once, without its busy handler, when connections open together (racing
    start-ups, a pool growing under load): read the mode first, and retry the switch for a while."""
    deadline = time.monotonic() + patience
    while True:
        try:
            if str(cursor.execute("PRAGMA journal_mode").fetchone()[0]).lower() != "wal":
                cursor.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.01)


def _private_files(path: Path) -> None:
    """Make the database file and its -wal and -shm files readable by their owner only (0600): they
    hold password hashes and key digests. chmod only: opening and closing the file here would drop
    every POSIX lock this process holds on it, which SQLite's other connections rely on."""
    for name in (path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")):
        with contextlib.suppress(OSError):
            os.chmod(name, 0o600)


def _sqlite_engine(url: sa.URL) -> Engine:
    memory = _is_memory(url)
    if not memory:
        # A directory that cannot be made shows up as "unable to open database file" on first use,
        # which is reported as an outage like any other.
        with contextlib.suppress(OSError):
            Path(str(url.database)).parent.mkdir(parents=True, exist_ok=True)
    kwargs: dict[str, Any] = {"connect_args": {"timeout": 30, "check_same_thread": False}}
    if memory:
        kwargs["poolclass"] = StaticPool  # one shared connection, so every caller sees the same data
    engine = sa.create_engine(url, **kwargs)

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn: Any, _record: Any) -> None:
        # Let SQLAlchemy's "begin" event emit BEGIN itself instead of pysqlite's implicit one.
        dbapi_conn.isolation_level = None
        cursor = dbapi_conn.cursor()
        cursor.execute("PRAGMA busy_timeout=30000")
        if not memory:
            _private_files(Path(str(url.database)))  # before WAL: its files take the database's mode
            _wal(cursor)
            cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Connection) -> None:
        # Straight to the driver: a statement through SQLAlchemy's execution path costs ~20x more,
        # and this runs for every transaction of every request.
        begin = "BEGIN IMMEDIATE" if conn.get_execution_options().get(_WRITE) else "BEGIN"
        driver: Any = conn.connection.driver_connection  # never None on a checked-out connection
        driver.execute(begin)

    return engine


def local_store(services: Any) -> bool:
    """Whether the store is an SQLite file (reads in microseconds, no network): where store-only
    reads run on the event loop (see :attr:`svc_api.core.dispatch.Operation.inline`).

    Example:
        >>> from types import SimpleNamespace
        >>> from svc_api.core.store import Store
        >>> local_store(SimpleNamespace(store=Store("sqlite:///:memory:")))
        False
    """
    try:
        store = services.store
    except StoreUnavailable:
        return False
    return store.dialect == "sqlite" and not store.single_connection
