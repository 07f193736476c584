"""Parts whose bytes are wrong are asked for again instead of failing the upload (issue 31), on SQLite
and PostgreSQL and on both object stores: receipts report each part's SHA-256, complete names the
parts that disagree (422 ``parts_corrupt``), keeps the good ones (local part files; on S3 copied from
the joined object into a new multipart upload), and after ``EDU_UPLOAD_PART_RESENDS`` such rounds
fails the upload as a whole-file mismatch always did."""

from __future__ import annotations

import hashlib
from types import SimpleNamespace
from typing import Any

import httpx
import pytest

from svc_api.education.uploads import queries
from tests.api.education_helpers import call
from tests.api.upload_helpers import leader_desk, make_video, moto_server, pieces, register, send_parts

moto_endpoint = pytest.fixture(scope="session")(moto_server)
desk = pytest.fixture(params=["local", "s3"])(leader_desk)

PART = 65536


def _path(upload_id: str, tail: str = "") -> str:
    return f"/studio/uploads/{upload_id}{tail}"


def _spoiled(data: bytes, *numbers: int) -> bytes:
    """``data`` with one byte flipped inside each of the parts ``numbers`` (same length)."""
    out = bytearray(data)
    for n in numbers:
        out[(n - 1) * PART + 100] ^= 0xFF
    return bytes(out)


def _receipts(desk: SimpleNamespace, upload_id: str, etags: dict[int, str], truth: bytes) -> httpx.Response:
    """Receipts of ``etags`` reporting the SHA-256 each part of ``truth`` (the real file) has."""
    real = pieces(truth, PART)
    body = {
        "parts": [
            {"part_number": n, "etag": tag, "sha256": hashlib.sha256(real[n]).hexdigest()}
            for n, tag in sorted(etags.items())
        ]
    }
    reply = call(desk.api, "POST", _path(upload_id, "/part-receipts"), desk.token, json=body)
    assert reply.status_code == 200, reply.text
    return reply


def _round(desk: SimpleNamespace, upload: dict[str, Any], sent: bytes, truth: bytes) -> httpx.Response:
    """PUT every missing part (their bytes from ``sent``), report receipts against ``truth``, complete."""
    upload_id = upload["upload_id"]
    _receipts(desk, upload_id, send_parts(desk, upload, sent), truth)
    return call(desk.api, "POST", _path(upload_id, "/complete"), desk.token, json={})


def _row(desk: SimpleNamespace, upload_id: str) -> Any:
    with desk.api.app.state.services.store.read() as conn:
        return queries.row(conn, upload_id)


def _processed_sha256(desk: SimpleNamespace, upload_id: str) -> str:
    assert desk.run()["processed"] == 1
    done = call(desk.api, "GET", _path(upload_id), desk.token).json()
    assert done["status"] == "processed", done
    with desk.mp.local_copy(done["media"]["media_key"]) as path:
        return hashlib.sha256(path.read_bytes()).hexdigest()


