"""Time from launch to completed result of backtest jobs through the HTTP API (in-process ASGI
client, SQLite, local executor): a ``full_range`` over the embedded crypto universe and a ``run`` of
one year of BTCUSDT 1m candles.

The full synthetic market (24 crypto pairs of two years of 1h candles, 17,520 each) is generated
once into a temporary directory, and the last year of the shared BTCUSDT 1m dataset (525,600
candles) is written beside it as ``crypto/BTCUSDT/1m`` (the ``run`` case is skipped without it).
Each round: the launch ``POST /backtest?action=...``, ``status`` polled every 5 ms until
``completed``, then ``result``. Printed beside the wall time: the engine called directly on the same
:class:`~svc_api.backtests.execution.Work`, and the runner's steps timed in the same rounds (launch
request, queue wait before the engine, engine, result storage = ``to_dict`` + JSON + object put +
row update, lag of the poll, the ``result`` request that reads and re-encodes it).

Run: ``.venv/bin/python -m pytest benchmarks/test_bench_backtest_api.py --benchmark-only -s``
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from svc_api.accounts import service as accounts
from svc_api.app import create_app
from svc_api.backtests import execution, jobs
from svc_api.credits import service as credits
from svc_api.settings import Settings
from svc_engine.data import DataStore
from svc_engine.data.synthetic import generate_market
from svc_engine.executors import LocalExecutor
from svc_engine.instruments import universe
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
BTC_1M = Path("/work/shared/datasets/crypto/BTCUSDT-1m.parquet")
YEAR_MS = 365 * 86_400_000
POLL_S = 0.005


def _year_of_1m() -> pl.DataFrame | None:
    """The last 365 days of the shared BTCUSDT 1m candles, or None when the dataset is absent."""
    if not BTC_1M.exists():
        return None
    frame = pl.read_parquet(BTC_1M)
    last = int(frame["open_time"].max())
    return frame.filter(pl.col("open_time") > last - YEAR_MS)


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Any:
    root = tmp_path_factory.mktemp("bench-backtests")
    store = DataStore(root / "data")
    generate_market(store)
    year = _year_of_1m()
    if year is not None:
        store.write_klines("crypto", "BTCUSDT", "1m", year, replace=True)
    settings = Settings(
        database_url=f"sqlite:///{root / 'svc.db'}",
        secret_key=b"b" * 32,
        var_dir=root / "var",
        data_dir=root / "data",
        rate_limit_scale=100.0,  # polled every 5 ms: the limits must not be what is measured
    )
    api = Api(create_app(settings))
    data = api.register()
    token = data["session_token"]
    with api.app.state.services.store.write() as conn:
        accounts.grant_plan(conn, data["svc_id"], "pro", 30, now=int(time.time()))
        credits.deposit_credits(conn, data["svc_id"], 100_000, now=int(time.time()))
    assert api.user("strategy_generate", STRATEGY, token=token).status_code == 200
    while (
        api.user("strategy_detail", {"strategy_name": "benchsma"}, token=token).json()["data"]["status"]
        != "active"
    ):
        time.sleep(0.02)
    yield api, token, root / "data", year
    api.close()


class Steps:
    """Times of the runner's steps in one round, recorded by wrapping them (see :meth:`install`)."""

    def __init__(self) -> None:
        self.marks: dict[str, float] = {}
        self.work: execution.Work | None = None
        self.rounds: list[dict[str, float]] = []

    def install(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """Wrap ``submit``, ``run_engine`` and ``complete`` of the job runner with time marks."""
        monkeypatch.setattr(jobs.JobRunner, "submit", self._timed(jobs.JobRunner.submit, "submit"))
        monkeypatch.setattr(jobs.JobRunner, "complete", self._timed(jobs.JobRunner.complete, "store"))
        run_engine = jobs.run_engine

        def engine(work: execution.Work, **kwargs: Any) -> Any:
            self.work = work
            return self._timed(run_engine, "engine")(work, **kwargs)

        monkeypatch.setattr(jobs, "run_engine", engine)

    def _timed(self, fn: Callable[..., Any], name: str) -> Callable[..., Any]:
        def timed(*args: Any, **kwargs: Any) -> Any:
            self.marks[f"{name}0"] = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                self.marks[f"{name}1"] = time.perf_counter()

        return timed

    def round_trip(self, api: Api, token: str, action: str, body: dict[str, Any]) -> dict[str, Any]:
        """Launch, poll ``status`` until done, read ``result``; keep the round's step times."""
        headers = {"Authorization": f"Bearer {token}"}
        m = self.marks
        m.clear()
        m["launch0"] = time.perf_counter()
        launch = api.post("/backtest", params={"action": action}, json=body, headers=headers).json()
        m["launch1"] = time.perf_counter()
        job = {"job_id": launch["job_id"]}
        while True:
            status = api.post("/backtest", params={"action": "status"}, json=job, headers=headers).json()
            assert "status" in status, status
            if status["status"] != "running":
                break
            time.sleep(POLL_S)
        m["result0"] = time.perf_counter()
        reply = api.post("/backtest", params={"action": "result"}, json=job, headers=headers).json()
        m["result1"] = time.perf_counter()
        self.rounds.append(
            {
                "total": m["result1"] - m["launch0"],
                "launch": m["launch1"] - m["launch0"],
                "queue": m["engine0"] - m["submit1"],
                "engine": m["engine1"] - m["engine0"],
                "store": m["store1"] - m["store0"],
                "poll": m["result0"] - m["store1"],
                "result": m["result1"] - m["result0"],
            }
        )
        return reply

    def report(self, what: str, candles: int, engine_direct_s: float, benchmark: Any) -> str:
        """One line: the wall time, the engine alone, and the runner's split of the best round."""
        best = min(self.rounds[1:] or self.rounds, key=lambda r: r["total"])
        api_s, best_s = benchmark.stats.stats.mean, benchmark.stats.stats.min
        split = ", ".join(f"{k} {best[k] * 1e3:.0f} ms" for k in ("launch", "queue", "engine", "store"))
        overhead = best["total"] - best["engine"]
        return (
            f"\n{what} ({candles:,} candles): launch -> completed result {api_s:.3f} s mean,"
            f" {best_s:.3f} s best ({candles / best_s:,.0f} candles/s). Engine alone on the same work"
            f" {engine_direct_s:.3f} s: service / engine x{best_s / engine_direct_s:.2f}."
            f" Best round: {split},"
            f" poll lag {best['poll'] * 1e3:.0f} ms, result read {best['result'] * 1e3:.0f} ms;"
            f" runner overhead {overhead * 1e3:.0f} ms"
        )


def _engine_direct(work: execution.Work, data_dir: Path) -> float:
    """Best of two calls of the engine on ``work`` directly (warm), no progress writes."""
    store = DataStore(data_dir)
    times = []
    with LocalExecutor() as executor:
        for _ in range(3):
            began = time.perf_counter()
            execution.run_engine(work, executor=executor, store=store, progress=None)
            times.append(time.perf_counter() - began)
    return min(times[1:])


def test_full_range_launch_to_result(benchmark: Any, service: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    api, token, data_dir, _ = service
    steps = Steps()
    steps.install(monkeypatch)
    body = {"strategy_name": "benchsma", "coins": COINS, "timeframe": "1h"}
    result = benchmark.pedantic(
        steps.round_trip, args=(api, token, "full_range", body), rounds=3, warmup_rounds=1
    )
    assert result["summary"]["completed"] == len(COINS) == 24
    assert steps.work is not None
    engine_s = _engine_direct(steps.work, data_dir)
    what = f"full_range over {len(COINS)} crypto pairs x 17,520 1h candles"
    print(steps.report(what, len(COINS) * 17_520, engine_s, benchmark))


def test_run_year_of_1m_launch_to_result(
    benchmark: Any, service: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    api, token, data_dir, year = service
    if year is None:
        pytest.skip(f"the shared dataset {BTC_1M} is absent: no year of 1m candles to run")
    steps = Steps()
    steps.install(monkeypatch)
    start_ts, end_ts = int(year["open_time"][0]) // 1000, int(year["open_time"][-1]) // 1000
    body = {
        "strategy_name": "benchsma",
        "coin": "BTC",
        "timeframe": "1m",
        "start_ts": start_ts,
        "end_ts": end_ts,
    }
    result = benchmark.pedantic(steps.round_trip, args=(api, token, "run", body), rounds=3, warmup_rounds=1)
    assert result["summary"]["total_trades"] > 0, result.get("summary")
    assert steps.work is not None
    engine_s = _engine_direct(steps.work, data_dir)
    print(steps.report("run of BTCUSDT over one year of 1m candles", year.height, engine_s, benchmark))
