"""A full disk under ``var/`` (and under the data directory): a real tmpfs of a few MiB, mounted for
the test and filled with a ballast file, then emptied again. An upload part answers 507
``insufficient_storage`` with ``Retry-After`` and leaves no part; a backtest whose result cannot be
written fails with a clear message and its credits back, leaving no object; a market-feed append
reports the failure in ``/healthz`` and leaves the series a valid prefix. Each works again, in full,
once there is room. Mounting needs root; elsewhere the test skips with the reason."""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

import numpy as np
import pytest

from svc_api.core.clock import ManualClock
from svc_api.market import feed
from svc_api.market import service as market
from svc_api.settings import Settings
from svc_engine.data import DataStore, load_klines
from svc_engine.data.synthetic import END_MS
from tests.api.conftest import SECRET, SIGNALS_T0
from tests.api.education_helpers import call
from tests.api.test_signals import STRATEGY, creator
from tests.api.upload_helpers import leader_desk, make_video, pieces, put, receipts, register, send_parts

if TYPE_CHECKING:
    from tests.api.conftest import Api

pytestmark = pytest.mark.slow


class SmallDisk:
    """A tmpfs of ``size`` mounted at ``path``; :meth:`fill` takes every free byte, :meth:`free` gives
    them back."""

    def __init__(self, path: Path, size: str = "16m") -> None:
        if os.geteuid() != 0 or shutil.which("mount") is None:
            pytest.skip("mounting a small tmpfs to fill needs root and mount(8)")
        path.mkdir(parents=True)
        command = ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)]
        done = subprocess.run(command, capture_output=True)
        if done.returncode != 0:
            pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode().strip()}")
        self.path = path
        self.ballast = path / "ballast"

    def fill(self) -> None:
        """Write the ballast until the disk refuses one more byte."""
        with open(self.ballast, "ab", buffering=0) as out:
            for chunk in (1 << 20, 1 << 12, 1):
                try:
                    while True:
                        out.write(b"\0" * chunk)
                except OSError as exc:
                    assert exc.errno == errno.ENOSPC
        assert shutil.disk_usage(self.path).free < 1 << 12

    def free(self) -> None:
        """Remove the ballast."""
        self.ballast.unlink(missing_ok=True)

    def close(self) -> None:
        subprocess.run(["umount", "-l", str(self.path)], capture_output=True)


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    """SQLite outside the small disk: the disk under ``var/`` is the fault, not the database."""
    return Settings(database_url=f"sqlite:///{tmp_path / 'db' / 'svc.db'}", secret_key=SECRET)


@pytest.fixture
def disk(tmp_path: Path) -> Iterator[SmallDisk]:
    small = SmallDisk(tmp_path / "disk")
    try:
        yield small
    finally:
        small.close()


def _leftovers(folder: Path) -> list[Path]:
    return [p for p in folder.rglob("*") if p.name.endswith(".tmp")]


def _full(reply: Any) -> None:
    assert reply.status_code == 507, reply.text
    assert int(reply.headers["retry-after"]) > 0


def test_an_upload_part_on_a_full_disk_is_507_and_sent_again_once_there_is_room(
    make_api: Any, settings: Any, disk: SmallDisk, monkeypatch: pytest.MonkeyPatch
) -> None:
    on_disk = settings.replace(var_dir=disk.path / "var")
    desk = leader_desk(SimpleNamespace(param="local"), on_disk, make_api, monkeypatch)
    data = make_video(60)
    upload = register(desk, data)
    upload_id, size = upload["upload_id"], upload["part_policy"]["part_size_bytes"]
    parts = pieces(data, size)
    assert len(parts) >= 2
    urls = call(desk.api, "POST", f"/studio/uploads/{upload_id}/part-urls", desk.token, json={})
    first = next(item for item in urls.json()["parts"] if item["part_number"] == 1)
    disk.fill()
    refused = put(desk.api, first["url"], parts[1])
    _full(refused)
    assert refused.json() == {
        "error": "the service's storage is full; send this again later",
        "code": "insufficient_storage",
        "retry_after": 30,
    }
    assert _leftovers(disk.path / "var") == []
    state = call(desk.api, "POST", f"/studio/uploads/{upload_id}/reconcile", desk.token, json={})
    assert state.status_code == 200, state.text
    assert state.json()["parts_received"] == 0  # nothing half-stored counts as a part
    disk.free()
    etags = send_parts(desk, upload, data)
    assert receipts(desk, upload_id, etags).status_code == 200
    done = call(desk.api, "POST", f"/studio/uploads/{upload_id}/complete", desk.token, json={})
    assert done.status_code == 200, done.text  # the assembled file's sha256 is the registered one


