"""The one worker lifecycle: the app's lifespan starts every registered worker and ``/healthz``
reports each; ``SVC_RUN_WORKERS=0`` leaves them out; ``svc worker`` runs them in a process of its
own and stops them cleanly on SIGTERM."""

from __future__ import annotations

import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from svc_api.settings import Settings
from svc_api.workers import REGISTRY
from tests.api.journey_helpers import server_env, svc_command


def test_healthz_reports_every_registered_worker(make_api: Any, settings: Settings) -> None:
    api = make_api(settings)
    body = api.get("/healthz").json()
    # The test apps switch the trend refresh and the retention off (TREND_REFRESH_SECONDS=0,
    # RETENTION_SWEEP_SECONDS=0), have no bot API (BOT_API_URL unset) and no market feed (Settings
    # made in code: MARKET_FEED off): those factories return None.
    assert set(body["workers"]) == set(REGISTRY.names()) - {
        "trend_refresh",
        "retention",
        "messenger_bot",
        "market_feed",
    }
    assert all(w["state"] == "running" for w in body["workers"].values()), body
    assert (body["status"], body["store"]) == ("ok", "ok")
    assert api.get("/readyz").status_code == 200


def test_no_workers_in_a_server_that_leaves_them_to_svc_worker(
    make_api: Any, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SVC_RUN_WORKERS", "0")
    assert make_api(settings).get("/healthz").json()["workers"] == {}


def test_svc_worker_runs_the_workers_and_stops_on_sigterm(tmp_path: Path) -> None:
    env = server_env(f"sqlite:///{tmp_path / 'svc.db'}", tmp_path / "data", tmp_path / "var")
    env["TREND_REFRESH_SECONDS"] = "0"
    log = tmp_path / "worker.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            svc_command("worker", "--report", "0.2"), env=env, stdout=out, stderr=subprocess.STDOUT
        )
    try:
        deadline = time.monotonic() + 60
        while "health" not in log.read_text(errors="replace") and time.monotonic() < deadline:
            assert proc.poll() is None, log.read_text()
            time.sleep(0.2)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(30) == 0, log.read_text()
    finally:
        if proc.poll() is None:
            proc.kill()
    text = log.read_text()
    assert (
        "workers running: ['strategy_generation', 'backtest_runner', 'idempotency_leases', 'signals', "
        "'marketplace_renewals', 'notification_fanout', 'notification_outbox', 'community_purge', "
        "'exchange_reconciler', 'edu_payment_callbacks', 'edu_payouts', 'edu_uploads', 'retention']"
    ) in text
    assert "'strategy_generation': {'state': 'running'" in text
    assert text.rstrip().endswith("workers stopped")
