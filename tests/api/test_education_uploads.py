"""Uploads through HTTP on SQLite and PostgreSQL, each on the local object store and on S3 (moto on
loopback): a leader uploads a real video and a real PDF in parts, loses the client and reconciles,
completes, and the worker probes them; listing, paging and the curriculum's view of the result."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from svc_api.education.uploads import service as uploads
from tests.api.education_helpers import call
from tests.api.upload_helpers import (
    leader_desk,
    make_pdf,
    make_video,
    moto_server,
    put,
    receipts,
    register,
    send_parts,
    upload_whole,
)

moto_endpoint = pytest.fixture(scope="session")(moto_server)
desk = pytest.fixture(params=["local", "s3"])(leader_desk)


def test_a_leader_uploads_a_video_in_parts_loses_the_client_reconciles_and_gets_it_processed(
    desk: SimpleNamespace,
) -> None:
    api, token, video = desk.api, desk.token, make_video()
    upload = register(desk, video)
    upload_id = upload["upload_id"]
    assert upload["status"] == "uploading" and upload["part_policy"] == {
        "part_size_bytes": 65536,
        "part_count": -(-len(video) // 65536),
        "min_part_bytes": 65536,
        "max_part_bytes": 1048576,
        "max_parts": 10000,
        "max_urls_per_call": 16,
        "url_ttl_seconds": 3600,
    }
    count = upload["part_policy"]["part_count"]
    assert count == 3 and upload["lease"] == {"seconds": 86400, "expires_at": api.clock.now() + 86400}
    assert upload["missing_parts"] == 3 and upload["received_parts"] == []

    # Parts 1 and 2 reach the store; only part 1's receipt reaches the service before the client dies.
    etags = send_parts(desk, upload, video, [1, 2])
    assert receipts(desk, upload_id, {1: etags[1]}).json()["received_parts"] == [[1, 1]]

    # A new client: the snapshot says part 1, the store's listing says 1 and 2.
    api.clock.advance(600)
    snapshot = call(api, "GET", f"/studio/uploads/{upload_id}", token).json()
    assert snapshot["parts_received"] == 1 and snapshot["missing_parts"] == 2
    reconciled = call(api, "POST", f"/studio/uploads/{upload_id}/reconcile", token, json={})
    assert reconciled.status_code == 200, reconciled.text
    assert reconciled.json()["received_parts"] == [[1, 2]]
    assert reconciled.json()["bytes_received"] == 2 * 65536
    assert reconciled.json()["lease"]["expires_at"] == api.clock.now() + 86400

    # URLs for the missing part only; it goes up, its receipt too, and the upload completes.
    urls = call(api, "POST", f"/studio/uploads/{upload_id}/part-urls", token, json={}).json()
    assert [item["part_number"] for item in urls["parts"]] == [3] and urls["missing_parts"] == 1
    assert urls["parts"][0]["size_bytes"] == len(video) - 2 * 65536
    last = send_parts(desk, upload, video)
    assert list(last) == [3]
    assert receipts(desk, upload_id, last).json()["missing_parts"] == 0
    manifest = {**etags, **last}
    body = {"parts": [{"part_number": n, "etag": tag} for n, tag in sorted(manifest.items())]}
    done = call(api, "POST", f"/studio/uploads/{upload_id}/complete", token, json=body)
    assert done.status_code == 200, done.text
    assert done.json()["status"] == "processing"
    with api.app.state.services.store.read() as conn:
        assert uploads.processed_media(conn, desk.svc_id, upload_id) is None

    # The worker probes it with PyAV.
    assert desk.run() == {"aborted": 0, "resumed": 0, "processed": 1, "failed": 0}
    processed = call(api, "GET", f"/studio/uploads/{upload_id}", token).json()
    assert processed["status"] == "processed" and processed["error"] is None
    media = processed["media"]
    assert media["media_key"] == f"uploads/{upload_id}/lesson.mp4"
    assert (media["duration_seconds"], media["codec"], media["width"], media["height"]) == (
        2,
        "mpeg4",
        160,
        120,
    )
    with api.app.state.services.store.read() as conn:
        assert uploads.processed_media(conn, desk.svc_id, upload_id) == {
            "upload_id": upload_id,
            "kind": "video",
            "media_key": media["media_key"],
            "duration_seconds": 2,
        }
        assert uploads.processed_media(conn, "ZZ99ZZ", upload_id) is None
    with desk.mp.local_copy(media["media_key"]) as path:
        assert path.read_bytes() == video
    assert desk.run()["processed"] == 0  # processed once


def test_a_pdf_in_parts_is_processed_with_its_page_count(desk: SimpleNamespace) -> None:
    pdf = make_pdf(pages=4)
    done = upload_whole(desk, pdf, "pdf")
    assert done["status"] == "processing" and done["part_policy"]["part_count"] == 3
    assert desk.run()["processed"] == 1
    upload_id = done["upload_id"]
    with desk.api.app.state.services.store.read() as conn:
        assert uploads.processed_media(conn, desk.svc_id, upload_id) == {
            "upload_id": upload_id,
            "kind": "pdf",
            "media_key": f"uploads/{upload_id}/handbook.pdf",
            "pages": 4,
        }


def test_own_uploads_are_listed_newest_first_with_a_status_filter_and_pages(desk: SimpleNamespace) -> None:
    api, token = desk.api, desk.token
    first = upload_whole(desk, make_pdf(pages=1, attachment=100), "pdf")["upload_id"]
    api.clock.advance(1)
    second = register(desk, make_video(frames=5))["upload_id"]
    api.clock.advance(1)
    third = register(desk, make_video(frames=6))["upload_id"]
    other = api.register()
    with api.app.state.services.store.write() as conn:
        from svc_api.education.studio import service as studio

        studio.grant_role(conn, other["svc_id"], "leader", now=api.clock.now())
    assert call(api, "GET", "/studio/uploads", other["session_token"]).json() == {
        "items": [],
        "next_cursor": None,
    }

    page = call(api, "GET", "/studio/uploads?limit=2", token).json()
    assert [item["upload_id"] for item in page["items"]] == [third, second]
    rest = call(api, "GET", f"/studio/uploads?limit=2&cursor={page['next_cursor']}", token).json()
    assert [item["upload_id"] for item in rest["items"]] == [first] and rest["next_cursor"] is None
    only = call(api, "GET", "/studio/uploads?status=processing", token).json()
    assert [item["upload_id"] for item in only["items"]] == [first]
    assert (
        call(api, "GET", "/studio/uploads?status=uploading", token).json()["items"][0]["upload_id"] == third
    )
    # a cursor of another filter, a tampered cursor, an unknown status: 400
    cursor = page["next_cursor"]
    assert call(api, "GET", f"/studio/uploads?status=uploading&cursor={cursor}", token).status_code == 400
    assert call(api, "GET", f"/studio/uploads?cursor={cursor[:-2]}xx", token).status_code == 400
    bad = call(api, "GET", "/studio/uploads?status=done", token)
    assert bad.status_code == 400 and "status must be one of" in bad.json()["error"]


def test_a_part_put_to_the_service_needs_its_signature_and_fits_the_part_size(desk: SimpleNamespace) -> None:
    api, video = desk.api, make_video()
    upload = register(desk, video)
    url = call(api, "POST", f"/studio/uploads/{upload['upload_id']}/part-urls", desk.token, json={}).json()
    first = url["parts"][0]["url"]
    if desk.store == "s3":
        assert first.startswith("http://127.0.0.1") and "uploadId=" in first
        from svc_api.education.uploads.multipart import local_part_url

        ours = local_part_url(
            api.app.state.services.settings.secret_key, upload["upload_id"], 1, expires=2**40
        )
        assert api.request("PUT", ours, content=b"x").status_code == 404  # S3 takes the parts
        return
    assert first.startswith(f"/education/v1/studio/upload-parts/{upload['upload_id']}/1?expires=")
    tampered = first.replace("/1?", "/2?")
    assert api.request("PUT", tampered, content=b"x").json()["code"] == "invalid_part_url"
    assert api.request("PUT", first[:-3] + "abc", content=b"x").status_code == 403
    assert api.request("PUT", first[:-3] + "\u00e4bc", content=b"x").status_code == 403  # not a 500
    too_big = api.request("PUT", first, content=b"x" * (65536 + 1))
    assert too_big.status_code == 413 and too_big.json()["code"] == "part_too_large"
    ok = api.request("PUT", first, content=video[:65536])
    assert ok.status_code == 200 and ok.json()["size_bytes"] == 65536 and ok.headers["ETag"].startswith('"')
    api.clock.advance(3601)
    expired = api.request("PUT", first, content=video[:65536])
    assert expired.status_code == 403 and expired.json()["code"] == "invalid_part_url"
    fresh = call(api, "POST", f"/studio/uploads/{upload['upload_id']}/part-urls", desk.token, json={}).json()
    call(api, "DELETE", f"/studio/uploads/{upload['upload_id']}", desk.token)
    gone = api.request("PUT", fresh["parts"][0]["url"], content=video[:65536])
    assert gone.status_code == 409 and gone.json()["code"] == "upload_aborted"
    assert put(api, fresh["parts"][0]["url"].replace(upload["upload_id"], "up_nope"), b"x").status_code == 403