def _status(api: Api, job_id: str, token: str) -> dict[str, Any]:
    headers = {"Authorization": f"Bearer {token}"}
    deadline = time.monotonic() + 60
    while True:
        asked = {"job_id": job_id}
        got = api.post("/backtest", params={"action": "status"}, json=asked, headers=headers).json()
        if got["status"] != "running" or time.monotonic() > deadline:
            return dict(got)
        time.sleep(0.05)


def test_a_backtest_result_on_a_full_disk_fails_refunded_and_runs_again(
    make_api: Any, settings: Any, disk: SmallDisk, signals_market: Path
) -> None:
    on_disk = settings.replace(var_dir=disk.path / "var", data_dir=signals_market)
    api: Api = make_api(on_disk, clock=ManualClock(SIGNALS_T0))
    _, token = creator(api, ["BTC"])  # one result written while there was room
    headers = {"Authorization": f"Bearer {token}"}
    balance = api.user("account_info", token=token).json()["data"]["svc_credits"]
    objects = disk.path / "var" / "objects"
    before = sorted(p for p in objects.rglob("*") if p.is_file())
    body = {"strategy_name": STRATEGY["strategy_name"], "coins": ["BTC", "ETH"], "timeframe": "1h"}
    disk.fill()
    job = api.post("/backtest", params={"action": "full_range"}, json=body, headers=headers).json()
    failed = _status(api, job["job_id"], token)
    assert failed["status"] == "failed", failed
    assert failed["error"] == "the service's storage is full; credits refunded, run it again later"
    assert api.user("account_info", token=token).json()["data"]["svc_credits"] == balance
    assert sorted(p for p in objects.rglob("*") if p.is_file()) == before  # no object, no temporary file
    disk.free()
    again = api.post("/backtest", params={"action": "full_range"}, json=body, headers=headers).json()
    assert _status(api, again["job_id"], token)["status"] == "completed"
    asked = {"job_id": again["job_id"]}
    result = api.post("/backtest", params={"action": "result"}, json=asked, headers=headers)
    assert result.status_code == 200 and result.json()["job_id"] == again["job_id"]


def _open_times(data: Path, symbol: str) -> np.ndarray:
    return load_klines(symbol, "1m", store=DataStore(data))["open_time"].dt.epoch("ms").to_numpy()


def test_a_market_feed_append_on_a_full_disk_reports_and_catches_up(
    make_api: Any, settings: Any, disk: SmallDisk, signals_market: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SIGNAL_POLL_SECONDS", "0")
    monkeypatch.setenv("MARKET_FEED_SECONDS", "0")  # the test runs the feed itself
    data = disk.path / "data"
    shutil.copytree(signals_market, data)
    live = settings.replace(var_dir=disk.path / "var", data_dir=data, market_feed="embedded")
    api: Api = make_api(live, clock=ManualClock(END_MS // 1000))
    services = api.app.state.services
    api.clock.advance(600)
    assert market.run_feed(services)["appended"] > 0  # the tails exist, written while there was room
    kept = _open_times(data, "BTCUSDT")
    api.clock.advance(4 * 3600)  # more candles than the slack of the tails' last pages holds
    disk.fill()
    passed = market.run_feed(services)
    assert passed["failed"] > 0, passed
    reported = {key: (state.newest_ms, state.error) for key, state in feed._states(services).items()}
    health = api.get("/healthz").json()
    assert "No space left on device" in str(health), health
    now = _open_times(data, "BTCUSDT")
    assert np.array_equal(now[: kept.size], kept)  # what was stored is still there, unchanged
    assert np.all(np.diff(now) == 60_000)  # and what was added is a valid run of candles
    with contextlib.suppress(Exception):
        market.run_feed(services)  # still full: fails again, harms nothing
    disk.free()
    assert market.run_feed(services)["failed"] == 0
    # a series the full pass called up to date was: none is silently hours behind (a short write)
    for key, state in feed._states(services).items():
        newest, error = reported[key]
        assert error is not None or newest == state.newest_ms, (key, newest, state.newest_ms)
    caught_up = _open_times(data, "BTCUSDT")
    assert caught_up[-1] == (END_MS // 1000 + 600 + 4 * 3600) * 1000 - 60_000
    assert np.all(np.diff(caught_up) == 60_000)