def test_one_corrupt_part_is_sent_again_and_the_processed_file_is_the_registered_one(
    desk: SimpleNamespace,
) -> None:
    api, token, video = desk.api, desk.token, make_video()
    upload = register(desk, video)
    upload_id, count = upload["upload_id"], upload["part_policy"]["part_count"]
    assert count == 3
    corrupt = _round(desk, upload, _spoiled(video, 2), video)
    assert corrupt.status_code == 422, corrupt.text
    body = corrupt.json()
    assert (body["code"], body["parts"], body["part_failures"], body["resends_left"]) == (
        "parts_corrupt",
        [2],
        1,
        2,
    )
    snapshot = call(api, "GET", _path(upload_id), token).json()
    assert snapshot["status"] == "uploading" and snapshot["received_parts"] == [[1, 1], [3, 3]]
    assert snapshot["part_failures"] == 1 and snapshot["error"] is None
    assert snapshot["lease"]["expires_at"] == api.clock.now() + 86400
    # the store holds the good parts, byte for byte, under the recorded tags (S3: a new upload)
    row = _row(desk, upload_id)
    held = desk.mp.list_parts(row.object_key, row.store_upload_id)
    md5 = {n: hashlib.md5(p, usedforsecurity=False).hexdigest() for n, p in pieces(video, PART).items()}
    assert {n: part.etag for n, part in held.items()} == {1: md5[1], 3: md5[3]}
    assert not desk.mp.assembled(row.object_key)
    urls = call(api, "POST", _path(upload_id, "/part-urls"), token, json={}).json()
    assert [item["part_number"] for item in urls["parts"]] == [2] and urls["missing_parts"] == 1

    done = _round(desk, upload, video, video)
    assert done.status_code == 200 and done.json()["status"] == "processing", done.text
    assert _processed_sha256(desk, upload_id) == hashlib.sha256(video).hexdigest() == upload["sha256"]


def test_two_bad_rounds_then_a_good_one_complete(desk: SimpleNamespace) -> None:
    video = make_video()
    upload = register(desk, video)
    first = _round(desk, upload, _spoiled(video, 1, 3), video)
    assert (first.status_code, first.json()["code"], first.json()["parts"]) == (422, "parts_corrupt", [1, 3])
    second = _round(desk, upload, _spoiled(video, 3), video)  # part 1 arrives right, part 3 wrong again
    assert (second.json()["parts"], second.json()["resends_left"]) == ([3], 1)
    done = _round(desk, upload, video, video)
    assert done.status_code == 200, done.text
    assert done.json()["part_failures"] == 2
    assert _processed_sha256(desk, upload["upload_id"]) == upload["sha256"]


def test_past_the_resends_allowed_the_upload_fails_not_retryable_and_leaves_nothing(
    desk: SimpleNamespace,
) -> None:
    api, token, video = desk.api, desk.token, make_video()
    upload = register(desk, video)
    upload_id = upload["upload_id"]
    for left in (2, 1, 0):
        again = _round(desk, upload, _spoiled(video, 2), video)
        assert (again.json()["code"], again.json()["resends_left"]) == ("parts_corrupt", left)
    row = _row(desk, upload_id)
    last = _round(desk, upload, _spoiled(video, 2), video)
    assert last.status_code == 422 and last.json()["code"] == "checksum_mismatch", last.text
    assert (
        last.json()["parts"] == [2]
        and last.json()["sha256"] == hashlib.sha256(_spoiled(video, 2)).hexdigest()
    )
    failed = call(api, "GET", _path(upload_id), token).json()
    assert failed["status"] == "failed" and failed["part_failures"] == 3 and failed["parts_received"] == 0
    assert failed["error"]["code"] == "checksum_mismatch" and failed["error"]["retryable"] is False
    assert "parts [2] still disagree with their SHA-256 after 3 re-sends" in failed["error"]["message"]
    assert not desk.mp.assembled(row.object_key)
    assert desk.mp.list_parts(row.object_key, _row(desk, upload_id).store_upload_id) == {}
    retry = call(api, "POST", _path(upload_id, "/processing-retries"), token, json={})
    assert retry.json()["code"] == "not_retryable"

    # EDU_UPLOAD_PART_RESENDS=0: the first corrupt part fails the upload, as before issue 31
    services = api.app.state.services
    services.settings = services.settings.replace(edu_upload_part_resends=0)
    other = register(desk, video)
    assert _round(desk, other, _spoiled(video, 1), video).json()["code"] == "checksum_mismatch"


