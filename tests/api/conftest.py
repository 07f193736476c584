"""Fixtures of the service tests: a database on SQLite and on PostgreSQL, the app, an HTTP client.

Every store-backed test runs twice (``sqlite`` and ``postgres``) on a database already migrated to
head: a copy of a template migrated once per test process (an SQLite file copied; a PostgreSQL
database made with ``CREATE DATABASE ... TEMPLATE``, dropped afterwards). Migrating a fresh database
costs about 1 s on SQLite and 4 s on PostgreSQL, and most tests start an app on one; the copy costs
milliseconds and 0.4 s. Tests of the migrations themselves take ``blank_database_url``: an empty
SQLite file or a fresh PostgreSQL schema ``t_<hex>`` (selected through ``search_path``). PostgreSQL
tests skip with the reason when the server at ``SVC_TEST_POSTGRES`` cannot be reached.
"""

from __future__ import annotations

import os
import shutil
import time
import uuid
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Any

import anyio.from_thread
import httpx
import pytest
import sqlalchemy as sa

from svc_api.app import create_app
from svc_api.core.clock import ManualClock
from svc_api.core.dispatch import Call, Operation
from svc_api.core.store import Store
from svc_api.credits import service as credits
from svc_api.migrations import migrate
from svc_api.routing import USER
from svc_api.settings import Settings, tunables_from_env
from svc_engine.data import DataStore
from svc_engine.data.synthetic import generate_market

POSTGRES = os.environ.get("SVC_TEST_POSTGRES", "postgresql+psycopg://postgres@127.0.0.1:5432/test")
SECRET = b"test-secret-key-0123456789abcdef"
PASSWORD = "correct horse battery"


def _postgres_admin() -> sa.Engine:
    engine = sa.create_engine(POSTGRES, connect_args={"connect_timeout": 2}, poolclass=sa.pool.NullPool)
    try:
        with engine.connect():
            pass
    except sa.exc.OperationalError as exc:
        pytest.skip(f"PostgreSQL not reachable at {POSTGRES}: {str(exc.orig).splitlines()[0]}")
    return engine


@pytest.fixture
def postgres_url() -> Iterator[str]:
    """A URL whose connections use a fresh, empty schema (dropped after the test)."""
    admin = _postgres_admin()
    schema = f"t_{uuid.uuid4().hex[:16]}"
    with admin.begin() as conn:
        conn.exec_driver_sql(f"CREATE SCHEMA {schema}")
    try:
        yield f"{POSTGRES}?options=-csearch_path%3D{schema}"
    finally:
        _close_open_apps()
        with admin.begin() as conn:
            conn.exec_driver_sql(f"DROP SCHEMA {schema} CASCADE")
        admin.dispose()


def _autocommit(engine: sa.Engine, statement: str) -> None:
    with engine.connect() as conn:
        conn.execution_options(isolation_level="AUTOCOMMIT").exec_driver_sql(statement)


def _postgres_database(name: str) -> str:
    # a query string, so tests may add parameters with "&" as they do to the schema URLs
    url = sa.engine.make_url(POSTGRES).set(database=name, query={"connect_timeout": "10"})
    return url.render_as_string(hide_password=False)


