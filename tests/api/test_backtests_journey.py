"""A new user's whole journey through HTTP against a real uvicorn server: register, credits, a
strategy from words, estimate, run, poll, result (equal to the engine's), full_range, portfolio,
public visibility from the full_range returns, history, deletion; a second user sees none of it.
On SQLite and on PostgreSQL."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn

import svc_engine.sim.drivers as drivers
from svc_api.app import create_app
from svc_api.domains import accounts, credits
from svc_api.settings import Settings
from svc_engine.data import DataStore
from svc_engine.data.synthetic import generate_market
from svc_engine.strategy import compile_strategy

STRATEGY = {
    "strategy_name": "rsibounce",
    "market_type": "spot",
    "signal_mode": "signal_orders",
    "timeframe": "1h",
    "entry_condition": "RSI(14) crosses above 30",
    "tp_condition": "3%",
    "sl_condition": "2%",
}
START, END = 1_789_862_400, 1_792_886_400


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def server(database_url: str, tmp_path: Path) -> Iterator[tuple[str, Any, Path]]:
    generate_market(DataStore(tmp_path / "data"), small=True)
    settings = Settings(
        database_url=database_url,
        secret_key=b"journey-secret-0123456789abcdef",
        var_dir=tmp_path / "var",
        data_dir=tmp_path / "data",
    )
    app = create_app(settings)
    port = _free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        assert time.monotonic() < deadline, "server did not start"
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}", app, tmp_path / "data"
    finally:
        server.should_exit = True
        thread.join(timeout=30)


class Client:
    def __init__(self, base: str) -> None:
        self.http = httpx.Client(base_url=base, timeout=30)
        self.token = ""

    def user(self, request_type: str, body: dict[str, Any] | None = None, status: int = 200) -> Any:
        reply = self.http.post(
            "/user", params={"request_type": request_type}, json=body, headers=self._auth()
        )
        assert reply.status_code == status, (request_type, reply.text)
        return reply.json().get("data", reply.json())

    def bt(self, action: str, body: dict[str, Any], status: int = 200) -> Any:
        reply = self.http.post("/backtest", params={"action": action}, json=body, headers=self._auth())
        assert reply.status_code == status, (action, reply.text)
        return reply.json()

    def finished(self, job_id: str) -> dict[str, Any]:
        deadline = time.monotonic() + 30
        while True:
            status = self.bt("status", {"job_id": job_id})
            if status["status"] != "running":
                return status
            assert time.monotonic() < deadline
            time.sleep(0.05)

    def _auth(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"} if self.token else {}


def test_a_new_users_journey(server: tuple[str, Any, Path]) -> None:
    base, app, data_dir = server
    me, other = Client(base), Client(base)
    for client, email in ((me, "journey@example.com"), (other, "other@example.com")):
        client.token = client.user("register", {"email": email, "password": "correct horse battery"})[
            "session_token"
        ]
    svc_id = me.user("account_info")["svc_id"]
    with app.state.services.store.write() as conn:  # a purchase: plan and credits
        accounts.grant_plan(conn, svc_id, "pro", 30)
        credits.deposit_credits(conn, svc_id, 40)

    assert me.user("strategy_generate", STRATEGY)["status"] == "generating"
    deadline = time.monotonic() + 10
    while me.user("strategy_detail", {"strategy_name": "rsibounce"})["status"] == "generating":
        assert time.monotonic() < deadline
        time.sleep(0.05)
    strategy = compile_strategy(STRATEGY["entry_condition"], "3%", "2%")

    one = {"strategy_name": "rsibounce", "timeframe": "1h", "start_ts": START, "end_ts": END}
    estimate = me.bt("estimate", {**one, "coins": ["BTC"]})
    assert (estimate["mode"], estimate["current_credits"], estimate["can_afford"]) == ("range", 39, True)
    run = me.bt("run", {**one, "coin": "BTC"})
    assert run["status"] == "dispatched" and run["cost_credits"] == estimate["estimated_cost_credits"]
    assert me.finished(run["job_id"])["status"] == "completed"
    result = me.bt("result", {"job_id": run["job_id"]})
    expected = drivers.backtest(strategy, "BTCUSDT", "1h", START, END, store=DataStore(data_dir)).to_dict()
    assert {k: result[k] for k in expected} == expected

    full = me.bt("full_range", {"strategy_name": "rsibounce", "coins": ["BTC", "DOT"], "timeframe": "1h"})
    assert me.finished(full["job_id"])["status"] == "completed"
    book = me.bt("portfolio", {"strategy_name": "rsibounce", "coins": ["BTC", "ETH"], "timeframe": "1h"})
    assert me.finished(book["job_id"])["status"] == "completed"
    assert me.bt("coin_result", {"job_id": book["job_id"], "coin": "ETH"})["coin"] == "ETHUSDT"

    public = {
        "strategy_name": "rsibounce",
        "visibility": "public",
        "credits_per_signal": 0.5,
        "timeframe": "1h",
    }
    shown = me.user("strategy_visibility", {**public, "coins": ["BTC", "DOT"]})
    assert (shown["eligible_coins"], shown["rejected_coins"]) == (["BTC"], {"DOT": "negative_return"})

    history = me.user("backtest_history")
    assert [b["job_id"] for b in history["backtests"]] == [book["job_id"], full["job_id"], run["job_id"]]
    notes = me.user("notifications_list")["notifications"]
    assert sum(n["event_type"] == "backtest_complete" for n in notes) == 3

    assert other.user("backtest_history")["count"] == 0
    other.bt("result", {"job_id": run["job_id"]}, status=404)
    other.user("strategy_detail", {"strategy_name": "rsibounce"}, status=404)

    assert me.bt("delete_backtest", {"job_id": run["job_id"]})["success"] is True
    gone = me.user("strategy_delete", {"strategy_name": "rsibounce", "confirm_name": "rsibounce"})
    assert gone["deleted"] is True
    assert me.user("backtest_history")["count"] == 0
    me.bt("status", {"job_id": full["job_id"]}, status=404)