def test_without_part_checksums_or_with_a_wrong_registered_one_the_upload_fails_as_before(
    desk: SimpleNamespace,
) -> None:
    api, token, video = desk.api, desk.token, make_video()
    # no sha256 in the receipts: the service cannot tell which part is wrong
    plain = register(desk, video)
    etags = send_parts(desk, plain, _spoiled(video, 2))
    body = {"parts": [{"part_number": n, "etag": tag} for n, tag in etags.items()]}
    assert call(api, "POST", _path(plain["upload_id"], "/part-receipts"), token, json=body).status_code == 200
    bad = call(api, "POST", _path(plain["upload_id"], "/complete"), token, json={})
    assert bad.status_code == 422 and bad.json()["code"] == "checksum_mismatch" and "parts" not in bad.json()
    failed = call(api, "GET", _path(plain["upload_id"]), token).json()
    assert (failed["status"], failed["error"]["retryable"], failed["part_failures"]) == ("failed", False, 0)
    assert failed["parts_received"] == 0

    # every part matches its reported SHA-256, the whole file does not: the registered one is wrong
    liar = register(desk, video, sha256=hashlib.sha256(b"other").hexdigest())
    wrong = _round(desk, liar, video, video)
    assert wrong.status_code == 422 and wrong.json()["code"] == "checksum_mismatch", wrong.text
    failed = call(api, "GET", _path(liar["upload_id"]), token).json()
    assert failed["status"] == "failed" and failed["part_failures"] == 0
    assert failed["error"]["message"].endswith(
        "every part with a reported SHA-256 matches it: the registered SHA-256 is wrong"
    )
    row = _row(desk, liar["upload_id"])
    assert (
        not desk.mp.assembled(row.object_key)
        and desk.mp.list_parts(row.object_key, row.store_upload_id) == {}
    )


def test_a_malformed_part_sha256_is_a_400_and_a_well_formed_one_is_recorded(desk: SimpleNamespace) -> None:
    api, token, video = desk.api, desk.token, make_video()
    upload = register(desk, video)
    upload_id = upload["upload_id"]
    etags = send_parts(desk, upload, video, [1])
    for digest in ("ab" * 31, "zz" * 32, "ab" * 32 + "0", 12, ["ab" * 32], ""):
        body = {"parts": [{"part_number": 1, "etag": etags[1], "sha256": digest}]}
        reply = call(api, "POST", _path(upload_id, "/part-receipts"), token, json=body)
        assert reply.status_code == 400 and reply.json()["code"] == "invalid_request", (digest, reply.text)
        assert "parts[0].sha256 must be the 64 hex digits" in reply.text
    assert call(api, "GET", _path(upload_id), token).json()["parts_received"] == 0
    upper = hashlib.sha256(pieces(video, PART)[1]).hexdigest().upper()
    body = {"parts": [{"part_number": 1, "etag": etags[1], "sha256": upper}]}
    assert call(api, "POST", _path(upload_id, "/part-receipts"), token, json=body).status_code == 200
    with api.app.state.services.store.read() as conn:
        assert queries.parts(conn, upload_id)[1].sha256 == upper.lower()