@pytest.fixture(scope="session")
def _sqlite_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An SQLite file migrated to head, once per test process (its WAL folded in at dispose)."""
    path = tmp_path_factory.mktemp("template") / "svc.db"
    store = Store(f"sqlite:///{path}")
    migrate(store)
    store.dispose()
    return path


@pytest.fixture(scope="session")
def _postgres_template() -> Iterator[str]:
    """A PostgreSQL database migrated to head, once per test process; dropped at the end."""
    admin = _postgres_admin()
    name = f"tmpl_{uuid.uuid4().hex[:16]}"
    _autocommit(admin, f"CREATE DATABASE {name}")
    try:
        store = Store(_postgres_database(name))
        migrate(store)
        store.dispose()  # a template is copied only while nobody is connected to it
        yield name
    finally:
        _autocommit(admin, f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        admin.dispose()


@pytest.fixture
def migrated_postgres_url(_postgres_template: str) -> Iterator[str]:
    """A URL of a fresh PostgreSQL database copied from the migrated template (dropped after the
    test, once its apps have stopped)."""
    admin = _postgres_admin()
    name = f"t_{uuid.uuid4().hex[:16]}"
    _autocommit(admin, f"CREATE DATABASE {name} TEMPLATE {_postgres_template}")
    try:
        yield _postgres_database(name)
    finally:
        _close_open_apps()
        _autocommit(admin, f"DROP DATABASE {name} WITH (FORCE)")
        admin.dispose()


@pytest.fixture(params=["sqlite", "postgres"])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """The same test on an SQLite file and on a PostgreSQL database, both migrated to head."""
    if request.param == "sqlite":
        path = tmp_path / "db" / "svc.db"
        path.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(request.getfixturevalue("_sqlite_template"), path)
        return f"sqlite:///{path}"
    return str(request.getfixturevalue("migrated_postgres_url"))


@pytest.fixture(params=["sqlite", "postgres"])
def blank_database_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """The same test on an empty SQLite file and on an empty PostgreSQL schema (the migration tests)."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'db' / 'svc.db'}"
    return str(request.getfixturevalue("postgres_url"))


@pytest.fixture
def settings(database_url: str, tmp_path: Path) -> Settings:
    """Settings of a test service (empty data directory: no supported coins)."""
    return Settings(
        database_url=database_url,
        secret_key=SECRET,
        var_dir=tmp_path / "var",
        data_dir=tmp_path / "data",
    )


class Api:
    """A synchronous client of an app running in a background event loop, lifespan included."""

    def __init__(self, app: Any, ip: str = "127.0.0.1") -> None:
        self.app = app
        self._portal_cm = anyio.from_thread.start_blocking_portal()
        self.portal = self._portal_cm.__enter__()
        self._lifespan = self.portal.wrap_async_context_manager(app.router.lifespan_context(app))
        self._lifespan.__enter__()
        transport = httpx.ASGITransport(app=app, client=(ip, 50000), raise_app_exceptions=False)
        self.client = httpx.AsyncClient(transport=transport, base_url="http://testserver")

    def request(self, method: str, url: str, **kwargs: Any) -> httpx.Response:
        return self.portal.call(partial(self.client.request, method, url, **kwargs))

    def get(self, url: str, **kwargs: Any) -> httpx.Response:
        return self.request("GET", url, **kwargs)

    def post(self, url: str, **kwargs: Any) -> httpx.Response:
        return self.request("POST", url, **kwargs)

    def user(
        self,
        request_type: str,
        body: dict[str, Any] | None = None,
        *,
        token: str | None = None,
        key: tuple[str, str] | None = None,
        headers: dict[str, str] | None = None,
    ) -> httpx.Response:
        """``POST /user?request_type=...`` with a session token or an API key pair."""
        sent = dict(headers or {})
        if token is not None:
            sent["Authorization"] = f"Bearer {token}"
        if key is not None:
            sent["X-API-Key"], sent["X-API-Secret"] = key
        return self.post("/user", params={"request_type": request_type}, json=body, headers=sent)

    def register(self, email: str | None = None, **extra: Any) -> dict[str, Any]:
        """Register a new account; returns the ``data`` of the reply."""
        email = email or f"user-{uuid.uuid4().hex[:10]}@example.com"
        reply = self.user("register", {"email": email, "password": PASSWORD, **extra})
        assert reply.status_code == 200, reply.text
        return reply.json()["data"] | {"email": email}

    def close(self) -> None:
        """Stop the app (its workers included); a second call does nothing."""
        if self in _OPEN:
            _OPEN.remove(self)
        if self.portal is None:
            return
        self.portal.call(self.client.aclose)
        self._lifespan.__exit__(None, None, None)
        self._portal_cm.__exit__(None, None, None)
        self.portal = None


_OPEN: list[Api] = []
"""Apps of the running test not closed yet: a PostgreSQL schema is dropped only after they stop.
(``make_api`` is set up before the database fixtures, so pytest would tear it down after them,
and a worker of a running app could hold a lock on the schema being dropped: a deadlock.)"""


def _close_open_apps() -> None:
    for api in reversed(list(_OPEN)):
        api.close()


LONG_SESSION = 3650 * 24 * 3600
"""The session lifetime of an app whose clock the test moves by hand (see ``make_api``)."""


