"""Education uploads through the real service (uvicorn on loopback, SQLite), on the local object
store and on S3 (moto's server on loopback, in this process).

Printed:

- multipart upload throughput (MB/s): a 64 MiB file of random bytes in 8 MiB parts, from register
  through part URLs, :data:`PARALLEL` part PUTs at once, receipts, to complete (which assembles and
  hashes the whole file); the client, the service and (for S3) moto share the machine's cores, so
  the figure is a floor;
- part URLs issued per second: ``POST .../part-urls`` of an upload of 4,000 parts, 16 URLs a call
  (local: HMAC-signed service URLs; S3: presigned ``upload_part`` requests).

Run: ``.venv/bin/python -m pytest benchmarks/test_bench_education_uploads.py --benchmark-only -s``
"""

from __future__ import annotations

import hashlib
import os
import sys
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import numpy as np
import pytest

from benchmarks.test_bench_api import _free_port, _serving
from benchmarks.test_bench_community import _members
from svc_api.core.store import Store
from svc_api.education.studio import service as studio
from svc_api.migrations import migrate

SECRET = "bench-secret-key-0123456789abcdef"
MIB = 1 << 20
SIZE = int(os.environ.get("BENCH_UPLOAD_MIB", "64")) * MIB
PART = 8 * MIB
PARALLEL = 4
URL_SECONDS = float(os.environ.get("BENCH_UPLOAD_URL_SECONDS", "3"))


@pytest.fixture(scope="module")
def moto() -> Iterator[str]:
    from moto import server

    threaded = server.ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    threaded.start()
    host, port = threaded.get_host_and_port()
    yield f"http://{host}:{port}"
    threaded.stop()


@pytest.fixture(scope="module", params=["local", "s3"])
def upload_server(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Any:
    """The service with one leader, on the local store or on a bucket of moto's S3: (url, token, kind)."""
    var = tmp_path_factory.mktemp(f"svc-bench-uploads-{request.param}")
    store = Store(f"sqlite:///{var / 'svc.db'}")
    migrate(store)
    (leader,), (token,) = _members(store, 1, "L", int(time.time()))
    with store.write() as conn:
        studio.grant_role(conn, leader, "leader", now=int(time.time()))
    store.dispose()
    env = {
        **os.environ,
        "DATABASE_URL": f"sqlite:///{var / 'svc.db'}",
        "SVC_VAR_DIR": str(var),
        "SECRET_KEY": SECRET,
        "RATE_LIMIT_SCALE": "100000",
        "TREND_REFRESH_SECONDS": "0",
        "SVC_SEED_SAMPLES": "0",
        "SVC_RUN_WORKERS": "0",
    }
    env.pop("REDIS_URL", None)
    if request.param == "s3":
        import boto3

        endpoint = request.getfixturevalue("moto")
        creds = {
            "AWS_ACCESS_KEY_ID": "test",
            "AWS_SECRET_ACCESS_KEY": "test",
            "AWS_DEFAULT_REGION": "us-east-1",
        }
        os.environ.update(creds)
        bucket = f"bench-{uuid.uuid4().hex[:10]}"
        boto3.client("s3", endpoint_url=endpoint).create_bucket(Bucket=bucket)
        env |= creds | {"OBJECT_STORE_URL": f"s3://{bucket}/media", "S3_ENDPOINT_URL": endpoint}
    port = _free_port()
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
        yield running.url, token, request.param


def _headers(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}", "Idempotency-Key": f"k-{uuid.uuid4()}"}


def _post(client: httpx.Client, url: str, token: str, body: dict[str, Any]) -> dict[str, Any]:
    reply = client.post(url, json=body, headers=_headers(token))
    assert reply.status_code in (200, 201), reply.text
    return dict(reply.json())


def _upload(client: httpx.Client, base: str, token: str, data: bytes) -> dict[str, Any]:
    """One whole multipart upload of ``data``; the completed snapshot."""
    api = f"{base}/education/v1/studio/uploads"
    body = {
        "filename": "bench.mp4",
        "content_type": "video/mp4",
        "size_bytes": len(data),
        "sha256": hashlib.sha256(data).hexdigest(),
        "kind": "video",
        "part_size_bytes": PART,
    }
    upload = _post(client, api, token, body)
    upload_id = upload["upload_id"]
    urls = _post(client, f"{api}/{upload_id}/part-urls", token, {})["parts"]

    def send(item: dict[str, Any]) -> tuple[int, str]:
        n = item["part_number"]
        url = item["url"] if item["url"].startswith("http") else base + item["url"]
        reply = httpx.put(url, content=data[(n - 1) * PART : n * PART], timeout=120)
        assert reply.status_code == 200, reply.text
        return n, reply.headers["ETag"]

    with ThreadPoolExecutor(PARALLEL) as pool:
        etags = dict(pool.map(send, urls))
    parts = [{"part_number": n, "etag": tag} for n, tag in sorted(etags.items())]
    _post(client, f"{api}/{upload_id}/part-receipts", token, {"parts": parts})
    return _post(client, f"{api}/{upload_id}/complete", token, {"parts": parts})


def test_multipart_upload_throughput(benchmark: Any, upload_server: Any) -> None:
    base, token, kind = upload_server
    data = np.random.default_rng(7).bytes(SIZE)
    seconds: list[float] = []
    with httpx.Client(timeout=300) as client:

        def one() -> dict[str, Any]:
            start = time.perf_counter()
            done = _upload(client, base, token, data)
            seconds.append(time.perf_counter() - start)
            return done

        done = benchmark.pedantic(one, rounds=3, iterations=1)
    assert done["status"] == "processing" and done["bytes_received"] == SIZE
    best, median = min(seconds), sorted(seconds)[len(seconds) // 2]
    print(
        f"\nuploads[{kind}]: {SIZE // MIB} MiB in {SIZE // PART} parts, {PARALLEL} PUTs at once:"
        f" {SIZE / MIB / median:.0f} MiB/s median, {SIZE / MIB / best:.0f} MiB/s best"
        f" ({median * 1000:.0f} ms register-to-complete)"
    )


def test_part_urls_per_second(benchmark: Any, upload_server: Any) -> None:
    base, token, kind = upload_server
    api = f"{base}/education/v1/studio/uploads"
    body = {
        "filename": "long.mp4",
        "content_type": "video/mp4",
        "size_bytes": 4000 * 5 * MIB,
        "sha256": "0" * 64,
        "kind": "video",
        "part_size_bytes": 5 * MIB,
    }
    issued = 0
    with httpx.Client(timeout=60) as client:
        upload_id = _post(client, api, token, body)["upload_id"]

        def burst() -> float:
            nonlocal issued
            start, calls = time.perf_counter(), 0
            while time.perf_counter() - start < URL_SECONDS:
                numbers = [(calls * 16 + i) % 4000 + 1 for i in range(16)]
                urls = _post(client, f"{api}/{upload_id}/part-urls", token, {"part_numbers": numbers})[
                    "parts"
                ]
                issued += len(urls)
                calls += 1
            return calls / (time.perf_counter() - start)

        calls_per_s = benchmark.pedantic(burst, rounds=1, iterations=1)
    print(
        f"\nuploads[{kind}]: {calls_per_s * 16:.0f} part URLs/s ({calls_per_s:.0f} calls/s of 16, one client)"
    )
    assert issued > 0
