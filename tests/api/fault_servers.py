"""Private database and Redis servers that a fault test may stop, kill and start again: a PostgreSQL
cluster made with the installed server's ``initdb``/``pg_ctl`` in a temporary directory, and a
``redis-server`` on a free port. Both skip the test, with the reason, where the binaries are missing.

PostgreSQL refuses to run as root, so when the tests run as root the cluster belongs to the
``postgres`` user and its commands run through ``runuser``. Every wait is bounded.

Example:
    >>> PrivateRedis.__name__, PrivatePostgres.__name__
    ('PrivateRedis', 'PrivatePostgres')
"""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

START_TIMEOUT = 30.0


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _listening(port: int) -> bool:
    with socket.socket() as probe:
        probe.settimeout(0.2)
        return probe.connect_ex(("127.0.0.1", port)) == 0


def _bindir() -> Path | None:
    pg_config = shutil.which("pg_config")
    if pg_config is None:
        return None
    try:
        out = subprocess.run([pg_config, "--bindir"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return None
    folder = Path(out.stdout.strip())
    return folder if (folder / "initdb").exists() and (folder / "pg_ctl").exists() else None


class PrivatePostgres:
    """A PostgreSQL cluster of its own on a free port, trust authentication, database ``postgres``.

    :meth:`stop` (``fast``: clients are disconnected; ``immediate``: a crash) and :meth:`start` take
    it down and bring it back on the same port with the same data.
    """

    def __init__(self) -> None:
        bindir = _bindir()
        if bindir is None:
            pytest.skip("PostgreSQL server binaries not found (pg_config --bindir has no initdb/pg_ctl)")
        self.bindir = bindir
        self.as_user: list[str] = []
        self.root = Path(tempfile.mkdtemp(prefix="svc-fault-pg-"))
        if os.geteuid() == 0:  # initdb and postgres refuse root: the cluster is the postgres user's
            try:
                owner = pwd.getpwnam("postgres")
            except KeyError:
                shutil.rmtree(self.root, ignore_errors=True)
                pytest.skip("running as root and there is no postgres user to own a private cluster")
            if shutil.which("runuser") is None:
                shutil.rmtree(self.root, ignore_errors=True)
                pytest.skip("running as root and runuser is missing: cannot start PostgreSQL as postgres")
            os.chown(self.root, owner.pw_uid, owner.pw_gid)
            self.as_user = ["runuser", "-u", "postgres", "--"]
        self.data = self.root / "data"
        self.port = _free_port()
        self.url = f"postgresql+psycopg://postgres@127.0.0.1:{self.port}/postgres"
        self._run("initdb", "-D", str(self.data), "-A", "trust", "-U", "postgres", "--no-sync", "-E", "UTF8")
        self.start()

    def _run(self, tool: str, *args: str) -> None:
        command = [*self.as_user, str(self.bindir / tool), *args]
        done = subprocess.run(command, capture_output=True, text=True, timeout=START_TIMEOUT, cwd=self.root)
        if done.returncode != 0:
            said = done.stderr.strip() or done.stdout.strip()
            raise RuntimeError(f"{tool} exited {done.returncode}: {said}")

    def start(self) -> None:
        """Start the server (same port, same data) and wait until it accepts connections."""
        options = (
            f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1 -c fsync=off "
            "-c max_connections=200 -c full_page_writes=off"
        )
        self._run("pg_ctl", "-D", str(self.data), "-l", str(self.root / "log"), "-o", options, "-w", "start")

    def stop(self, mode: str = "fast") -> None:
        """Stop the server: ``fast`` (sessions are cut, like a restart) or ``immediate`` (a crash)."""
        self._run("pg_ctl", "-D", str(self.data), "-m", mode, "-w", "stop")

    def close(self) -> None:
        """Stop the server if it runs and remove its directory."""
        with contextlib.suppress(Exception):
            self.stop("immediate")
        shutil.rmtree(self.root, ignore_errors=True)


class PrivateRedis:
    """A ``redis-server`` of its own on a free port (no persistence); :meth:`kill` sends SIGKILL and
    :meth:`start` brings a fresh one back on the same port."""

    def __init__(self) -> None:
        binary = shutil.which("redis-server")
        if binary is None:
            pytest.skip("redis-server not found on PATH")
        self.binary = binary
        self.port = _free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.process: subprocess.Popen[bytes] | None = None
        self.start()

    def start(self) -> None:
        """Start the server and wait (bounded) until it listens."""
        command = [self.binary, "--port", str(self.port), "--bind", "127.0.0.1"]
        command += ["--save", "", "--appendonly", "no"]
        self.process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + START_TIMEOUT
        while not _listening(self.port):
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"redis-server did not start on port {self.port}")
            time.sleep(0.05)

    def kill(self) -> None:
        """SIGKILL the server and wait until it is gone."""
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(START_TIMEOUT)

    def close(self) -> None:
        """Kill the server if it runs."""
        self.kill()
