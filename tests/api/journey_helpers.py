"""The real server in a subprocess, the ``svc`` command and an HTTP client for the journey test.

Every wait is bounded: the server must answer ``/health`` within ``START_TIMEOUT`` seconds and stop
within ``STOP_TIMEOUT`` after SIGTERM (then it is killed); a CLI call is killed after ``CLI_TIMEOUT``.

Example:
    >>> 1024 <= free_port() < 65536
    True
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import httpx

BIN = Path(sys.executable).parent
START_TIMEOUT = 60.0
STOP_TIMEOUT = 15.0
CLI_TIMEOUT = 60.0
# Variables of the developer's shell that would point the server somewhere else than the test's.
SCRUBBED = ("REDIS_URL", "RAY_ADDRESS", "OBJECT_STORE_URL", "S3_ENDPOINT_URL", "SECRET_KEY", "CORS_ORIGINS")


def free_port() -> int:
    """A TCP port of 127.0.0.1 that nobody listens on right now.

    Example:
        >>> free_port() != free_port() or True
        True
    """
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def server_env(database_url: str, data_dir: Path, var_dir: Path) -> dict[str, str]:
    """The environment of the server and of the CLI: the test's database, data and var directories.

    Example:
        >>> env = server_env("sqlite:///x.db", Path("/d"), Path("/v"))
        >>> env["DATABASE_URL"], env["DATA_DIR"], env["SVC_VAR_DIR"]
        ('sqlite:///x.db', '/d', '/v')
    """
    env = {k: v for k, v in os.environ.items() if k not in SCRUBBED}
    return env | {
        "DATABASE_URL": database_url,
        "DATA_DIR": str(data_dir),
        "SVC_VAR_DIR": str(var_dir),
        "SECRET_KEY": "journey-secret-key-0123456789abcdef",
        # One client makes every request of the journey from one address: no throttling.
        "RATE_LIMIT_SCALE": "100",
        "PYTHONUNBUFFERED": "1",
        # The candles a test planted stay as they are unless it turns the market feed on.
        "MARKET_FEED": "off",
    }


class Server:
    """``uvicorn --factory svc_api.app:create_app`` on a free port, output kept in ``log``."""

    def __init__(
        self,
        env: Mapping[str, str],
        log: Path,
        *,
        via_svc: bool = False,
        extra_args: tuple[str, ...] = (),
        ready: tuple[int, ...] = (200,),
    ) -> None:
        self.via_svc = via_svc  # run `svc serve` (its timeouts and connection limit) instead of uvicorn
        self.extra_args = extra_args
        self.ready = ready  # the /health statuses that mean "up"
        self.env = dict(env)
        self.log = log
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> Server:
        """Start the server and wait (bounded) until ``/health`` answers 200."""
        command = [
            str(BIN / "python"),
            "-m",
            "uvicorn",
            "--factory",
            "svc_api.app:create_app",
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
            "--no-access-log",
        ]
        if self.via_svc:
            command = svc_command("serve", "--host", "127.0.0.1", "--port", str(self.port), *self.extra_args)
        with self.log.open("ab") as out:
            self.process = subprocess.Popen(command, env=self.env, stdout=out, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"server exited with {self.process.returncode}:\n{self.tail()}")
            try:
                if httpx.get(f"{self.url}/health", timeout=2).status_code in self.ready:
                    return self
            except httpx.TransportError:
                pass
            time.sleep(0.2)
        self.stop()
        raise RuntimeError(f"server not healthy after {START_TIMEOUT} s:\n{self.tail()}")

    def stop(self) -> int | None:
        """SIGTERM, wait ``STOP_TIMEOUT`` seconds, then SIGKILL; returns the exit status."""
        if self.process is None or self.process.poll() is not None:
            return None if self.process is None else self.process.returncode
        self.process.send_signal(signal.SIGTERM)
        try:
            return self.process.wait(STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            self.process.kill()
            return self.process.wait(STOP_TIMEOUT)

    def tail(self, lines: int = 40) -> str:
        """The last ``lines`` lines the server printed."""
        if not self.log.exists():
            return ""
        return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])


def svc_command(*args: str) -> list[str]:
    """The command line of ``svc <args>`` (the command installed next to this Python).

    Example:
        >>> Path(svc_command()[0]).name
        'svc'
    """
    return [str(BIN / "svc"), *args]


def svc(env: Mapping[str, str], *args: str) -> Any:
    """Run ``svc <args>`` (the installed command) and return its JSON output.

    Example:
        >>> svc_command("admin", "credits", "AB12CD", "100", "--reason", "test")[1:3]
        ['admin', 'credits']
    """
    done = subprocess.run(
        svc_command(*args), env=dict(env), capture_output=True, text=True, timeout=CLI_TIMEOUT
    )
    if done.returncode != 0:
        raise AssertionError(f"svc {' '.join(args)} exited {done.returncode}: {done.stderr.strip()}")
    return json.loads(done.stdout)


class Client:
    """The journey's HTTP client: ``/user`` operations and ``/backtest`` actions with a session token."""

    def __init__(self, url: str) -> None:
        self.http = httpx.Client(base_url=url, timeout=30)

    def close(self) -> None:
        self.http.close()

    def user(self, request_type: str, body: dict[str, Any] | None = None, token: str = "") -> httpx.Response:
        """``POST /user?request_type=...``."""
        return self.http.post(
            "/user", params={"request_type": request_type}, json=body or {}, headers=_auth(token)
        )

    def backtest(self, action: str, body: dict[str, Any], token: str) -> httpx.Response:
        """``POST /backtest?action=...``."""
        return self.http.post("/backtest", params={"action": action}, json=body, headers=_auth(token))

    def data(self, request_type: str, body: dict[str, Any] | None = None, token: str = "") -> Any:
        """The ``data`` of a successful ``/user`` reply."""
        reply = self.user(request_type, body, token)
        assert reply.status_code == 200, (request_type, reply.status_code, reply.text)
        assert reply.json()["ok"] is True, reply.text
        return reply.json()["data"]

    def ok(self, action: str, body: dict[str, Any], token: str) -> Any:
        """The body of a successful ``/backtest`` reply."""
        reply = self.backtest(action, body, token)
        assert reply.status_code == 200, (action, reply.status_code, reply.text)
        return reply.json()

    def register(self, email: str) -> tuple[str, str]:
        """Register ``email``; returns ``(svc_id, session_token)``."""
        data = self.data("register", {"email": email, "password": "correct horse battery"})
        return data["svc_id"], data["session_token"]

    def credits(self, token: str) -> float:
        """The caller's balance (``account_info.svc_credits``)."""
        return float(self.data("account_info", token=token)["svc_credits"])


