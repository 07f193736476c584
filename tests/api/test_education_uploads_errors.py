"""Every error status of every upload route, on SQLite and PostgreSQL and on both object stores."""

from __future__ import annotations

import hashlib
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

from svc_api.education.uploads import policy
from tests.api.education_helpers import call
from tests.api.upload_helpers import (
    leader_desk,
    make_pdf,
    make_video,
    moto_server,
    pieces,
    put,
    receipts,
    register,
    registration,
    send_parts,
    upload_whole,
)

moto_endpoint = pytest.fixture(scope="session")(moto_server)
desk = pytest.fixture(params=["local", "s3"])(leader_desk)

ROUTES = [
    ("POST", "/studio/uploads"),
    ("GET", "/studio/uploads"),
    ("GET", "/studio/uploads/up_x"),
    ("DELETE", "/studio/uploads/up_x"),
    ("POST", "/studio/uploads/up_x/part-urls"),
    ("POST", "/studio/uploads/up_x/part-receipts"),
    ("POST", "/studio/uploads/up_x/reconcile"),
    ("POST", "/studio/uploads/up_x/complete"),
    ("POST", "/studio/uploads/up_x/processing-retries"),
]


def _code(reply: Any, status: int, code: str) -> None:
    assert reply.status_code == status, reply.text
    assert reply.json()["code"] == code, reply.json()


def _path(upload_id: str, tail: str = "") -> str:
    return f"/studio/uploads/{upload_id}{tail}"


def test_every_upload_route_needs_a_session_and_the_leader_role_and_other_uploads_are_unknown(
    desk: SimpleNamespace,
) -> None:
    api = desk.api
    for method, path in ROUTES:
        _code(call(api, method, path, desk.plain, json={}), 403, "not_instructor")
        assert call(api, method, path, json={}).status_code == 401
    mine = register(desk, make_video(frames=5))["upload_id"]
    other = api.register()
    with api.app.state.services.store.write() as conn:
        from svc_api.education.studio import service as studio

        studio.grant_role(conn, other["svc_id"], "owner", now=api.clock.now())
    for method, path in ROUTES[2:]:
        for upload_id, token in (("up_unknown", desk.token), (mine, other["session_token"])):
            _code(call(api, method, path.replace("up_x", upload_id), token, json={}), 404, "not_found")
    assert call(api, "GET", _path(mine), desk.token).json()["status"] == "uploading"
    _code(
        call(api, "POST", "/studio/uploads", desk.token, json={}, idem=None), 400, "idempotency_key_required"
    )


RULES = [
    ({"extra": 1}, "unknown field"),
    ({"sha256": None}, "sha256 is required"),
    ({"kind": "audio"}, "kind must be"),
    ({"filename": "../etc/passwd"}, "filename"),
    ({"filename": ""}, "filename"),
    ({"content_type": "application/pdf"}, "content_type"),
    ({"size_bytes": 0}, "size_bytes"),
    ({"size_bytes": "100"}, "size_bytes"),
    ({"size_bytes": 21 * policy.GIB}, "size_bytes"),
    ({"sha256": "ab" * 31}, "sha256"),
    ({"part_size_bytes": 1000}, "part_size_bytes"),
    ({"part_size_bytes": 2 * policy.MIB}, "part_size_bytes"),
    ({"size_bytes": 20 * policy.GIB}, "parts, over 10000"),
]


def test_a_registration_that_breaks_a_rule_is_a_400_naming_it(desk: SimpleNamespace) -> None:
    for changes, names in RULES:
        body = {key: value for key, value in registration(b"x" * 100, **changes).items() if value is not None}
        reply = call(desk.api, "POST", "/studio/uploads", desk.token, json=body)
        _code(reply, 400, "invalid_request")
        assert names in reply.json()["error"], (changes, reply.json())
    assert call(desk.api, "GET", "/studio/uploads", desk.token).json()["items"] == []


