"""A store that cannot be reached: 503 with reason and Retry-After, never a 500, never a partial write,
never a downgrade of credentials to a guest. Run on SQLite (database directory replaced by a file)
and on PostgreSQL (the connection goes through a TCP proxy that the test shuts down)."""

from __future__ import annotations

import contextlib
import shutil
import socket
import threading
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
import sqlalchemy as sa

from svc_api.accounts.tables import accounts
from svc_api.settings import Settings

if TYPE_CHECKING:
    from tests.api.conftest import Api

SECRET = b"test-secret-key-0123456789abcdef"


class TcpProxy:
    """Forwards 127.0.0.1:<port> to a target; :meth:`stop` cuts every connection and refuses new ones."""

    def __init__(self, target: tuple[str, int]) -> None:
        self.target = target
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.sockets: list[socket.socket] = []
        self.running = True
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while self.running:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            if not self.running:
                client.close()
                return
            upstream = socket.create_connection(self.target)
            self.sockets += [client, upstream]
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pump, args=(a, b), daemon=True).start()

    @staticmethod
    def _pump(src: socket.socket, dst: socket.socket) -> None:
        with contextlib.suppress(OSError):
            while chunk := src.recv(65536):
                dst.sendall(chunk)
        for s in (src, dst):
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)

    def stop(self) -> None:
        self.running = False
        with contextlib.suppress(OSError):
            self.listener.shutdown(socket.SHUT_RDWR)  # wakes the blocked accept() on Linux
        self.listener.close()
        for s in self.sockets:
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)
            s.close()


@pytest.fixture(params=["sqlite", "postgres"])
def outage(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[Settings, Callable[[], None]]]:
    """Settings of a working store and a function that takes that store down."""
    if request.param == "sqlite":
        folder = tmp_path / "db"

        def down_sqlite() -> None:
            shutil.rmtree(folder)
            folder.write_text("not a directory any more")

        yield Settings(database_url=f"sqlite:///{folder / 'svc.db'}", secret_key=SECRET), down_sqlite
        return
    url = request.getfixturevalue("postgres_url")
    parsed = sa.make_url(url)
    proxy = TcpProxy((parsed.host or "127.0.0.1", parsed.port or 5432))
    proxied = parsed.set(port=proxy.port).render_as_string(hide_password=False)
    try:
        yield Settings(database_url=proxied, secret_key=SECRET), proxy.stop
    finally:
        proxy.stop()


def _expect_store_503(reply: Any) -> None:
    assert reply.status_code == 503, reply.text
    assert reply.json() == {"error": "service_unavailable", "reason": "store_unavailable", "retry_after": 5}
    assert reply.headers["retry-after"] == "5"
    assert reply.headers["x-correlation-id"].startswith("svc-")


def test_store_going_down_gives_503_everywhere(
    make_api: Any, outage: tuple[Settings, Callable[[], None]]
) -> None:
    settings, take_down = outage
    api: Api = make_api(settings)
    user = api.register()
    key = api.user("api_key_generate", {"label": "bot"}, token=user["session_token"]).json()["data"]
    pair = (key["api_key"], key["api_secret"])
    assert api.user("account_info", key=pair).status_code == 200
    api.app.state.services.store.dispose()
    take_down()

    by_key = api.user("account_info", key=pair)
    assert by_key.status_code == 503
    assert by_key.json() == {
        "error": "api_key_store_unavailable",
        "code": "api_key_store_unavailable",
        "retry_after": 5,
    }
    assert by_key.headers["retry-after"] == "5"
    guest_route = api.get(
        "/tradingdata",
        params={"request_type": "changelog"},
        headers={"X-API-Key": pair[0], "X-API-Secret": pair[1]},
    )
    assert guest_route.status_code == 503  # never downgraded to a guest
    assert guest_route.json()["code"] == "api_key_store_unavailable"
    _expect_store_503(api.user("account_info", token=user["session_token"]))
    for request_type in ("api_key_generate", "api_key_status", "api_key_revoke"):
        keys = api.user(request_type, {"label": "x", "api_key_id": pair[0]}, token=user["session_token"])
        assert keys.status_code == 503
        assert keys.json()["code"] == "api_key_store_unavailable"
    _expect_store_503(api.user("register", {"email": "late@example.com", "password": "password123"}))
    _expect_store_503(api.get("/tradingdata", params={"request_type": "platform_notifications"}))
    health = api.get("/health")
    assert health.status_code == 503 and health.json()["reason"] == "store_unavailable"
    assert api.get("/").status_code == 200  # the platform config needs no database


def test_unreachable_at_start_up_then_recovers(make_api: Any, tmp_path: Path) -> None:
    folder = tmp_path / "db"
    folder.write_text("blocked")
    settings = Settings(database_url=f"sqlite:///{folder / 'svc.db'}", secret_key=SECRET)
    api: Api = make_api(settings)
    _expect_store_503(api.user("register", {"email": "a@example.com", "password": "password123"}))
    folder.unlink()
    folder.mkdir()
    assert api.user("register", {"email": "a@example.com", "password": "password123"}).status_code == 200


def test_postgres_on_a_closed_port_gives_503(make_api: Any) -> None:
    settings = Settings(database_url="postgresql+psycopg://postgres@127.0.0.1:1/test", secret_key=SECRET)
    api: Api = make_api(settings)
    _expect_store_503(api.user("login", {"email": "a@example.com", "password": "password123"}))
    _expect_store_503(api.user("account_info", token="A" * 43))
    by_key = api.user("account_info", key=("svk_" + "0" * 32, "secret"))
    assert by_key.status_code == 503
    assert by_key.json()["code"] == "api_key_store_unavailable"


def test_a_failure_mid_write_leaves_no_partial_write(make_api: Any, settings: Settings) -> None:
    api: Api = make_api(settings)
    store = api.app.state.services.store

    def fail_on_logins(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        if statement.lstrip().upper().startswith("INSERT INTO LOGINS"):
            raise sa.exc.OperationalError(statement, None, Exception("disk I/O error"))

    sa.event.listen(store.engine, "before_cursor_execute", fail_on_logins)
    email = f"{uuid.uuid4().hex[:8]}@example.com"
    try:
        _expect_store_503(api.user("register", {"email": email, "password": "password123"}))
    finally:
        sa.event.remove(store.engine, "before_cursor_execute", fail_on_logins)
    with store.read() as conn:
        # The account, its settings and its session were inserted before the failure: all rolled back.
        assert conn.execute(sa.select(sa.func.count()).select_from(accounts)).scalar() == 0
    assert api.user("register", {"email": email, "password": "password123"}).status_code == 200
