"""Exchange and real-time figures (issue 16): ``exchange_order_preview`` through the real service
(uvicorn on loopback, SQLite, the paper exchange), and one signal event pushed to 1,000 open
WebSockets.

Printed: preview requests per second with p50/p99, and the time from publishing one event until the
last of 1,000 sockets has it.

Run: ``.venv/bin/python -m pytest benchmarks/test_bench_exchange.py --benchmark-only -s``
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import threading
import time
import uuid
from decimal import Decimal
from typing import Any

import httpx
import pytest
import uvicorn
import websockets

from benchmarks.test_bench_api import Server, _drive, _free_port, _serving, _user
from svc_api.app import create_app
from svc_api.core.pubsub import user_topic
from svc_api.exchange import service as exchange
from svc_api.settings import Settings

SOCKETS = 1_000


@pytest.fixture(scope="module")
def trader(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """The service, and a trader who linked a paper account holding 10 BTC."""
    var = tmp_path_factory.mktemp("svc-bench-exchange")
    port = _free_port()
    env = {
        **os.environ,
        "DATABASE_URL": f"sqlite:///{var / 'svc.db'}",
        "SVC_VAR_DIR": str(var),
        "SECRET_KEY": "bench-secret-key-0123456789abcdef",
        "RATE_LIMIT_SCALE": "100000",
        "TREND_REFRESH_SECONDS": "0",
        "SVC_SEED_SAMPLES": "0",
    }
    env.pop("REDIS_URL", None)
    cmd = [
        sys.executable,
        "-m",
        "uvicorn",
        "--factory",
        "svc_api.app:create_app",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--no-access-log",
        "--log-level",
        "warning",
    ]
    with _serving(cmd, env, port) as running:
        session = _user(
            running.url,
            "register",
            {},
            {"email": f"b-{uuid.uuid4().hex[:8]}@example.com", "password": "correct horse battery"},
        )
        settings = Settings(database_url=env["DATABASE_URL"], secret_key=b"k" * 32, var_dir=var)
        from svc_api.core.services import Services
        from svc_api.migrations import migrate

        services = Services(settings, migrate=migrate)
        keys = exchange.create_account(
            services.store, balances={"BTC": Decimal(10)}, ip_whitelist=("127.0.0.1",), now=int(time.time())
        )
        services.close()
        bearer = {"Authorization": f"Bearer {session['session_token']}"}
        _user(
            running.url,
            "exchange_link",
            bearer,
            {"api_key": keys["api_key"], "api_secret": keys["api_secret"]},
        )
        yield running, bearer


def test_bench_exchange_order_preview(benchmark: Any, trader: tuple[Server, dict[str, str]]) -> None:
    server, bearer = trader
    order = {
        "symbol": "BTCUSDT",
        "side": "BUY",
        "quantity": "0.01000",
        "entry_price": "60000.00",
        "take_profit_price": "63000.00",
        "stop_loss_price": "57000.00",
        "order_source": "manual",
    }
    load = benchmark.pedantic(
        lambda: asyncio.run(
            _drive(
                server,
                "POST",
                "/user",
                params={"request_type": "exchange_order_preview"},
                headers=bearer,
                json=order,
            )
        ),
        rounds=1,
        iterations=1,
    )
    print("\n" + load.line("exchange_order_preview"))
    benchmark.extra_info.update(rps=round(load.rps), p99_ms=round(load.p99_ms, 2))
    assert load.statuses.get(200, 0) > 0


def test_bench_push_one_signal_to_1000_sockets(benchmark: Any, tmp_path: Any) -> None:
    settings = Settings(
        database_url=f"sqlite:///{tmp_path / 'svc.db'}",
        secret_key=b"k" * 32,
        var_dir=tmp_path,
        ws_max_connections=SOCKETS + 10,
        seed_samples=0,
        run_workers=0,
    )
    app = create_app(settings)
    services = app.state.services
    port = _free_port()
    server = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", ws_max_queue=64)
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.05)
    token = httpx.post(
        f"http://127.0.0.1:{port}/user",
        params={"request_type": "register"},
        json={"email": "ws@example.com", "password": "correct horse battery"},
    ).json()["data"]
    svc_id = token["svc_id"]
    timing: dict[str, float] = {}

    async def run() -> None:
        url = f"ws://127.0.0.1:{port}/ws?token={token['session_token']}"
        sockets = [await websockets.connect(url) for _ in range(SOCKETS)]
        for ws in sockets:
            await ws.send(json.dumps({"action": "subscribe", "channel": "signals"}))
            await ws.recv()
        began = time.perf_counter()
        services.hub.publish(
            user_topic(svc_id), {"channel": "signals", "event": "opened", "position_key": "k"}
        )
        await asyncio.gather(*(ws.recv() for ws in sockets))
        timing["push"] = time.perf_counter() - began
        await asyncio.gather(*(ws.close() for ws in sockets))

    benchmark.pedantic(lambda: asyncio.run(run()), rounds=1, iterations=1)
    server.should_exit = True
    thread.join(10)
    print(
        f"\none signal event to {SOCKETS} sockets: {timing['push'] * 1000:.0f} ms "
        f"({SOCKETS / timing['push']:,.0f} deliveries/s; client and server on the same 2 cores)"
    )
    benchmark.extra_info.update(push_ms=round(timing["push"] * 1000, 1))
