"""Hostile clients against the real server (``svc serve`` in a subprocess, SQLite): a 300 MB chunked
body sent anonymously gets its 413 while the server's peak memory grows by less than 50 MB, and 500
connections that send their headers and then stall do not keep a normal client from answers within
a second (the stalled ones get a 408 once the body timeout passes). Connections that never finish
their request head (slow headers) get a 408 and are closed once the head deadline passes, so 500 of
them coming and going leave a normal client's p99 under a second, and 320 of them past
``SVC_MAX_CONNECTIONS=300`` make new requests 503 only until the deadline."""

from __future__ import annotations

import socket
import threading
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
    env |= {"HEADER_READ_TIMEOUT_SECONDS": str(HEAD_DEADLINE)}
    running = Server(env, tmp_path / "server.log", via_svc=True).start()
    yield running
    running.stop()


HEAD_DEADLINE = 2
SLOW_HEAD = b"GET / HTTP/1.1\r\nHost: x\r\n"  # the request line and one header, then nothing more


@pytest.fixture
def small_server(tmp_path: Path) -> Iterator[Server]:
    """The server with at most 300 connections."""
    env = server_env(f"sqlite:///{tmp_path / 'svc.db'}", tmp_path / "data", tmp_path / "var")
    env |= {"TREND_REFRESH_SECONDS": "0", "SVC_GENERATION_THREADS": "0", "SVC_MAX_CONNECTIONS": "300"}
    env |= {"HEADER_READ_TIMEOUT_SECONDS": str(HEAD_DEADLINE)}
    running = Server(env, tmp_path / "server.log", via_svc=True).start()
    yield running
    running.stop()


def _slow_heads(port: int, count: int) -> list[socket.socket]:
    out = []
    for _ in range(count):
        sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        sock.sendall(SLOW_HEAD)
        out.append(sock)
    return out


def _answer(sock: socket.socket, until: float) -> bytes:
    """What the server sent before it closed the connection (b"" when it kept it open past ``until``)."""
    data = b""
    try:
        while True:
            sock.settimeout(max(0.05, until - time.monotonic()))
            chunk = sock.recv(4096)
            if not chunk:
                return data
            data += chunk
    except TimeoutError:
        return b"still open: " + data
    except ConnectionResetError:
        return data


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


def test_slow_headers_are_timed_out_and_a_normal_client_keeps_a_p99_under_a_second(server: Server) -> None:
    stalled: list[socket.socket] = []

    def attack() -> None:
        for _ in range(5):  # 500 slow heads in waves of 100, a second apart: they come and go
            stalled.extend(_slow_heads(server.port, 100))
            time.sleep(1.0)

    attacker = threading.Thread(target=attack)
    latencies = []
    try:
        attacker.start()
        with httpx.Client(base_url=server.url, timeout=5) as client:
            while attacker.is_alive() or len(latencies) < 100:
                began = time.monotonic()
                assert client.get("/health").status_code == 200
                latencies.append(time.monotonic() - began)
                time.sleep(0.02)
        attacker.join()
        p99 = sorted(latencies)[int(len(latencies) * 0.99) - 1]
        assert p99 < 1.0, (p99, max(latencies), len(latencies))
        # Each slow head got its 408 and its connection was closed, well before the test's patience.
        until = time.monotonic() + HEAD_DEADLINE + 5
        answers = [_answer(sock, until) for sock in stalled]
        late = [a[:60] for a in answers if not a.startswith(b"HTTP/1.1 408")]
        assert late == [], (len(late), late[:3])
        assert b'"error":"request_timeout"' in answers[0]
    finally:
        attacker.join()
        for sock in stalled:
            sock.close()


def test_slow_headers_past_the_connection_limit_block_new_requests_only_until_the_deadline(
    small_server: Server,
) -> None:
    stalled = _slow_heads(small_server.port, 320)
    try:
        with httpx.Client(base_url=small_server.url, timeout=5) as client:
            assert client.get("/health").status_code == 503  # the limit is taken, as the attack found
            began = time.monotonic()
            while client.get("/health").status_code != 200:
                assert time.monotonic() - began < HEAD_DEADLINE + 3, "slow heads still hold the server"
                time.sleep(0.2)
    finally:
        for sock in stalled:
            sock.close()
