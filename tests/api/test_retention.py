"""Retention on SQLite and PostgreSQL: finished backtests leave (row first, then their objects) once
their owner's plan stops keeping them, a crash between the two only delays the objects, running jobs
stay; old mail files leave; the policy comes from the settings and the worker is registered."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
import sqlalchemy as sa

from svc_api.accounts import service as accounts
from svc_api.backtests import jobs
from svc_api.backtests.artifacts import job_keys
from svc_api.backtests.launch import Launch, create_job
from svc_api.backtests.tables import backtest_jobs
from svc_api.core.clock import ManualClock
from svc_api.core.objectqueue import pending
from svc_api.core.objectstore import ObjectStore, from_settings
from svc_api.credits import service as credits
from svc_api.retention import service as retention
from svc_api.retention.worker import retention_worker
from svc_api.settings import Settings, tunables_from_env
from svc_api.workers import REGISTRY
from tests.api.test_backtests import STRATEGY, _bt, _finished, _ok

if TYPE_CHECKING:
    from tests.api.conftest import Api

DAY = 86_400


@pytest.fixture
def rapi(settings: Settings, signals_market: Path, make_api: Any) -> Api:
    """An app on the small market whose clock starts at wall time (job rows are stamped with it) and
    moves only when told; the retention worker is off (tests run passes themselves). The database
    fixture comes first: the apps stop before its schema is dropped."""
    quiet = settings.replace(data_dir=signals_market, retention_sweep_seconds=0)
    return make_api(quiet, clock=ManualClock(int(time.time())))


def _trader(api: Api, plan_days: int) -> tuple[str, str]:
    """A user on ``pro`` for ``plan_days`` days (free afterwards) with the strategy ``smacross``."""
    data = api.register()
    with api.app.state.services.store.write() as conn:
        accounts.grant_plan(conn, data["svc_id"], "pro", plan_days, now=api.clock.now())
        credits.deposit_credits(conn, data["svc_id"], 50, now=int(time.time()))
    token = data["session_token"]
    assert api.user("strategy_generate", STRATEGY, token=token).status_code == 200
    deadline = time.monotonic() + 10
    while (
        api.user("strategy_detail", {"strategy_name": "smacross"}, token=token).json()["data"]["status"]
        == "generating"
    ):
        assert time.monotonic() < deadline
        time.sleep(0.02)
    return data["svc_id"], token


def _portfolio(api: Api, token: str) -> str:
    body = {"strategy_name": "smacross", "coins": ["BTC", "ETH"], "timeframe": "1h"}
    job_id = str(_ok(_bt(api, "portfolio", body, token))["job_id"])
    status, _ = _finished(api, token, job_id)
    assert status["status"] == "completed", status
    return job_id


def _keys(api: Api, svc_id: str, job_id: str) -> list[str]:
    return job_keys(svc_id, job_id, ["BTCUSDT", "ETHUSDT"], "portfolio")


def _pass(api: Api, objects: ObjectStore | None = None) -> dict[str, int]:
    services = api.app.state.services
    return retention.run_once(services, retention.Policy.from_settings(services.settings), objects)


def test_a_backtest_is_kept_as_long_as_the_plan_in_force_says(rapi: Api) -> None:
    objects = from_settings(rapi.app.state.services.settings)
    lapsed_id, lapsed = _trader(rapi, plan_days=1)  # pro for a day, then free: kept 7 days
    pro_id, pro = _trader(rapi, plan_days=365)  # pro at every pass below: kept 90 days
    old, kept = _portfolio(rapi, lapsed), _portfolio(rapi, pro)
    assert all(objects.exists(k) for k in _keys(rapi, lapsed_id, old) + _keys(rapi, pro_id, kept))

    rapi.clock.advance(7 * DAY - 60)  # not yet: seven days from the launch
    assert _pass(rapi)["backtests_deleted"] == 0
    rapi.clock.advance(120)
    done = _pass(rapi)
    assert (done["backtests_deleted"], done["objects_deleted"], done["objects_pending"]) == (1, 3, 0)
    assert not any(objects.exists(k) for k in _keys(rapi, lapsed_id, old))
    gone = _bt(rapi, "result", {"job_id": old}, lapsed)
    assert gone.status_code == 404, gone.text
    assert _ok(rapi.user("backtest_history", token=lapsed))["data"]["count"] == 0
    assert _bt(rapi, "result", {"job_id": kept}, pro).status_code == 200
    assert all(objects.exists(k) for k in _keys(rapi, pro_id, kept))

    rapi.clock.advance(83 * DAY)  # 90 days and a minute after the pro user's launch
    assert _pass(rapi)["backtests_deleted"] == 1
    with rapi.app.state.services.store.read() as conn:  # the session ended at 30 days: read the row
        assert conn.execute(sa.select(backtest_jobs.c.job_id)).scalars().all() == []
    assert not any(objects.exists(k) for k in _keys(rapi, pro_id, kept))


class _Failing(ObjectStore):
    """An object store whose deletes fail (the process dies, the store is unreachable)."""

    def __init__(self, inner: ObjectStore) -> None:
        self.inner = inner

    def put(self, key: str, data: bytes) -> None:
        self.inner.put(key, data)

    def get(self, key: str) -> bytes:
        return self.inner.get(key)

    def delete(self, key: str) -> bool:
        raise OSError("store unreachable")

    def exists(self, key: str) -> bool:
        return self.inner.exists(key)

    def presign(self, key: str, expires_in: int = 3600) -> str:
        return self.inner.presign(key, expires_in)


def test_the_row_goes_first_and_a_failed_object_delete_is_finished_later(rapi: Api) -> None:
    services = rapi.app.state.services
    objects = from_settings(services.settings)
    svc_id, token = _trader(rapi, plan_days=1)
    job_id = _portfolio(rapi, token)
    rapi.clock.advance(8 * DAY)

    failed = _pass(rapi, _Failing(objects))
    assert (failed["backtests_deleted"], failed["objects_deleted"], failed["objects_pending"]) == (1, 0, 3)
    # the row is gone and its objects are still there: readers see a 404, never a 500
    with services.store.read() as conn:
        assert conn.execute(sa.select(backtest_jobs).where(backtest_jobs.c.job_id == job_id)).first() is None
    assert all(objects.exists(k) for k in _keys(rapi, svc_id, job_id))
    reply = _bt(rapi, "result", {"job_id": job_id}, token)
    assert reply.status_code == 404, reply.text
    assert _bt(rapi, "coin_result", {"job_id": job_id, "coin": "BTC"}, token).status_code == 404

    again = _pass(rapi)
    assert (again["backtests_deleted"], again["objects_deleted"], again["objects_pending"]) == (0, 3, 0)
    assert not any(objects.exists(k) for k in _keys(rapi, svc_id, job_id))
    assert pending(services.store) == 0


def test_a_running_job_is_never_expired(rapi: Api) -> None:
    services = rapi.app.state.services
    svc_id = rapi.register()["svc_id"]
    with services.store.write() as conn:
        credits.deposit_credits(conn, svc_id, 5, now=int(time.time()))
    launch = Launch("full_range", "smacross", 1, ["BTCUSDT"], "crypto", "1h", {}, 0, 1, 1.0)
    with services.store.write() as conn:
        job_id = create_job(conn, svc_id, launch, limit=3, now=int(time.time()))["job_id"]
    jobs.runner_of(services).objects.put(job_keys(svc_id, job_id, ["BTCUSDT"], "full_range")[0], b"{}")
    rapi.clock.advance(400 * DAY)
    assert _pass(rapi)["backtests_deleted"] == 0
    with services.store.read() as conn:
        assert conn.execute(sa.select(backtest_jobs.c.status)).scalar() == "running"
    # finished, the same row goes at the next pass
    with services.store.write() as conn:
        conn.execute(backtest_jobs.update().values(status="failed"))
    assert _pass(rapi)["backtests_deleted"] == 1


def test_old_mail_files_leave_and_recent_ones_stay(rapi: Api) -> None:
    mail = Path(rapi.app.state.services.settings.var_dir) / "mail"
    mail.mkdir(parents=True, exist_ok=True)
    now = rapi.clock.now()
    files = {"old.eml": now - 15 * DAY, "crashed.eml.part": now - 15 * DAY, "new.eml": now - 13 * DAY}
    files |= {"operator-notes.txt": now - 400 * DAY}
    for name, at in files.items():
        (mail / name).write_text("x")
        os.utime(mail / name, (at, at))
    assert _pass(rapi)["mail_files_deleted"] == 2
    assert sorted(p.name for p in mail.iterdir()) == ["new.eml", "operator-notes.txt"]


def test_the_policy_and_the_worker_come_from_the_settings() -> None:
    env = tunables_from_env({"BACKTEST_RETENTION_DAYS": "free=3, investor=1000", "MAIL_RETENTION_DAYS": "0"})
    base = Settings(database_url="sqlite://", secret_key=b"k" * 32)
    policy = retention.Policy.from_settings(base.replace(**env))
    assert policy.backtest_days == {
        "free": 3.0,
        "starter": 30.0,
        "plus": 30.0,
        "pro": 90.0,
        "investor": 1000.0,
    }
    assert policy.mail_days == 0.0
    with pytest.raises(ValueError, match="BACKTEST_RETENTION_DAYS names plans of"):
        tunables_from_env({"BACKTEST_RETENTION_DAYS": "gold=5"})
    with pytest.raises(ValueError, match="BACKTEST_RETENTION_DAYS must be a number > 0"):
        tunables_from_env({"BACKTEST_RETENTION_DAYS": "free=0"})
    with pytest.raises(ValueError, match="missing \\['investor', 'plus', 'pro', 'starter'\\]"):
        retention.Policy.from_settings(base.replace(backtest_retention_days=(("free", 7.0),)))
    assert "retention" in REGISTRY.names()
    services: Any = type("S", (), {"settings": base, "store": None, "clock": None})()
    worker = retention_worker(services)
    assert worker is not None and (worker.name, worker.every) == ("retention", 3600.0)
    services.settings = base.replace(retention_sweep_seconds=0)
    assert retention_worker(services) is None


def test_every_plan_has_a_default_retention() -> None:
    """settings.py cannot import the plans (it sits below accounts): its defaults must name each one."""
    assert [plan for plan, _ in Settings.default("backtest_retention_days")] == list(accounts.PLANS)


def test_delete_backtest_removes_the_row_then_the_objects(rapi: Api, monkeypatch: pytest.MonkeyPatch) -> None:
    services = rapi.app.state.services
    objects = jobs.runner_of(services).objects
    svc_id, token = _trader(rapi, plan_days=30)
    first, second = _portfolio(rapi, token), _portfolio(rapi, token)
    deleted = _ok(_bt(rapi, "delete_backtest", {"job_id": first}, token))
    assert (deleted["job_id"], deleted["deleted_objects"]) == (first, 3)
    assert not any(objects.exists(k) for k in _keys(rapi, svc_id, first)) and pending(services.store) == 0

    # the object store fails after the row's commit: the job is gone, its objects wait in the queue
    monkeypatch.setattr(objects, "delete", _Failing(objects).delete)
    deleted = _ok(_bt(rapi, "delete_backtest", {"job_id": second}, token))
    assert (deleted["job_id"], deleted["deleted_objects"]) == (second, 0)
    assert _bt(rapi, "result", {"job_id": second}, token).status_code == 404
    assert all(objects.exists(k) for k in _keys(rapi, svc_id, second)) and pending(services.store) == 3
    monkeypatch.undo()
    assert _pass(rapi)["objects_deleted"] == 3
    assert not any(objects.exists(k) for k in _keys(rapi, svc_id, second)) and pending(services.store) == 0
