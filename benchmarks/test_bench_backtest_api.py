"""Time from launch to completed result of a ``full_range`` backtest over the embedded crypto
universe, through the HTTP API (in-process ASGI client, SQLite, local executor).

The full synthetic market (24 crypto pairs of two years of 1h candles, 17,520 each) is generated
once into a temporary directory. Each round: ``POST /backtest?action=full_range`` for every pair at
1h, poll ``status`` every 20 ms until ``completed``, then read ``result``. Printed: the wall time of
a round, candles per second, and the same ``full_range`` called on the engine directly, whose
ratio is the service's overhead (job row, progress writes, object store, polling).

Run: ``.venv/bin/python -m pytest benchmarks/test_bench_backtest_api.py --benchmark-only -s``
"""

from __future__ import annotations

import time
from typing import Any

import pytest

import svc_engine.sim.drivers as drivers
from svc_api.accounts import service as accounts
from svc_api.app import create_app
from svc_api.backtests import jobs
from svc_api.credits import service as credits
from svc_api.settings import Settings
from svc_engine.data import DataStore
from svc_engine.data.synthetic import generate_market
from svc_engine.executors import LocalExecutor
from svc_engine.instruments import universe
from svc_engine.strategy import compile_strategy
from tests.api.conftest import Api

STRATEGY = {
    "strategy_name": "benchsma",
    "market_type": "spot",
    "signal_mode": "signal_orders",
    "timeframe": "1h",
    "entry_condition": "close crosses above SMA(20)",
    "tp_condition": "3%",
    "sl_condition": "2%",
}
COINS = [i.display for i in universe() if i.market == "crypto"]


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Any:
    root = tmp_path_factory.mktemp("bench-backtests")
    generate_market(DataStore(root / "data"))
    settings = Settings(
        database_url=f"sqlite:///{root / 'svc.db'}",
        secret_key=b"b" * 32,
        var_dir=root / "var",
        data_dir=root / "data",
    )
    api = Api(create_app(settings))
    data = api.register()
    token = data["session_token"]
    with api.app.state.services.store.write() as conn:
        accounts.grant_plan(conn, data["svc_id"], "pro", 30, now=int(time.time()))
        credits.deposit_credits(conn, data["svc_id"], 10_000, now=int(time.time()))
    assert api.user("strategy_generate", STRATEGY, token=token).status_code == 200
    while (
        api.user("strategy_detail", {"strategy_name": "benchsma"}, token=token).json()["data"]["status"]
        != "active"
    ):
        time.sleep(0.02)
    yield api, token, root / "data"
    api.close()


def _round_trip(api: Api, token: str) -> dict[str, Any]:
    headers = {"Authorization": f"Bearer {token}"}
    body = {"strategy_name": "benchsma", "coins": COINS, "timeframe": "1h"}
    launch = api.post("/backtest", params={"action": "full_range"}, json=body, headers=headers).json()
    job = {"job_id": launch["job_id"]}
    while (
        api.post("/backtest", params={"action": "status"}, json=job, headers=headers).json()["status"]
        == "running"
    ):
        time.sleep(0.02)
    return api.post("/backtest", params={"action": "result"}, json=job, headers=headers).json()


def test_full_range_launch_to_result(benchmark: Any, service: Any) -> None:
    api, token, data_dir = service
    result = benchmark.pedantic(_round_trip, args=(api, token), rounds=3, warmup_rounds=1)
    assert result["summary"]["completed"] == len(COINS) == 24
    candles = sum(r["total_positions"] >= 0 for r in result["results"].values()) * 17_520
    strategy = compile_strategy(STRATEGY["entry_condition"], "3%", "2%")
    store = DataStore(data_dir)
    with LocalExecutor() as executor:
        symbols = [f"{c}USDT" for c in COINS]
        drivers.full_range(strategy, symbols, "1h", store=store, executor=executor)
        began = time.perf_counter()
        direct = drivers.full_range(strategy, symbols, "1h", store=store, executor=executor)
        engine_s = time.perf_counter() - began
    began = time.perf_counter()
    payload = direct.to_dict()
    size = len(jobs.dumps(payload))
    shape_s = time.perf_counter() - began
    assert payload["summary"] == result["summary"]
    api_s = benchmark.stats.stats.mean
    print(
        f"\nfull_range over {len(COINS)} crypto pairs x 17,520 1h candles ({candles:,} candles):"
        f" launch -> completed result {api_s:.3f} s mean, {benchmark.stats.stats.min:.3f} s best"
        f" ({candles / api_s:,.0f} candles/s). Engine alone {engine_s:.3f} s, plus to_dict() and JSON"
        f" of the {size / 1e6:.1f} MB result {shape_s:.3f} s; service / engine x{api_s / engine_s:.2f},"
        f" service / (engine + result JSON) x{api_s / (engine_s + shape_s):.2f}"
    )
