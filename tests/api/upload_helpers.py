"""Helpers of the upload tests: the two object stores (a local directory, and S3 on moto's server on
loopback), a leader's desk, real media made on the spot (an MPEG-4 video with PyAV, a PDF with
pypdf), and the client side of a multipart upload."""

from __future__ import annotations

import hashlib
import io
import os
import uuid
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import httpx
import numpy as np
import pytest

from svc_api.core.clock import ManualClock
from svc_api.education.studio import service as studio
from svc_api.education.uploads import policy, processing
from svc_api.settings import Settings
from tests.api.conftest import SIGNALS_T0, Api
from tests.api.education_helpers import call, student

KIB = 1024
TEST_POLICY = policy.PartPolicy(min_part=64 * KIB, max_part=1024 * KIB, max_parts=10_000)
"""Parts of 64 KiB and up, so that a file of a few hundred KiB comes in several parts."""


def moto_server() -> Iterator[str]:
    """The ``moto_endpoint`` fixture of the upload tests: moto's S3 server on a free loopback port
    (parts of 1 KiB and up, like :data:`TEST_POLICY`)."""
    from moto import server
    from moto.s3 import models as moto_s3

    saved_min = moto_s3.S3_UPLOAD_PART_MIN_SIZE
    moto_s3.S3_UPLOAD_PART_MIN_SIZE = KIB
    threaded = server.ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    threaded.start()
    host, port = threaded.get_host_and_port()
    names = ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_DEFAULT_REGION")
    saved = {name: os.environ.get(name) for name in names}
    os.environ.update(AWS_ACCESS_KEY_ID="test", AWS_SECRET_ACCESS_KEY="test", AWS_DEFAULT_REGION="us-east-1")
    try:
        yield f"http://{host}:{port}"
    finally:
        threaded.stop()
        moto_s3.S3_UPLOAD_PART_MIN_SIZE = saved_min
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def store_settings(settings: Settings, kind: str, request: pytest.FixtureRequest) -> Settings:
    """``settings`` on the local directory or on a fresh bucket of moto's S3, workers off (tests
    run the uploads worker themselves)."""
    quiet = settings.replace(run_workers=0)
    if kind == "local":
        return quiet
    import boto3

    endpoint = request.getfixturevalue("moto_endpoint")
    bucket = f"edu-{uuid.uuid4().hex[:12]}"
    boto3.client("s3", endpoint_url=endpoint).create_bucket(Bucket=bucket)
    return quiet.replace(object_store_url=f"s3://{bucket}/media", s3_endpoint_url=endpoint)


def leader_desk(
    request: pytest.FixtureRequest, settings: Settings, make_api: Any, monkeypatch: pytest.MonkeyPatch
) -> SimpleNamespace:
    """The ``desk`` fixture (parametrised ``local`` and ``s3``): a leader on an app whose clock moves
    only when told, on either object store."""
    monkeypatch.setattr(policy, "POLICY", TEST_POLICY)
    api = make_api(store_settings(settings, request.param, request), clock=ManualClock(SIGNALS_T0))
    account = api.register()
    services = api.app.state.services
    with services.store.write() as conn:
        studio.grant_role(conn, account["svc_id"], "leader", now=api.clock.now())
    return SimpleNamespace(
        api=api,
        svc_id=account["svc_id"],
        token=account["session_token"],
        plain=student(api),
        store=request.param,
        mp=processing.multipart_of(services),
        run=lambda: processing.run_once(
            services.store, processing.multipart_of(services), now=api.clock.now()
        ),
    )


