"""Idempotency keys through HTTP, on an idempotent paid operation added to the real app."""

from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING, Any

import pytest
import sqlalchemy as sa

from svc_api.core.dispatch import Call
from svc_api.core.errors import ApiError
from svc_api.core.idempotency import claim, finish
from svc_api.core.tables import idempotency_keys
from svc_api.credits import service as credits

if TYPE_CHECKING:
    from tests.api.conftest import Api

KEY = "order-2026-11-22-0001"


def _funded(api: Api, amount: int = 10) -> dict[str, Any]:
    user = api.register()
    credits.adjust_credits(
        api.app.state.services.store, user["svc_id"], amount, reason="test", now=int(time.time())
    )
    return user


def _spend(api: Api, token: str, **body: Any) -> Any:
    return api.user("test_spend", body, token=token)


def test_replay_returns_the_stored_response_and_charges_once(api: Api, paid_operation: Any) -> None:
    user = _funded(api)
    first = _spend(api, user["session_token"], amount=3, idempotency_key=KEY)
    assert first.status_code == 200 and "idempotent-replay" not in first.headers
    second = _spend(
        api, user["session_token"], idempotency_key=KEY, amount=3
    )  # same request, other key order
    assert second.status_code == 200
    assert second.headers["idempotent-replay"] == "true"
    assert second.content == first.content
    assert api.user("account_info", token=user["session_token"]).json()["data"]["svc_credits"] == 7


def test_same_key_for_a_different_request_is_409(api: Api, paid_operation: Any) -> None:
    user = _funded(api)
    assert _spend(api, user["session_token"], amount=3, idempotency_key=KEY).status_code == 200
    other = _spend(api, user["session_token"], amount=4, idempotency_key=KEY)
    assert other.status_code == 409
    assert other.json() == {
        "error": "idempotency_key_reused",
        "message": "this idempotency_key was used for a different request",
    }
    # Keys are per caller: another user may use the same key.
    stranger = _funded(api)
    assert _spend(api, stranger["session_token"], amount=4, idempotency_key=KEY).status_code == 200


def test_a_request_still_in_flight_gets_409(api: Api, paid_operation: Any) -> None:
    entered, release = threading.Event(), threading.Event()

    def slow_spend(call: Call) -> dict[str, Any]:
        entered.set()
        release.wait(10)
        return credits.spend_credits(
            call.store,
            call.svc_id,
            1,
            "backtest",
            "slow",
            call.params["idempotency_key"],
            now=int(time.time()),
        )

    paid_operation(slow_spend)
    user = _funded(api)
    results: list[Any] = []
    worker = threading.Thread(
        target=lambda: results.append(_spend(api, user["session_token"], idempotency_key=KEY))
    )
    worker.start()
    assert entered.wait(10)
    busy = _spend(api, user["session_token"], idempotency_key=KEY)
    release.set()
    worker.join(10)
    assert busy.status_code == 409
    assert busy.json()["error"] == "request_in_progress"
    assert results[0].status_code == 200
    assert _spend(api, user["session_token"], idempotency_key=KEY).headers["idempotent-replay"] == "true"


def test_failures_that_ask_for_a_retry_are_not_stored(api: Api, paid_operation: Any) -> None:
    user = api.register()
    short = _spend(api, user["session_token"], amount=2, idempotency_key=KEY)
    assert short.status_code == 402  # a 4xx outcome is final and replayed as is
    assert (
        _spend(api, user["session_token"], amount=2, idempotency_key=KEY).headers["idempotent-replay"]
        == "true"
    )
    expired = _spend(api, "A" * 43, amount=2, idempotency_key="other-key-0000000001")
    assert expired.status_code == 401
    with api.app.state.services.store.read() as conn:
        keys = conn.execute(sa.select(idempotency_keys.c.key, idempotency_keys.c.state)).all()
    assert [tuple(k) for k in keys] == [(KEY, "done")]


