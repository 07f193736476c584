"""Redis (the rate-limit store and the WebSocket fan-out between processes) killed with SIGKILL and
started again: while it is down every limited request answers 503 ``temporarily_unavailable`` with
``Retry-After`` (never unlimited access), open sockets are closed cleanly with 1013 "try again
later" (they would no longer hear other processes' events) and new ones are refused with 503;
within 5 s of its return requests are served again and a socket opened again hears an event
published by another process."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from websockets.exceptions import ConnectionClosed, InvalidStatus
from websockets.sync.client import connect

from svc_api.core.pubsub import Hub, user_topic
from svc_api.settings import Settings
from tests.api.conftest import SECRET
from tests.api.fault_servers import PrivateRedis
from tests.api.test_realtime import _subscribe, serving

if TYPE_CHECKING:
    from tests.api.conftest import Api

pytestmark = [pytest.mark.redis, pytest.mark.slow]

BACK_WITHIN = 5.0


@pytest.fixture
def private_redis() -> Iterator[PrivateRedis]:
    server = PrivateRedis()
    try:
        yield server
    finally:
        server.close()


def _first(deadline_seconds: float, attempt: Any) -> tuple[float, Any]:
    """Call ``attempt`` until it returns something truthy (bounded); (seconds it took, that value)."""
    started = time.monotonic()
    while time.monotonic() - started < deadline_seconds:
        got = attempt()
        if got:
            return time.monotonic() - started, got
        time.sleep(0.05)
    raise AssertionError(f"nothing within {deadline_seconds} s")


def test_redis_killed_and_restarted(make_api: Any, private_redis: PrivateRedis, tmp_path: Path) -> None:
    settings = Settings(
        database_url=f"sqlite:///{tmp_path / 'svc.db'}",
        secret_key=SECRET,
        var_dir=tmp_path / "var",
        data_dir=tmp_path / "data",
        redis_url=private_redis.url,
    )
    api: Api = make_api(settings)
    user = api.register()
    token = user["session_token"]
    other_process = Hub(private_redis.url)  # another server's hub: its events cross through Redis
    try:
        assert api.user("account_info", token=token).status_code == 200
        with serving(api.app) as url, connect(f"{url}?token={token}") as ws:
            _subscribe(ws, "jobs")
            time.sleep(0.3)  # the hub's Redis listener is subscribed
            other_process.publish(user_topic(user["svc_id"]), {"channel": "jobs", "event": "progress"})
            assert json.loads(ws.recv(5))["event"] == "progress"

            private_redis.kill()
            for reply in (api.user("account_info", token=token), api.get("/"), api.get("/health")):
                assert reply.status_code == 503, reply.text
                assert reply.json()["reason"] == "temporarily_unavailable"
                assert int(reply.headers["retry-after"]) > 0
            with pytest.raises(ConnectionClosed) as closed:  # closed cleanly, not left deaf
                ws.recv(5)
            assert closed.value.rcvd is not None and closed.value.rcvd.code == 1013
            with pytest.raises(InvalidStatus) as refused, connect(f"{url}?token={token}"):
                pass
            assert refused.value.response.status_code == 503
            assert int(refused.value.response.headers["retry-after"]) > 0

            private_redis.start()
            back = time.monotonic()
            took, _ = _first(BACK_WITHIN, lambda: api.user("account_info", token=token).status_code == 200)
            assert api.get("/").status_code == 200

            def reconnect() -> Any:
                try:
                    return connect(f"{url}?token={token}", open_timeout=2)
                except InvalidStatus:
                    return None

            _, again = _first(BACK_WITHIN - (time.monotonic() - back), reconnect)
            with again:
                _subscribe(again, "jobs")
                deadline = time.monotonic() + BACK_WITHIN
                heard = None
                while heard is None and time.monotonic() < deadline:  # until its listener is back
                    other_process.publish(user_topic(user["svc_id"]), {"channel": "jobs", "event": "done"})
                    try:
                        heard = json.loads(again.recv(0.3))
                    except TimeoutError:
                        continue
                assert heard is not None and heard["event"] == "done"
            assert time.monotonic() - back < BACK_WITHIN, took
    finally:
        other_process.close()
