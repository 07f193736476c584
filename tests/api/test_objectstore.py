"""The object store: the local directory (atomic writes, HMAC-presigned URLs) and S3 against moto's
server on 127.0.0.1; the backtest runner storing results in S3."""

from __future__ import annotations

import os
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from svc_api.core.objectstore import (
    LocalObjectStore,
    ObjectNotFound,
    ObjectStore,
    S3ObjectStore,
    check_key,
    open_object_store,
)


@pytest.fixture(scope="module")
def s3_endpoint() -> Iterator[str]:
    """moto's S3 server on a free local port, with dummy credentials."""
    moto_server = pytest.importorskip("moto.server")
    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    saved = {
        k: os.environ.get(k) for k in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_DEFAULT_REGION")
    }
    os.environ.update(AWS_ACCESS_KEY_ID="test", AWS_SECRET_ACCESS_KEY="test", AWS_DEFAULT_REGION="us-east-1")
    try:
        yield f"http://{host}:{port}"
    finally:
        server.stop()
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


@pytest.fixture
def s3_store(s3_endpoint: str) -> S3ObjectStore:
    bucket = f"svc-{uuid.uuid4().hex[:12]}"
    store = open_object_store(f"s3://{bucket}/results/v1", var_dir="/unused", endpoint_url=s3_endpoint)
    assert isinstance(store, S3ObjectStore)
    store.client.create_bucket(Bucket=bucket)
    return store


@pytest.fixture(params=["local", "s3"])
def any_store(request: pytest.FixtureRequest, tmp_path: Path) -> ObjectStore:
    if request.param == "local":
        return LocalObjectStore(tmp_path / "objects", secret=b"s" * 32)
    return request.getfixturevalue("s3_store")


def test_put_get_replace_delete(any_store: ObjectStore) -> None:
    key = "backtests/AB12CD/bt_1/result.json"
    assert not any_store.exists(key)
    with pytest.raises(ObjectNotFound):
        any_store.get(key)
    any_store.put(key, b"first")
    any_store.put(key, b"second")
    assert (any_store.get(key), any_store.exists(key)) == (b"second", True)
    assert any_store.exists("backtests/AB12CD/bt_1") is False
    assert any_store.delete(key) is True
    assert any_store.delete(key) is False
    assert not any_store.exists(key)


@pytest.mark.parametrize("key", ["../x", "/abs", "a//b", "a/../b", "", "a b"])
def test_keys_that_could_escape_are_refused(any_store: ObjectStore, key: str) -> None:
    with pytest.raises(ValueError, match="invalid object key"):
        any_store.put(key, b"x")
    with pytest.raises(ValueError):
        check_key(key)


def test_local_writes_are_atomic_under_concurrent_readers(tmp_path: Path) -> None:
    store = LocalObjectStore(tmp_path)
    key = "k/blob.bin"
    blobs = [bytes([i]) * 200_000 for i in range(8)]
    store.put(key, blobs[0])
    seen: set[bytes] = set()
    stop = threading.Event()

    def read() -> None:
        while not stop.is_set():
            data = store.get(key)
            seen.add(data[:1] * len(data))
            assert data in blobs

    reader = threading.Thread(target=read)
    reader.start()
    for blob in blobs * 3:
        store.put(key, blob)
    stop.set()
    reader.join()
    assert seen <= set(blobs)
    assert [p.name for p in (tmp_path / "k").iterdir()] == ["blob.bin"]


def test_local_presigned_urls_expire_and_cannot_be_moved(tmp_path: Path) -> None:
    store = LocalObjectStore(tmp_path, secret=b"s" * 32)
    url = store.presign("backtests/AB12CD/bt_1/result.json", expires_in=60)
    assert url.startswith("local://backtests/AB12CD/bt_1/result.json?expires=")
    assert store.verify(url)
    expires = int(url.split("expires=")[1].split("&")[0])
    assert not store.verify(url, now=expires + 1)
    assert not store.verify(url.replace("bt_1", "bt_2"))
    assert not store.verify(url.replace(f"expires={expires}", f"expires={expires + 100}"))
    assert not LocalObjectStore(tmp_path, secret=b"t" * 32).verify(url)


def test_s3_presigned_url_reads_the_object(s3_store: S3ObjectStore) -> None:
    import httpx

    s3_store.put("a/b.json", b'{"ok": true}')
    url = s3_store.presign("a/b.json", expires_in=120)
    assert "Expires=" in url and "Signature=" in url and "/results/v1/a/b.json?" in url
    assert httpx.get(url).content == b'{"ok": true}'


def test_open_object_store_urls(tmp_path: Path) -> None:
    assert open_object_store(None, var_dir=tmp_path).root == tmp_path / "objects"  # type: ignore[attr-defined]
    assert open_object_store(f"file://{tmp_path}/o", var_dir="/x").root == tmp_path / "o"  # type: ignore[attr-defined]
    assert open_object_store(str(tmp_path / "p"), var_dir="/x").root == tmp_path / "p"  # type: ignore[attr-defined]
    with pytest.raises(ValueError, match="OBJECT_STORE_URL must be"):
        open_object_store("gs://bucket", var_dir="/x")


def test_runner_stores_results_in_s3(
    s3_store: S3ObjectStore, s3_endpoint: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from svc_api.accounts import identity
    from svc_api.backtests import jobs
    from svc_api.backtests import service as backtests
    from svc_api.core.objectqueue import drain
    from svc_api.core.store import Store
    from svc_api.credits import service as credits
    from svc_api.migrations import migrate
    from svc_engine.data import DataStore
    from svc_engine.data.synthetic import generate_market

    generate_market(DataStore(tmp_path / "data"), small=True)
    store = Store(f"sqlite:///{tmp_path / 'svc.db'}")
    migrate(store)
    with store.write() as conn:
        svc_id = identity.register(
            conn, "s3@example.com", "password1", ip="::1", ttl=60, now=int(time.time())
        ).svc_id
        credits.deposit_credits(conn, svc_id, 5, now=int(time.time()))
    url = f"s3://{s3_store.bucket}/{s3_store.prefix}"
    config = jobs.RunnerConfig.from_env({"OBJECT_STORE_URL": url, "S3_ENDPOINT_URL": s3_endpoint})
    runner = jobs.JobRunner(store, config=config, data_dir=tmp_path / "data", var_dir=tmp_path)
    runner.start()
    try:
        launch = backtests.Launch("full_range", "s3test", 1, ["BTCUSDT"], "crypto", "1h", {}, 1, 2, 1.0)
        with store.write() as conn:
            job_id = backtests.create_job(conn, svc_id, launch, limit=3, now=int(time.time()))["job_id"]
        work = jobs.Work(job_id, svc_id, "full_range", "close > open", ["BTCUSDT"], "crypto", "1h")
        runner.submit(work)
        runner.wait(job_id, timeout=30)
        with store.read() as conn:
            row: Any = backtests.get_job(conn, svc_id, job_id)
        assert row.status == "completed", row.error
        assert s3_store.exists(jobs.result_key(svc_id, job_id))
        result = backtests.job_result(row, s3_store)
        assert result["coins"] == ["BTC"] and result["summary"]["completed"] == 1  # as requested (issue 13)
        with store.write() as conn:
            assert backtests.delete_for_strategy(conn, svc_id, "s3test", now=int(time.time())) == 1
        # the row went with the strategy; its object waits for the retention worker's queue
        assert s3_store.exists(jobs.result_key(svc_id, job_id))
        assert drain(store, s3_store) == 1
        assert not s3_store.exists(jobs.result_key(svc_id, job_id))
    finally:
        runner.stop()