def test_malformed_keys_are_400(api: Api, paid_operation: Any) -> None:
    user = _funded(api)
    for key in ("short", "x" * 129, "has spaces in the key!", 12345678901234567):
        reply = _spend(api, user["session_token"], idempotency_key=key)
        assert reply.status_code == 400, key
        assert reply.json()["error"] == "invalid_idempotency_key"
    assert api.user("account_info", token=user["session_token"]).json()["data"]["svc_credits"] == 10


def test_a_claim_left_by_a_crash_is_taken_over_after_stale_after(api: Api) -> None:
    store = api.app.state.services.store
    assert claim(store, "AB12CD", KEY, "print-1", stale_after=600, now=int(time.time())) is None
    with pytest.raises(ApiError) as busy:
        claim(store, "AB12CD", KEY, "print-1", stale_after=600, now=int(time.time()))
    assert busy.value.status == 409 and busy.value.error == "request_in_progress"
    with store.write() as conn:
        conn.execute(idempotency_keys.update().values(created_at=int(time.time()) - 601))
    assert (
        claim(store, "AB12CD", KEY, "print-1", stale_after=600, now=int(time.time())) is None
    )  # taken over: runs again
    finish(store, "AB12CD", KEY, (201, "application/json", b'{"ok":true}'))
    assert claim(store, "AB12CD", KEY, "print-1", stale_after=600, now=int(time.time())) == {
        "status": 201,
        "content_type": "application/json",
        "body": b'{"ok":true}',
    }


def _dead_holder() -> str:
    """The holder id of a process of this host that has exited."""
    import subprocess
    import sys

    from svc_api.core.liveness import holder_id

    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(0.2)"])
    holder = holder_id(child.pid)
    child.wait()
    return holder


def test_a_key_left_in_flight_by_a_dead_process_proceeds_at_once(api: Api, paid_operation: Any) -> None:
    """After a crash, the retry of the request that was in flight runs at once (no 409 for minutes),
    and the money moves once: the ledger's own key makes the second run a replay of the spend."""
    from svc_api.core.leases import release_dead

    user = _funded(api)
    token = user["session_token"]
    body = {"amount": 2, "idempotency_key": KEY}
    assert _spend(api, token, **body).status_code == 200
    store = api.app.state.services.store
    with store.write() as conn:  # as if the process had died mid-request: in flight, holder gone
        conn.execute(
            idempotency_keys.update()
            .where(idempotency_keys.c.key == KEY)
            .values(state="in_flight", status_code=None, body=None, holder=_dead_holder(), lease_until=2**40)
        )
    blocked_before_release = _spend(api, token, **body)
    assert blocked_before_release.status_code == 200  # a dead holder is known at once, even unreleased
    with store.write() as conn:
        conn.execute(
            idempotency_keys.update()
            .where(idempotency_keys.c.key == KEY)
            .values(state="in_flight", holder=_dead_holder(), lease_until=2**40)
        )
    assert release_dead(store) == 1
    assert _spend(api, token, **body).status_code == 200
    assert api.user("account_info", token=token).json()["data"]["svc_credits"] == 8
    history = api.user("credits_history", token=token).json()["data"]["transactions"]
    assert [t["amount"] for t in history if t["action"] == "backtest"] == [-2]


def test_a_live_holder_keeps_its_key_and_an_expired_lease_frees_it(api: Api) -> None:
    from svc_api.core.liveness import HOLDER

    store = api.app.state.services.store
    svc_id = api.register()["svc_id"]
    assert claim(store, svc_id, "k" * 16, "f1", 600, now=int(time.time())) is None
    with pytest.raises(ApiError, match="409 request_in_progress"):
        claim(store, svc_id, "k" * 16, "f1", 600, now=int(time.time()))
    with store.write() as conn:  # another host's holder whose lease ran out
        conn.execute(idempotency_keys.update().values(holder="elsewhere:1:1", lease_until=1))
    assert claim(store, svc_id, "k" * 16, "f1", 600, now=int(time.time())) is None
    with store.read() as conn:
        row = conn.execute(idempotency_keys.select()).one()
    assert row.holder == HOLDER and row.lease_until >= int(time.time()) + 20