def make_video(frames: int = 30, *, seed: int = 1) -> bytes:
    """A real MPEG-4 video in an MP4 container: ``frames`` frames of noise at 25 fps, 160x120."""
    import av

    buffer = io.BytesIO()
    rng = np.random.default_rng(seed)
    with av.open(buffer, "w", format="mp4") as container:
        stream = container.add_stream("mpeg4", rate=25)
        stream.width, stream.height, stream.pix_fmt = 160, 120, "yuv420p"
        for _ in range(frames):
            image = rng.integers(0, 255, (120, 160, 3), dtype=np.uint8)
            for packet in stream.encode(av.VideoFrame.from_ndarray(image, format="rgb24")):
                container.mux(packet)
        for packet in stream.encode():
            container.mux(packet)
    return buffer.getvalue()


def make_pdf(pages: int = 3, attachment: int = 150 * KIB) -> bytes:
    """A real PDF of ``pages`` blank pages carrying ``attachment`` random bytes (to span parts)."""
    from pypdf import PdfWriter

    writer = PdfWriter()
    for _ in range(pages):
        writer.add_blank_page(width=200, height=200)
    writer.add_attachment("notes.bin", np.random.default_rng(2).bytes(attachment))
    buffer = io.BytesIO()
    writer.write(buffer)
    return buffer.getvalue()


def registration(data: bytes, kind: str = "video", **changes: Any) -> dict[str, Any]:
    """The body registering ``data``."""
    body = {
        "filename": "lesson.mp4" if kind == "video" else "handbook.pdf",
        "content_type": "video/mp4" if kind == "video" else "application/pdf",
        "size_bytes": len(data),
        "sha256": hashlib.sha256(data).hexdigest(),
        "kind": kind,
    }
    return {**body, **changes}


def pieces(data: bytes, part_size: int) -> dict[int, bytes]:
    """``data`` cut into numbered parts."""
    return {i // part_size + 1: data[i : i + part_size] for i in range(0, len(data), part_size)}


def put(api: Api, url: str, data: bytes) -> httpx.Response:
    """PUT a part to its URL: the service's own (local store) or S3's (presigned)."""
    if url.startswith("/"):
        return api.request("PUT", url, content=data)
    return httpx.put(url, content=data)


def register(desk: SimpleNamespace, data: bytes, kind: str = "video", **changes: Any) -> dict[str, Any]:
    reply = call(desk.api, "POST", "/studio/uploads", desk.token, json=registration(data, kind, **changes))
    assert reply.status_code == 201, reply.text
    return dict(reply.json())


def send_parts(
    desk: SimpleNamespace, upload: dict[str, Any], data: bytes, numbers: list[int] | None = None
) -> dict[int, str]:
    """PUT the asked parts (all missing ones by default) through part URLs; ``{part: etag}``."""
    upload_id, size = upload["upload_id"], upload["part_policy"]["part_size_bytes"]
    parts = pieces(data, size)
    body = {} if numbers is None else {"part_numbers": numbers}
    urls = call(desk.api, "POST", f"/studio/uploads/{upload_id}/part-urls", desk.token, json=body)
    assert urls.status_code == 200, urls.text
    etags = {}
    for item in urls.json()["parts"]:
        sent = put(desk.api, item["url"], parts[item["part_number"]])
        assert sent.status_code == 200, sent.text
        etags[item["part_number"]] = sent.headers["ETag"]
    return etags


def receipts(desk: SimpleNamespace, upload_id: str, etags: dict[int, str]) -> httpx.Response:
    body = {"parts": [{"part_number": n, "etag": tag} for n, tag in sorted(etags.items())]}
    return call(desk.api, "POST", f"/studio/uploads/{upload_id}/part-receipts", desk.token, json=body)


def upload_whole(desk: SimpleNamespace, data: bytes, kind: str = "video") -> dict[str, Any]:
    """Register, send every part with its receipt, complete; the completed upload."""
    upload = register(desk, data, kind)
    etags = send_parts(desk, upload, data)
    assert receipts(desk, upload["upload_id"], etags).status_code == 200
    done = call(desk.api, "POST", f"/studio/uploads/{upload['upload_id']}/complete", desk.token, json={})
    assert done.status_code == 200, done.text
    return dict(done.json())
