"""A soak of the service as ``make run`` starts it: ``svc serve`` on the embedded defaults (SQLite,
the synthetic market replayed at 600x, so the market feed appends, trends refresh and the signal
worker evaluates throughout) under a steady mix of about 40 requests a second from four users
(reads of every family, and each user's full-range backtest a minute with its status) for
``BENCH_SOAK_SECONDS`` (default 3,600; bounded: the run stops then, whatever happened).

Printed: the server's resident memory every ``SAMPLE`` seconds, its growth over the first and the
second half of the run in MB an hour (a warm-up shows a first half that grows and a flat second
half; a leak grows at the same rate in both), ``var/``'s growth, the requests served and the
non-2xx answers. The run fails only on a 5xx, or when the second half grows more than
``LEAK_MB_PER_HOUR``.
"""

from __future__ import annotations

import itertools
import os
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import pytest

from benchmarks.test_bench_api_wrk import ROOT, Server, _port, _serve, _stop, _tree

SECONDS = int(os.environ.get("BENCH_SOAK_SECONDS", "3600"))
RATE = 40.0
SAMPLE = max(5, min(60, SECONDS // 60))
LEAK_MB_PER_HOUR = 30.0
USERS = 4
LAUNCH_EVERY = 60.0  # seconds between one user's backtests: 240 full-range jobs an hour
STRATEGY = {
    "market_type": "spot",
    "signal_mode": "signal_orders",
    "timeframe": "1h",
    "entry_condition": "RSI(14) crosses above 30",
    "tp_condition": "3%",
    "sl_condition": "2%",
}


def _env(var: Path) -> dict[str, str]:
    env = {
        **os.environ,
        "SVC_VAR_DIR": str(var),
        "DATA_DIR": str(var / "data"),
        "DATABASE_URL": f"sqlite:///{var / 'svc.db'}",
        "SECRET_KEY": "soak-secret-key-0123456789abcdef",
        "MARKET_REPLAY_SPEED": "600",
        "RATE_LIMIT_SCALE": "1000",
    }
    env.pop("REDIS_URL", None)
    return env


@pytest.fixture(scope="module")
def served() -> Iterator[tuple[Server, dict[str, str], Path]]:
    var = Path(tempfile.mkdtemp(prefix="svc-soak-"))
    env = _env(var)
    svc = str(Path(sys.executable).parent / "svc")
    subprocess.run([svc, "data", "init", "--if-missing"], env=env, cwd=ROOT, check=True, capture_output=True)
    port = _port()
    server = _serve([svc, "serve", "--port", str(port), "--log-level", "warning"], env, port)
    yield server, env, var
    _stop(server)


class _User:
    """One account (a pro plan and credits from ``svc admin``) with its own strategy."""

    def __init__(self, server: Server, env: dict[str, str], n: int) -> None:
        self.url, self.http = server.url, httpx.Client(timeout=60)
        data = self.call(
            "/user",
            "register",
            {"email": f"soak-{n}-{uuid.uuid4().hex[:6]}@example.com", "password": "correct horse battery"},
        )
        self.headers = {"Authorization": f"Bearer {data['session_token']}"}
        svc = str(Path(sys.executable).parent / "svc")
        for args in (
            ["grant-plan", data["svc_id"], "pro", "--days", "30"],
            ["credits", data["svc_id"], "100000", "--reason", "soak"],
        ):
            subprocess.run([svc, "admin", *args], env=env, cwd=ROOT, check=True, capture_output=True)
        self.name = f"soak{n}"
        self.call("/user", "strategy_generate", {"strategy_name": self.name, **STRATEGY})

    def call(
        self, path: str, kind: str, body: dict[str, Any] | None = None, *, key: str = "request_type"
    ) -> Any:
        headers = getattr(self, "headers", {})
        reply = self.http.post(f"{self.url}{path}", params={key: kind}, json=body or {}, headers=headers)
        if reply.status_code >= 500:
            raise AssertionError(f"{path} {kind}: {reply.status_code} {reply.text[:300]}")
        if reply.status_code != 200:
            return reply.status_code
        payload = reply.json()
        return payload.get("data", payload)  # /backtest answers at the top level


def _mix(user: _User, job_ids: list[str]) -> list[Callable[[], Any]]:
    """One round of the workload: reads of each family, an edit, and a backtest with its result."""

    last = [0.0]

    def launch() -> Any:
        if time.monotonic() - last[0] < LAUNCH_EVERY:
            return None
        last[0] = time.monotonic()
        body = {"strategy_name": user.name, "coins": ["BTC", "ETH"], "timeframe": "1h"}
        got = user.call("/backtest", "full_range", body, key="action")
        if isinstance(got, dict) and "job_id" in got:
            job_ids.append(got["job_id"])
        elif not job_ids:
            print("launch refused:", got)
        return got

    def result() -> Any:
        return user.call("/backtest", "status", {"job_id": job_ids[-1]}, key="action") if job_ids else None

    return [
        lambda: user.call("/user", "account_info"),
        lambda: user.call("/user", "active_signals"),
        lambda: user.call("/user", "backtest_history"),
        lambda: user.call("/user", "notifications_list"),
        lambda: user.call("/user", "strategy_detail", {"strategy_name": user.name}),
        lambda: user.http.get(f"{user.url}/tradingdata", params={"request_type": "market_ticker"}),
        lambda: user.http.get(f"{user.url}/tradingdata", params={"request_type": "trend_signals"}),
        lambda: user.http.get(f"{user.url}/tradingdata", params={"request_type": "marketplace_browse"}),
        lambda: user.http.get(f"{user.url}/tradingdata", params={"request_type": "community_posts"}),
        lambda: user.http.get(f"{user.url}/education/v1/catalog"),
        result,
        launch,
    ]


def _outcome(got: Any) -> str:
    """``2xx`` or the status of a refused call (a ``/user`` call returns its status when not 200)."""
    code = got if isinstance(got, int) else getattr(got, "status_code", 200)
    return "2xx" if code < 300 else str(code)


def _rss_mb(server: Server) -> float:
    total = 0
    for pid in _tree(server.process.pid):
        status = Path(f"/proc/{pid}/status")
        if status.exists():
            line = next(x for x in status.read_text().splitlines() if x.startswith("VmRSS:"))
            total += int(line.split()[1])
    return total / 1024


def _du_mb(path: Path) -> float:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) / 2**20


def _slope_mb_per_hour(times: np.ndarray, rss: np.ndarray) -> float:
    return float(np.polyfit(times, rss, 1)[0] * 3600) if len(times) > 2 else 0.0


def test_bench_soak_memory_and_disk_of_make_run(
    benchmark: Any, served: tuple[Server, dict[str, str], Path]
) -> None:
    server, env, var = served
    users = [_User(server, env, n) for n in range(USERS)]
    jobs: list[list[str]] = [[] for _ in users]
    work = itertools.cycle([f for u, j in zip(users, jobs, strict=True) for f in _mix(u, j)])
    codes: Counter[str] = Counter()
    samples: list[tuple[float, float]] = []
    stop = threading.Event()

    def sample() -> None:
        began = time.monotonic()
        while not stop.wait(SAMPLE):
            samples.append((time.monotonic() - began, _rss_mb(server)))

    disk0 = _du_mb(var)
    sampler = threading.Thread(target=sample, daemon=True)

    def soak() -> None:
        sampler.start()
        began = time.monotonic()
        for n in itertools.count():
            due = began + n / RATE
            if due - began > SECONDS:
                break
            time.sleep(max(0.0, due - time.monotonic()))
            got = next(work)()
            codes[
                "2xx" if not isinstance(got, int) and getattr(got, "status_code", 200) < 300 else "4xx"
            ] += 1
        stop.set()

    benchmark.pedantic(soak, rounds=1, iterations=1)
    times, rss = (np.asarray(x) for x in zip(*samples, strict=True))
    half = times[-1] / 2
    first = _slope_mb_per_hour(times[times <= half], rss[times <= half])
    second = _slope_mb_per_hour(times[times > half], rss[times > half])
    print(
        f"\nsoak of `svc serve` on the embedded defaults, {SECONDS} s at {RATE:.0f} req/s: "
        f"{sum(codes.values()):,} requests ({dict(codes)}); resident {rss[0]:.0f} MB at {times[0]:.0f} s, "
        f"{rss.max():.0f} MB at most, {rss[-1]:.0f} MB at the end; growth {first:+.1f} MB/h in the first "
        f"half, {second:+.1f} MB/h in the second; var/ {disk0:.0f} -> {_du_mb(var):.0f} MB; "
        f"backtests {sum(len(j) for j in jobs)} (load {os.getloadavg()[0]:.1f})"
    )
    print("resident MB every", SAMPLE, "s:", " ".join(f"{x:.0f}" for x in rss))
    assert second < LEAK_MB_PER_HOUR, f"the second half grew {second:.1f} MB/h: a leak"
