"""A portfolio backtest end to end through HTTP with the job runner on a local Ray runtime
(``RAY_ADDRESS`` set): the result equals the engine's, run in process."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import svc_engine.sim.drivers as drivers
from svc_api.accounts import service as accounts
from svc_api.backtests import jobs
from svc_api.credits import service as credits
from svc_api.settings import Settings
from svc_engine.data import DataStore
from svc_engine.data.synthetic import generate_market
from svc_engine.executors import RayExecutor
from svc_engine.strategy import compile_strategy
from tests.api.conftest import SECRET
from tests.api.journey_helpers import as_requested

pytestmark = pytest.mark.ray

STRATEGY = {
    "strategy_name": "raybook",
    "market_type": "spot",
    "signal_mode": "signal_orders",
    "timeframe": "1h",
    "entry_condition": "close crosses above SMA(20)",
    "tp_condition": "3%",
    "sl_condition": "2%",
}


@pytest.fixture(scope="module")
def ray_runtime() -> Iterator[RayExecutor]:
    """A local Ray runtime (2 CPUs, small object store); the service's executor joins it."""
    pytest.importorskip("ray")
    try:
        executor = RayExecutor(num_cpus=2, object_store_memory=200 * 1024 * 1024)
    except Exception as error:  # a sandbox without shared memory or sockets
        pytest.skip(f"a local Ray runtime cannot start here: {error}")
    yield executor
    executor.close()


def test_portfolio_on_ray_equals_the_engine(ray_runtime: RayExecutor, make_api: Any, tmp_path: Path) -> None:
    generate_market(DataStore(tmp_path / "data"), small=True)
    settings = Settings(
        database_url=f"sqlite:///{tmp_path / 'svc.db'}",
        secret_key=SECRET,
        var_dir=tmp_path / "var",
        data_dir=tmp_path / "data",
        ray_address="local",
    )
    api = make_api(settings)
    runner = jobs.runner_of(api.app.state.services)
    assert isinstance(runner.executor, RayExecutor) and runner.workers() == 2
    data = api.register()
    token = data["session_token"]
    with api.app.state.services.store.write() as conn:
        accounts.grant_plan(conn, data["svc_id"], "pro", 30, now=api.clock.now())
        credits.deposit_credits(conn, data["svc_id"], 10, now=int(time.time()))
    assert api.user("strategy_generate", STRATEGY, token=token).status_code == 200
    deadline = time.monotonic() + 10
    while (
        api.user("strategy_detail", {"strategy_name": "raybook"}, token=token).json()["data"]["status"]
        != "active"
    ):
        assert time.monotonic() < deadline
        time.sleep(0.02)

    headers = {"Authorization": f"Bearer {token}"}
    body = {"strategy_name": "raybook", "coins": ["BTC", "ETH", "SOL"], "timeframe": "1h", "divide": 2}
    launch = api.post("/backtest", params={"action": "portfolio"}, json=body, headers=headers)
    assert launch.status_code == 200, launch.text
    job_id = launch.json()["job_id"]
    deadline = time.monotonic() + 60
    while True:
        status = api.post(
            "/backtest", params={"action": "status"}, json={"job_id": job_id}, headers=headers
        ).json()
        if status["status"] != "running" or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    assert status["status"] == "completed", status
    assert set(status["coin_progress"]) == {"BTC", "ETH", "SOL"}  # as the request named them (issue 13)
    result = api.post(
        "/backtest", params={"action": "result"}, json={"job_id": job_id}, headers=headers
    ).json()
    strategy = compile_strategy(STRATEGY["entry_condition"], "3%", "2%")
    expected = as_requested(
        drivers.portfolio(
            strategy, ["BTCUSDT", "ETHUSDT", "SOLUSDT"], "1h", divide=2, store=DataStore(tmp_path / "data")
        ).to_dict(),
        {"BTCUSDT": "BTC", "ETHUSDT": "ETH", "SOLUSDT": "SOL"},
    )
    assert {k: result[k] for k in expected} == expected
    assert result["summary"]["total_trades"] > 0