@pytest.fixture
def make_api(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """Factory of clients of fresh apps (rate limits scaled up so tests are not throttled; no trend
    refresh job, no retention pass). Tunables a test sets in the environment
    (``monkeypatch.setenv("BACKTEST_THREADS", ...)``) are applied to the settings it passes, as
    ``Settings.from_env`` would read them."""
    monkeypatch.setenv("RATE_LIMIT_SCALE", "100")
    # apps of tests scan no trends in the background unless a test asks for it
    monkeypatch.setenv("TREND_REFRESH_SECONDS", "0")
    # nor expire anything behind their back: retention tests run its passes themselves
    monkeypatch.setenv("RETENTION_SWEEP_SECONDS", "0")
    # and start on an empty store: a test that wants the bundled samples plants them
    monkeypatch.setenv("SVC_SEED_SAMPLES", "0")
    made: list[Api] = []

    def make(settings: Settings, *, app: Any = None, ip: str = "127.0.0.1", clock: Any = None) -> Api:
        if isinstance(clock, ManualClock) and settings.session_ttl_seconds == Settings.default(
            "session_ttl_seconds"
        ):
            # a session's expiry counts on the service's clock, which these tests move by months
            # while one session serves the whole test; a test of expiry sets its own lifetime
            settings = settings.replace(session_ttl_seconds=LONG_SESSION)
        if app is None:
            app = create_app(settings.replace(**tunables_from_env(os.environ)), clock=clock)
        api = Api(app, ip=ip)
        api.clock = app.state.services.clock
        made.append(api)
        _OPEN.append(api)
        return api

    yield make
    for api in reversed(made):
        api.close()


@pytest.fixture
def api(make_api: Any, settings: Settings) -> Api:
    """A client of the service on the parametrised database."""
    return make_api(settings)


def spend_operation(call: Call) -> dict[str, Any]:
    p = call.params
    return credits.spend_credits(
        call.store,
        call.svc_id,
        p.get("amount", 1),
        "backtest",
        "test spend",
        p.get("idempotency_key"),
        now=int(time.time()),
    )


@pytest.fixture
def paid_operation(monkeypatch: pytest.MonkeyPatch) -> Any:
    """Adds ``/user?request_type=test_spend`` (idempotent, paid); returns a setter of its handler."""

    def install(handler: Any = spend_operation) -> None:
        monkeypatch.setitem(USER.operations, "test_spend", Operation(handler, idempotent=True))

    install()
    return install


SIGNALS_T0 = 1_790_812_800
"""2026-10-01 00:00 UTC, inside the small synthetic market: where the signal tests' clock starts."""


@pytest.fixture(scope="session")
def signals_market(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The small synthetic market of the signal and marketplace tests, made once."""
    root = tmp_path_factory.mktemp("signals-market")
    generate_market(DataStore(root), small=True)
    return root


@pytest.fixture
def sig_api(make_api: Any, settings: Settings, signals_market: Path, monkeypatch: pytest.MonkeyPatch) -> Api:
    """An app on that market whose clock starts at :data:`SIGNALS_T0` and moves only when told."""
    monkeypatch.setenv("SIGNAL_POLL_SECONDS", "0")  # the test runs the worker itself
    return make_api(settings.replace(data_dir=signals_market), clock=ManualClock(SIGNALS_T0))


@pytest.fixture
def cli_env(settings: Settings, monkeypatch: pytest.MonkeyPatch) -> None:
    """``svc admin`` commands run in the test reach the test's database."""
    monkeypatch.setenv("DATABASE_URL", settings.database_url)
    monkeypatch.setenv("SECRET_KEY", settings.secret_key.decode())
    monkeypatch.setenv("SVC_VAR_DIR", str(settings.var_dir))


@pytest.fixture
def capi(settings: Settings, make_api: Any, cli_env: None) -> Api:
    """An app whose clock starts at :data:`SIGNALS_T0` and moves only when told, with the
    notification and purge workers off (tests run them)."""
    quiet = settings.replace(
        notify_poll_seconds=0, community_purge_seconds=0, session_ttl_seconds=LONG_SESSION
    )
    return make_api(quiet, clock=ManualClock(SIGNALS_T0))