def test_too_many_uploads_in_flight_is_a_409(desk: SimpleNamespace, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(policy, "MAX_IN_FLIGHT", 2)
    first = register(desk, b"a" * 10, "pdf")
    register(desk, b"b" * 10, "pdf")
    _code(
        call(desk.api, "POST", "/studio/uploads", desk.token, json=registration(b"c", "pdf")),
        409,
        "too_many_uploads",
    )
    call(desk.api, "DELETE", _path(first["upload_id"]), desk.token)
    assert (
        call(desk.api, "POST", "/studio/uploads", desk.token, json=registration(b"c", "pdf")).status_code
        == 201
    )


def test_part_urls_for_missing_parts_only_at_most_16_and_never_for_a_finished_or_aborted_upload(
    desk: SimpleNamespace,
) -> None:
    api, token = desk.api, desk.token
    big = register(desk, b"\0" * (17 * 65536 + 5), "pdf")
    upload_id = big["upload_id"]
    assert big["part_policy"]["part_count"] == 18
    urls = call(api, "POST", _path(upload_id, "/part-urls"), token, json={}).json()
    assert [item["part_number"] for item in urls["parts"]] == list(range(1, 17)) and urls[
        "missing_parts"
    ] == 18
    for bad in ([*range(1, 18)], [0], [19], [1, 1], "1", [], [True]):
        _code(
            call(api, "POST", _path(upload_id, "/part-urls"), token, json={"part_numbers": bad}),
            400,
            "invalid_request",
        )
    _code(
        call(api, "POST", _path(upload_id, "/part-urls"), token, json={"parts": [1]}), 400, "invalid_request"
    )
    asked = call(api, "POST", _path(upload_id, "/part-urls"), token, json={"part_numbers": [18, 2]}).json()
    assert [(i["part_number"], i["size_bytes"]) for i in asked["parts"]] == [(2, 65536), (18, 5)]
    desk.api.clock.advance(policy.LEASE_SECONDS + 1)
    _code(call(api, "POST", _path(upload_id, "/part-urls"), token, json={}), 409, "lease_expired")

    video = make_video(frames=5)
    done = upload_whole(desk, video)
    _code(call(api, "POST", _path(done["upload_id"], "/part-urls"), token, json={}), 409, "upload_finished")
    aborted = register(desk, video)["upload_id"]
    assert call(api, "DELETE", _path(aborted), token).json()["status"] == "aborted"
    _code(call(api, "POST", _path(aborted, "/part-urls"), token, json={}), 409, "upload_aborted")


def test_part_receipts_are_idempotent_and_a_checksum_the_store_disagrees_with_is_a_409(
    desk: SimpleNamespace,
) -> None:
    api, token, video = desk.api, desk.token, make_video()
    upload = register(desk, video)
    upload_id = upload["upload_id"]
    etags = send_parts(desk, upload, video, [1, 2])
    first = receipts(desk, upload_id, etags)
    assert first.status_code == 200 and first.json()["received_parts"] == [[1, 2]]
    assert receipts(desk, upload_id, etags).json() == first.json()
    assert receipts(desk, upload_id, {1: etags[1].strip('"').upper()}).json()["received_parts"] == [[1, 2]]
    _code(receipts(desk, upload_id, {1: "0" * 32}), 409, "checksum_mismatch")
    _code(receipts(desk, upload_id, {3: "0" * 32}), 409, "part_not_in_store")
    twice = [{"part_number": 1, "etag": "a"}, {"part_number": 1, "etag": "a"}]
    for bad in (
        {"parts": []},
        {"parts": [{"part_number": 9, "etag": "a"}]},
        {"parts": [{"part_number": 1}]},
        {"parts": twice},
        {"etags": []},
    ):
        _code(call(api, "POST", _path(upload_id, "/part-receipts"), token, json=bad), 400, "invalid_request")
    # after complete a receipt that agrees answers the snapshot, one that does not is a 409
    rest = send_parts(desk, upload, video)
    receipts(desk, upload_id, rest)
    assert call(api, "POST", _path(upload_id, "/complete"), token, json={}).status_code == 200
    assert receipts(desk, upload_id, etags).json()["status"] == "processing"
    _code(receipts(desk, upload_id, {1: "0" * 32}), 409, "upload_finished")
    aborted = register(desk, video)["upload_id"]
    call(api, "DELETE", _path(aborted), token)
    _code(receipts(desk, aborted, {1: etags[1]}), 409, "upload_aborted")


def test_reconcile_needs_an_open_upload(desk: SimpleNamespace) -> None:
    api, token = desk.api, desk.token
    done = upload_whole(desk, make_pdf(pages=1, attachment=100), "pdf")
    _code(call(api, "POST", _path(done["upload_id"], "/reconcile"), token, json={}), 409, "upload_finished")
    aborted = register(desk, b"x" * 10, "pdf")["upload_id"]
    call(api, "DELETE", _path(aborted), token)
    _code(call(api, "POST", _path(aborted, "/reconcile"), token, json={}), 409, "upload_aborted")
    _code(call(api, "POST", _path(aborted, "/reconcile"), token, json={"x": 1}), 400, "invalid_request")


def test_complete_checks_every_part_the_manifest_and_the_whole_checksum(desk: SimpleNamespace) -> None:
    api, token, video = desk.api, desk.token, make_video()
    upload = register(desk, video)
    upload_id = upload["upload_id"]
    etags = send_parts(desk, upload, video, [1, 2])
    receipts(desk, upload_id, etags)
    missing = call(api, "POST", _path(upload_id, "/complete"), token, json={})
    _code(missing, 422, "parts_missing")
    assert missing.json()["missing_parts"] == [[3, 3]]
    etags |= send_parts(desk, upload, video, [3])
    receipts(desk, upload_id, etags)
    wrong = [{"part_number": n, "etag": "0" * 32 if n == 2 else tag} for n, tag in etags.items()]
    _code(
        call(api, "POST", _path(upload_id, "/complete"), token, json={"parts": wrong}),
        422,
        "manifest_mismatch",
    )
    short = [{"part_number": 1, "etag": etags[1]}]
    _code(
        call(api, "POST", _path(upload_id, "/complete"), token, json={"parts": short}),
        422,
        "manifest_mismatch",
    )
    _code(
        call(api, "POST", _path(upload_id, "/complete"), token, json={"parts": "all"}), 400, "invalid_request"
    )
    # part 2 sent again with other bytes: the store disagrees with the record until a reconcile
    urls = call(api, "POST", _path(upload_id, "/part-urls"), token, json={"part_numbers": [2]}).json()[
        "parts"
    ]
    assert urls == []  # received parts get no URL: the client reuses the one it had
    fresh = desk.mp.part_url(
        upload_id,
        f"uploads/{upload_id}/lesson.mp4",
        _store_id(desk, upload_id),
        2,
        ttl=60,
        now=api.clock.now(),
    )
    assert put(api, fresh, b"y" * 65536).status_code == 200
    _code(call(api, "POST", _path(upload_id, "/complete"), token, json={}), 422, "store_disagrees")
    call(api, "POST", _path(upload_id, "/reconcile"), token, json={})
    assert put(api, fresh, b"y" * 1000).status_code == 200
    call(api, "POST", _path(upload_id, "/reconcile"), token, json={})
    _code(call(api, "POST", _path(upload_id, "/complete"), token, json={}), 422, "part_size_mismatch")
    assert put(api, fresh, pieces(video, 65536)[2]).status_code == 200
    call(api, "POST", _path(upload_id, "/reconcile"), token, json={})
    done = call(api, "POST", _path(upload_id, "/complete"), token, json={})
    assert done.status_code == 200 and done.json()["status"] == "processing"
    assert call(api, "POST", _path(upload_id, "/complete"), token, json={}).json()["status"] == "processing"

    # a whole file other than the registered one fails, not retryable, and leaves nothing behind
    liar = register(desk, video, sha256=hashlib.sha256(b"other").hexdigest())
    receipts(desk, liar["upload_id"], send_parts(desk, liar, video))
    bad = call(api, "POST", _path(liar["upload_id"], "/complete"), token, json={})
    _code(bad, 422, "checksum_mismatch")
    assert bad.json()["sha256"] == hashlib.sha256(video).hexdigest()
    failed = call(api, "GET", _path(liar["upload_id"]), token).json()
    assert failed["status"] == "failed" and failed["error"]["code"] == "checksum_mismatch"
    assert failed["error"]["retryable"] is False and failed["parts_received"] == 0
    assert not desk.mp.assembled(f"uploads/{liar['upload_id']}/lesson.mp4")
    assert (
        desk.mp.list_parts(f"uploads/{liar['upload_id']}/lesson.mp4", _store_id(desk, liar["upload_id"]))
        == {}
    )
    _code(
        call(api, "POST", _path(liar["upload_id"], "/processing-retries"), token, json={}),
        422,
        "not_retryable",
    )
    # completing the failed upload again is refused like every other call on a finished upload
    _code(call(api, "POST", _path(liar["upload_id"], "/complete"), token, json={}), 409, "upload_finished")

    aborted = register(desk, video)["upload_id"]
    call(api, "DELETE", _path(aborted), token)
    _code(call(api, "POST", _path(aborted, "/complete"), token, json={}), 409, "upload_aborted")


def _store_id(desk: SimpleNamespace, upload_id: str) -> str:
    from svc_api.education.uploads import queries

    with desk.api.app.state.services.store.read() as conn:
        row = queries.row(conn, upload_id)
    assert row is not None
    return str(row.store_upload_id)


def test_processing_retries_take_retryable_failures_only(desk: SimpleNamespace) -> None:
    api, token = desk.api, desk.token
    pdf = make_pdf(pages=2)
    done = upload_whole(desk, pdf, "pdf")
    upload_id, key = done["upload_id"], f"uploads/{done['upload_id']}/handbook.pdf"
    _code(call(api, "POST", _path(upload_id, "/processing-retries"), token, json={}), 409, "not_failed")
    desk.mp.remove(key)  # the store loses the file: store trouble, retryable
    assert desk.run()["failed"] == 1
    failed = call(api, "GET", _path(upload_id), token).json()
    assert failed["status"] == "failed"
    assert failed["error"]["code"] == "store_unavailable" and failed["error"]["retryable"] is True
    desk.mp.store.put(key, pdf)
    retried = call(api, "POST", _path(upload_id, "/processing-retries"), token, json={})
    assert (
        retried.status_code == 200
        and retried.json()["status"] == "processing"
        and retried.json()["error"] is None
    )
    assert desk.run()["processed"] == 1
    assert call(api, "GET", _path(upload_id), token).json()["media"]["pages"] == 2
    _code(call(api, "POST", _path(upload_id, "/processing-retries"), token, json={}), 409, "not_failed")

    noise = np.random.default_rng(3).bytes(70_000)  # a "video" no decoder reads
    corrupt = upload_whole(desk, noise)["upload_id"]
    assert desk.run()["failed"] == 1
    error = call(api, "GET", _path(corrupt), token).json()["error"]
    assert error["code"] == "corrupt_media" and error["retryable"] is False
    _code(call(api, "POST", _path(corrupt, "/processing-retries"), token, json={}), 422, "not_retryable")
    aborted = register(desk, pdf, "pdf")["upload_id"]
    call(api, "DELETE", _path(aborted), token)
    _code(call(api, "POST", _path(aborted, "/processing-retries"), token, json={}), 409, "not_failed")


def test_delete_aborts_idempotently_with_the_store_side(desk: SimpleNamespace) -> None:
    api, token, video = desk.api, desk.token, make_video()
    upload = register(desk, video)
    upload_id, key = upload["upload_id"], f"uploads/{upload['upload_id']}/lesson.mp4"
    receipts(desk, upload_id, send_parts(desk, upload, video, [1, 2]))
    store_id = _store_id(desk, upload_id)
    assert sorted(desk.mp.list_parts(key, store_id)) == [1, 2]
    first = call(api, "DELETE", _path(upload_id), token)
    assert (
        first.status_code == 200
        and first.json()["status"] == "aborted"
        and first.json()["parts_received"] == 0
    )
    assert desk.mp.list_parts(key, store_id) == {}
    again = call(api, "DELETE", _path(upload_id), token)
    assert again.status_code == 200 and again.json()["status"] == "aborted"
    _code(call(api, "DELETE", _path(upload_id), token, json={"force": True}), 400, "invalid_request")

    # a processed file stays in the store (a published lesson may play it); the upload is no longer usable
    done = upload_whole(desk, make_pdf(pages=1, attachment=100), "pdf")
    desk.run()
    assert call(api, "DELETE", _path(done["upload_id"]), token).json()["status"] == "aborted"
    assert desk.mp.assembled(f"uploads/{done['upload_id']}/handbook.pdf")
    # one still processing loses its file
    pending = upload_whole(desk, make_pdf(pages=1, attachment=100), "pdf")
    call(api, "DELETE", _path(pending["upload_id"]), token)
    assert not desk.mp.assembled(f"uploads/{pending['upload_id']}/handbook.pdf")
    assert desk.run()["processed"] == 0


def test_a_failed_upload_keeps_its_file_for_the_retention_then_is_aborted(desk: SimpleNamespace) -> None:
    """``EDU_FAILED_UPLOAD_DAYS``: the row turns ``aborted`` first, then the file leaves the store."""
    from svc_api.education.uploads import processing, queries

    api, token, services = desk.api, desk.token, desk.api.app.state.services
    keep = services.settings.edu_failed_upload_days * 86_400
    assert keep == 7 * 86_400  # the documented default
    noise = np.random.default_rng(5).bytes(70_000)  # a "video" no decoder reads: failed, not retryable
    upload_id = upload_whole(desk, noise)["upload_id"]
    assert desk.run()["failed"] == 1
    with services.store.read() as conn:
        key = queries.row(conn, upload_id).object_key

    def run() -> dict[str, int]:
        mp = processing.multipart_of(services)
        return processing.run_once(services.store, mp, now=api.clock.now(), failed_keep_seconds=keep)

    api.clock.advance(int(keep) - 1)
    assert run()["aborted"] == 0 and desk.mp.store.exists(key)
    api.clock.advance(2)
    assert run()["aborted"] == 1
    assert not desk.mp.store.exists(key)
    snapshot = call(api, "GET", _path(upload_id), token).json()
    assert snapshot["status"] == "aborted" and snapshot["error"]["code"] == "retention_expired"
    _code(call(api, "POST", _path(upload_id, "/processing-retries"), token, json={}), 409, "not_failed")
    assert processing.expire_failed(services.store, desk.mp, now=api.clock.now(), keep_seconds=0) == 0