def test_a_store_error_or_a_crash_while_parts_are_checked_leaves_an_upload_the_next_complete_finishes(
    desk: SimpleNamespace, monkeypatch: pytest.MonkeyPatch
) -> None:
    api, token, video = desk.api, desk.token, make_video()
    upload = register(desk, video)
    upload_id = upload["upload_id"]
    mp_class = type(desk.mp)
    keep_parts = mp_class.keep_parts

    def failing(self: Any, *args: Any) -> str:
        raise OSError("the store went away")

    monkeypatch.setattr(mp_class, "keep_parts", failing)
    down = _round(desk, upload, _spoiled(video, 2), video)
    assert down.status_code == 503, down.text
    snapshot = call(api, "GET", _path(upload_id), token).json()
    assert snapshot["status"] == "uploading" and snapshot["received_parts"] == [[1, 3]]
    assert snapshot["part_failures"] == 0
    # a reconcile on S3 (whose multipart upload the join consumed) keeps the record of the parts
    assert call(api, "POST", _path(upload_id, "/reconcile"), token, json={}).json()["received_parts"] == [
        [1, 3]
    ]
    monkeypatch.setattr(mp_class, "keep_parts", keep_parts)
    again = call(api, "POST", _path(upload_id, "/complete"), token, json={})
    assert (again.status_code, again.json()["code"], again.json()["parts"]) == (422, "parts_corrupt", [2])
    done = _round(desk, upload, video, video)
    assert done.status_code == 200, done.text
    assert _processed_sha256(desk, upload_id) == upload["sha256"]

    # a complete that died after joining (the local part files gone, S3's multipart upload consumed)
    crashed = register(desk, video)
    crashed_id = crashed["upload_id"]
    _receipts(desk, crashed_id, send_parts(desk, crashed, _spoiled(video, 3)), video)
    row = _row(desk, crashed_id)
    recorded = desk.mp.list_parts(row.object_key, row.store_upload_id)
    joined = hashlib.sha256(_spoiled(video, 3)).hexdigest()
    desk.mp.assemble(row.object_key, row.store_upload_id, {n: p.etag for n, p in recorded.items()}, joined)
    assert desk.mp.list_parts(row.object_key, row.store_upload_id) == {}
    now = api.clock.now()
    with api.app.state.services.store.write() as conn:
        queries.update(conn, crashed_id, now, status="assembling", claimed_by="cp_dead", claim_until=now - 1)
    resumed = call(api, "POST", _path(crashed_id, "/complete"), token, json={})
    assert (resumed.status_code, resumed.json()["parts"]) == (422, [3]), resumed.text
    assert call(api, "GET", _path(crashed_id), token).json()["received_parts"] == [[1, 2]]
    assert _round(desk, crashed, video, video).status_code == 200
    assert _processed_sha256(desk, crashed_id) == crashed["sha256"]


@pytest.mark.parametrize("desk", ["s3"], indirect=True)
def test_s3_copies_that_fail_or_die_half_way_leave_no_second_multipart_upload(
    desk: SimpleNamespace, monkeypatch: pytest.MonkeyPatch
) -> None:
    from botocore.exceptions import ClientError

    api, token, video = desk.api, desk.token, make_video()
    upload = register(desk, video)
    upload_id = upload["upload_id"]
    client, copy = desk.mp.client, desk.mp.client.upload_part_copy
    copies: list[int] = []

    def flaky(**params: Any) -> Any:
        copies.append(params["PartNumber"])
        if len(copies) == 2:
            raise ClientError({"Error": {"Code": "InternalError", "Message": "down"}}, "UploadPartCopy")
        return copy(**params)

    monkeypatch.setattr(client, "upload_part_copy", flaky)
    assert _round(desk, upload, _spoiled(video, 2), video).status_code == 503
    assert copies == [1, 3]
    row = _row(desk, upload_id)
    key = desk.mp._key(row.object_key)

    def open_uploads() -> list[str]:
        reply = client.list_multipart_uploads(Bucket=desk.mp.bucket, Prefix=key)
        return [u["UploadId"] for u in reply.get("Uploads", ())]

    assert open_uploads() == [] and desk.mp.assembled(row.object_key)  # the joined object still whole
    monkeypatch.setattr(client, "upload_part_copy", copy)
    # a complete that died after its copies, before recording them, left a part set behind
    spans = {1: (0, PART), 3: (2 * PART, len(video) - 2 * PART)}
    orphan = desk.mp.keep_parts(row.object_key, row.store_upload_id, spans)
    assert open_uploads() == [orphan]
    again = call(api, "POST", _path(upload_id, "/complete"), token, json={})
    assert again.json()["parts"] == [2]
    assert open_uploads() == [_row(desk, upload_id).store_upload_id] != [orphan]
    assert _round(desk, upload, video, video).status_code == 200
    assert open_uploads() == [] and _processed_sha256(desk, upload_id) == upload["sha256"]
