"""Hostile clients against the real server (``svc serve`` in a subprocess, SQLite): a 300 MB chunked
body sent anonymously gets its 413 while the server's peak memory grows by less than 50 MB, and 500
connections that send their headers and then stall do not keep a normal client from answers within
a second (the stalled ones get a 408 once the body timeout passes)."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.api.journey_helpers import Server, server_env

pytestmark = pytest.mark.slow


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    env = server_env(f"sqlite:///{tmp_path / 'svc.db'}", tmp_path / "data", tmp_path / "var")
    env |= {"TREND_REFRESH_SECONDS": "0", "SVC_GENERATION_THREADS": "0", "BODY_READ_TIMEOUT_SECONDS": "8"}
    running = Server(env, tmp_path / "server.log", via_svc=True).start()
    yield running
    running.stop()


def _peak_rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    raise AssertionError("no VmHWM")


def _server_pid(server: Server) -> int:
    """The process that serves (``svc serve`` runs uvicorn in its own process)."""
    assert server.process is not None
    return server.process.pid


def test_a_300_mb_chunked_body_is_refused_without_buffering_it(server: Server) -> None:
    httpx.post(f"{server.url}/user", params={"request_type": "register"}, json={}, timeout=10)  # warm
    pid = _server_pid(server)
    before = _peak_rss_kb(pid)
    sent = 0
    with socket.create_connection(("127.0.0.1", server.port), timeout=30) as sock:
        sock.sendall(
            b"POST /user?request_type=register HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\n"
            b"Transfer-Encoding: chunked\r\n\r\n"
        )
        chunk = b"%x\r\n%s\r\n" % (1 << 20, b"x" * (1 << 20))
        try:
            while sent < 300 << 20:
                sock.sendall(chunk)
                sent += 1 << 20
            sock.sendall(b"0\r\n\r\n")
        except (BrokenPipeError, ConnectionResetError):
            pass  # the server answered and closed before the client finished: the point
        reply = b""
        try:
            while b"\r\n\r\n" not in reply:
                data = sock.recv(65536)
                if not data:
                    break
                reply += data
        except ConnectionResetError:
            pass
    assert reply.startswith(b"HTTP/1.1 413"), reply[:200]
    assert _peak_rss_kb(pid) - before < 50 * 1024


def test_stalled_connections_do_not_starve_a_normal_client(server: Server) -> None:
    stalled = []
    try:
        for _ in range(500):
            sock = socket.create_connection(("127.0.0.1", server.port), timeout=10)
            sock.sendall(
                b"POST /user?request_type=login HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\n"
                b"Content-Length: 100\r\n\r\n"
            )
            stalled.append(sock)
        time.sleep(1.0)  # the server has taken them in: what is measured is a normal request beside them
        with httpx.Client(base_url=server.url, timeout=5) as client:
            for path in ("/health", "/", "/health", "/", "/health"):
                began = time.monotonic()
                assert client.get(path).status_code == 200
                assert time.monotonic() - began < 1.0, path
        stalled[0].settimeout(20)
        answer = stalled[0].recv(4096)
        assert answer.startswith(b"HTTP/1.1 408"), answer[:200]
    finally:
        for sock in stalled:
            sock.close()
