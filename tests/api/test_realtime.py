"""Real-time channels over a real uvicorn server: a backtest's progress to completion and a new
signal pushed to their owner's socket, nothing to another user, handshakes refused without
credentials (401) and past the connection limit (a plain 429 without Retry-After), and events
crossing processes through Redis."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from websockets.exceptions import InvalidStatus
from websockets.sync.client import ClientConnection, connect

from svc_api.core.pubsub import Hub
from svc_api.signals import service as signals
from tests.api.fakes.loopback import serve
from tests.api.test_signals import HOUR, STRATEGY, creator


@contextmanager
def serving(app: Any) -> Iterator[str]:
    """``app`` (already started by the test client) served by uvicorn on loopback: its ws:// URL."""
    with serve(app, lifespan="off") as url:
        yield url.replace("http://", "ws://") + "/ws"


def _subscribe(ws: ClientConnection, *channels: str) -> None:
    for channel in channels:
        ws.send(json.dumps({"action": "subscribe", "channel": channel}))
        assert json.loads(ws.recv(5))["event"] == "subscribed"


def _until(ws: ClientConnection, event: str, timeout: float = 60) -> list[dict[str, Any]]:
    seen: list[dict[str, Any]] = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        message = json.loads(ws.recv(max(0.1, deadline - time.monotonic())))
        seen.append(message)
        if message.get("event") == event:
            return seen
    raise AssertionError(f"no {event} in {seen}")


def test_a_signal_reaches_its_owner_and_nobody_else(sig_api: Any) -> None:
    _, token = creator(sig_api, ["BTC", "ETH"])
    other = sig_api.register()["session_token"]
    with (
        serving(sig_api.app) as url,
        connect(url, additional_headers={"Authorization": f"Bearer {token}"}) as ws,
        connect(f"{url}?token={other}") as stranger,
    ):
        _subscribe(ws, "signals")
        _subscribe(stranger, "signals", "jobs")
        for _ in range(24 * 30):
            sig_api.clock.advance(HOUR)
            if signals.run_once(sig_api.app.state.services)["signals"]:
                break
        opened = _until(ws, "opened", timeout=10)[-1]
        live = sig_api.user("active_signals", token=token).json()["data"]["signals"]
        assert opened["position_key"] in {s["position_key"] for s in live}
        assert (opened["channel"], opened["strategy_name"]) == ("signals", "smacross")
        with pytest.raises(TimeoutError):
            stranger.recv(0.5)


def test_a_backtest_streams_its_progress_to_completion(sig_api: Any) -> None:
    user = sig_api.register()
    token = user["session_token"]
    _, owner_token = creator(sig_api, ["BTC"])  # a strategy ready to backtest
    headers = {"Authorization": f"Bearer {owner_token}"}
    with serving(sig_api.app) as url, connect(url, additional_headers=headers) as ws:
        _subscribe(ws, "jobs")
        job = sig_api.post(
            "/backtest",
            params={"action": "full_range"},
            headers=headers,
            json={"strategy_name": STRATEGY["strategy_name"], "coins": ["BTC", "ETH"], "timeframe": "1h"},
        ).json()
        seen = _until(ws, "completed")
    assert {m["job_id"] for m in seen} == {job["job_id"]}
    assert seen[-1]["progress_pct"] == 100.0
    assert all(m["channel"] == "jobs" for m in seen) and token


def _refused(url: str) -> Any:
    with pytest.raises(InvalidStatus) as refused, connect(url):
        pass
    return refused.value.response


def test_handshakes_without_credentials_or_past_the_limit_are_refused(
    sig_api: Any, make_api: Any, settings: Any
) -> None:
    with serving(sig_api.app) as url:
        assert _refused(url).status_code == 401
        assert _refused(f"{url}?token=not-a-token").status_code == 401
    small = make_api(settings.replace(ws_max_connections=2))
    token = small.register()["session_token"]
    with serving(small.app) as url:
        with connect(f"{url}?token={token}"), connect(f"{url}?token={token}"):
            full = _refused(f"{url}?token={token}")
            assert full.status_code == 429 and "Retry-After" not in full.headers
        time.sleep(0.3)
        with connect(f"{url}?token={token}"):  # a freed place is taken again
            pass


def test_events_cross_processes_through_redis() -> None:
    redis = pytest.importorskip("redis")
    try:
        redis.Redis.from_url("redis://127.0.0.1:6379/0", socket_timeout=1).ping()
    except redis.RedisError as exc:
        pytest.skip(f"Redis not reachable at 127.0.0.1:6379: {exc}")
    sender, receiver = (
        Hub("redis://127.0.0.1:6379/0", prefix="svc-rt-test"),
        Hub("redis://127.0.0.1:6379/0", prefix="svc-rt-test"),
    )

    async def roundtrip() -> str:
        sub = receiver.subscribe("user:AB12CD", asyncio.get_running_loop())
        await asyncio.sleep(0.3)  # the listener's subscription is in place
        sender.publish("user:AB12CD", {"channel": "jobs", "event": "progress"})
        try:
            return await asyncio.wait_for(sub.queue.get(), 5)
        finally:
            receiver.close()

    assert json.loads(asyncio.run(roundtrip())) == {"channel": "jobs", "event": "progress"}


@pytest.mark.parametrize("outcome", ["commit", "rollback"])
def test_an_event_published_in_a_transaction_goes_out_after_commit_only(tmp_path: Any, outcome: str) -> None:
    from svc_api.core import pubsub
    from svc_api.core.store import Store

    url = f"sqlite:///{tmp_path / 'rt.db'}"
    store, hub = Store(url), pubsub.Hub()
    pubsub.register(url, hub)

    async def scenario() -> tuple[int, list[str]]:
        sub = hub.subscribe("user:AB12CD", asyncio.get_running_loop())
        try:
            with store.write() as conn:
                pubsub.publish(conn, "user:AB12CD", {"event": "opened"})
                await asyncio.sleep(0.05)
                during = sub.queue.qsize()
                if outcome == "rollback":
                    raise RuntimeError("the signal was not written")
        except RuntimeError:
            pass
        await asyncio.sleep(0.05)
        return during, [sub.queue.get_nowait() for _ in range(sub.queue.qsize())]

    try:
        during, after = asyncio.run(scenario())
    finally:
        pubsub.unregister(hub)
        store.dispose()
    assert during == 0
    assert after == (['{"event": "opened"}'] if outcome == "commit" else [])


def test_a_burst_of_handshakes_never_holds_more_sockets_than_the_limit(make_api: Any, settings: Any) -> None:
    import threading

    small = make_api(settings.replace(ws_max_connections=2))
    token = small.register()["session_token"]
    outcomes: list[int] = []
    release = threading.Event()

    def knock(url: str) -> None:
        try:
            with connect(f"{url}?token={token}", open_timeout=20):
                outcomes.append(101)
                release.wait(20)
        except InvalidStatus as refused:
            outcomes.append(refused.response.status_code)

    with serving(small.app) as url:
        threads = [threading.Thread(target=knock, args=(url,)) for _ in range(12)]
        for thread in threads:
            thread.start()
        deadline = time.monotonic() + 20
        while len(outcomes) < 12 and time.monotonic() < deadline:
            time.sleep(0.05)
        release.set()
        for thread in threads:
            thread.join(20)
    assert sorted(outcomes) == [101, 101] + [429] * 10