def _auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"} if token else {}


def poll(
    read: Callable[[], dict[str, Any]], done: Callable[[dict[str, Any]], bool], timeout: float
) -> list[Any]:
    """Call ``read`` until ``done`` holds for its reply or ``timeout`` seconds pass; returns every reply.

    Example:
        >>> replies = iter([{"n": 1}, {"n": 2}])
        >>> [r["n"] for r in poll(lambda: next(replies), lambda r: r["n"] == 2, 5)]
        [1, 2]
    """
    seen = []
    deadline = time.monotonic() + timeout
    while True:
        seen.append(read())
        if done(seen[-1]) or time.monotonic() > deadline:
            return seen
        time.sleep(0.05)


def as_requested(value: Any, names: Mapping[str, str]) -> Any:
    """An engine result as the API answers it: every coin written as the request named it
    (``BTC``), wherever the engine wrote the data store's symbol (``BTCUSDT``), as a value, a key or
    a comma-separated list. Written by value, independently of the service's field-by-field rule.

    Example:
        >>> names = {"BTCUSDT": "BTC", "ETHUSDT": "ETH"}
        >>> as_requested({"BTCUSDT": {"coin": "BTCUSDT,ETHUSDT", "n": "BTCUSDTX"}}, names)
        {'BTC': {'coin': 'BTC,ETH', 'n': 'BTCUSDTX'}}
    """
    if isinstance(value, dict):
        return {as_requested(k, names): as_requested(v, names) for k, v in value.items()}
    if isinstance(value, list):
        return [as_requested(v, names) for v in value]
    if isinstance(value, str):
        parts = value.split(",")
        if all(p in names for p in parts):
            return ",".join(names[p] for p in parts)
    return value
