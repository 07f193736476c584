"""Uploads under concurrency and failure, on SQLite and PostgreSQL and both object stores: racing
and repeated part receipts leave one consistent part set, two completes at once assemble and process
once, a killed worker's claim is taken over once it ran out, a dead complete is resumed, and
abandoned uploads are aborted with their parts removed from the store."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from types import SimpleNamespace
from typing import Any

import pytest
import sqlalchemy as sa

from svc_api.education.uploads import policy
from svc_api.education.uploads import queries as q
from tests.api.education_helpers import call
from tests.api.upload_helpers import (
    leader_desk,
    make_pdf,
    make_video,
    moto_server,
    receipts,
    register,
    send_parts,
    upload_whole,
)

moto_endpoint = pytest.fixture(scope="session")(moto_server)
desk = pytest.fixture(params=["local", "s3"])(leader_desk)


def _at_once(sends: list[Any]) -> list[Any]:
    with ThreadPoolExecutor(len(sends)) as pool:
        return list(pool.map(lambda send: send(), sends))


def _row(desk: SimpleNamespace, upload_id: str) -> Any:
    with desk.api.app.state.services.store.read() as conn:
        return q.row(conn, upload_id)


def _set(desk: SimpleNamespace, upload_id: str, **values: Any) -> None:
    with desk.api.app.state.services.store.write() as conn:
        conn.execute(q.uploads.update().where(q.U.upload_id == upload_id).values(**values))


def test_racing_and_repeated_part_receipts_leave_one_consistent_part_set(desk: SimpleNamespace) -> None:
    video = make_video(frames=50)
    upload = register(desk, video)
    upload_id = upload["upload_id"]
    etags = send_parts(desk, upload, video)
    assert len(etags) == upload["part_policy"]["part_count"] == 4
    subsets = [[1, 2], [2, 3], [3, 4], [1, 4], [1, 2, 3, 4], [2], [4, 3], [1, 2, 3, 4]]
    replies = _at_once([lambda s=s: receipts(desk, upload_id, {n: etags[n] for n in s}) for s in subsets])
    assert [r.status_code for r in replies] == [200] * len(subsets)
    again = receipts(desk, upload_id, etags)
    assert again.json()["received_parts"] == [[1, 4]] and again.json()["bytes_received"] == len(video)
    with desk.api.app.state.services.store.read() as conn:
        parts = q.parts(conn, upload_id)
        rows = conn.execute(sa.text("SELECT count(*) FROM edu_upload_parts")).scalar_one()
    assert rows == 4 and {n: f'"{p.etag}"' for n, p in parts.items()} == etags
    assert sum(int(p.size_bytes) for p in parts.values()) == len(video)


def test_two_completes_at_once_assemble_and_process_once(
    desk: SimpleNamespace, monkeypatch: pytest.MonkeyPatch
) -> None:
    video = make_video()
    upload = register(desk, video)
    upload_id = upload["upload_id"]
    receipts(desk, upload_id, send_parts(desk, upload, video))
    assembled = []
    original = desk.mp.assemble

    def counting(*args: Any, **kwargs: Any) -> None:
        assembled.append(args[0])
        original(*args, **kwargs)

    monkeypatch.setattr(desk.mp, "assemble", counting)
    path = f"/studio/uploads/{upload_id}/complete"
    replies = _at_once([lambda: call(desk.api, "POST", path, desk.token, json={}) for _ in range(4)])
    codes = [r.status_code for r in replies]
    assert set(codes) <= {200, 409} and 200 in codes, [r.text for r in replies]
    assert all(r.json()["code"] == "complete_in_progress" for r in replies if r.status_code == 409)
    assert assembled == [f"uploads/{upload_id}/lesson.mp4"]
    assert desk.run()["processed"] == 1 and desk.run()["processed"] == 0
    row = _row(desk, upload_id)
    assert row.status == "processed" and row.attempts == 1


def test_a_killed_workers_claim_is_taken_over_once_its_lease_ran_out(desk: SimpleNamespace) -> None:
    done = upload_whole(desk, make_pdf(pages=5), "pdf")
    upload_id, now = done["upload_id"], desk.api.clock.now()
    # a worker claimed it and died: its claim still holds for a while
    _set(desk, upload_id, claimed_by="gone-host:4242:1", claim_until=now + 100, attempts=1)
    assert desk.run()["processed"] == 0
    snapshot = call(desk.api, "GET", f"/studio/uploads/{upload_id}", desk.token).json()
    assert snapshot["status"] == "processing" and snapshot["processing"] == {
        "attempts": 1,
        "claim_expires_at": now + 100,
    }
    desk.api.clock.advance(101)
    assert desk.run()["processed"] == 1
    row = _row(desk, upload_id)
    assert (row.status, row.attempts, row.claimed_by, row.media) == ("processed", 2, None, {"pages": 5})

    # claims taken over too often: the upload fails, retryable, and a retry processes it
    again = upload_whole(desk, make_pdf(pages=2), "pdf")["upload_id"]
    _set(desk, again, claimed_by="gone-host:4242:1", claim_until=now, attempts=policy.MAX_ATTEMPTS)
    assert desk.run()["failed"] == 1
    error = call(desk.api, "GET", f"/studio/uploads/{again}", desk.token).json()["error"]
    assert error["code"] == "worker_lost" and error["retryable"] is True
    assert (
        call(desk.api, "POST", f"/studio/uploads/{again}/processing-retries", desk.token, json={}).status_code
        == 200
    )
    assert desk.run()["processed"] == 1


def test_a_complete_that_died_while_assembling_is_resumed(desk: SimpleNamespace) -> None:
    video = make_video(frames=10)
    upload = register(desk, video)
    upload_id = upload["upload_id"]
    receipts(desk, upload_id, send_parts(desk, upload, video))
    now = desk.api.clock.now()
    _set(desk, upload_id, status="assembling", claimed_by="cp_dead", claim_until=now + 50)
    busy = call(desk.api, "POST", f"/studio/uploads/{upload_id}/complete", desk.token, json={})
    assert busy.status_code == 409 and busy.json()["code"] == "complete_in_progress"
    desk.api.clock.advance(51)
    taken = call(desk.api, "POST", f"/studio/uploads/{upload_id}/complete", desk.token, json={})
    assert taken.status_code == 200 and taken.json()["status"] == "processing"
    assert desk.run()["processed"] == 1

    # the worker puts a dead complete back to uploading when no client comes back
    other = register(desk, video)
    receipts(desk, other["upload_id"], send_parts(desk, other, video))
    _set(
        desk,
        other["upload_id"],
        status="assembling",
        claimed_by="cp_dead",
        claim_until=desk.api.clock.now() - 1,
    )
    assert desk.run()["resumed"] == 1
    assert (
        call(desk.api, "GET", f"/studio/uploads/{other['upload_id']}", desk.token).json()["status"]
        == "uploading"
    )
    done = call(desk.api, "POST", f"/studio/uploads/{other['upload_id']}/complete", desk.token, json={})
    assert done.status_code == 200 and done.json()["status"] == "processing"


def test_abandoned_uploads_are_aborted_and_their_parts_leave_the_store(desk: SimpleNamespace) -> None:
    video = make_video()
    upload = register(desk, video)
    upload_id = upload["upload_id"]
    receipts(desk, upload_id, send_parts(desk, upload, video, [1, 2]))
    kept = register(desk, video)["upload_id"]
    row = _row(desk, upload_id)
    assert sorted(desk.mp.list_parts(row.object_key, row.store_upload_id)) == [1, 2]
    desk.api.clock.advance(policy.LEASE_SECONDS - 10)
    call(desk.api, "POST", f"/studio/uploads/{kept}/reconcile", desk.token, json={})  # activity renews
    desk.api.clock.advance(11)
    assert desk.run()["aborted"] == 1
    assert desk.mp.list_parts(row.object_key, row.store_upload_id) == {}
    snapshot = call(desk.api, "GET", f"/studio/uploads/{upload_id}", desk.token).json()
    assert snapshot["status"] == "aborted" and snapshot["error"]["code"] == "lease_expired"
    assert snapshot["parts_received"] == 0
    assert _row(desk, upload_id).claimed_by is None  # store cleanup done
    assert call(desk.api, "GET", f"/studio/uploads/{kept}", desk.token).json()["status"] == "uploading"
    gone = call(desk.api, "POST", f"/studio/uploads/{upload_id}/part-urls", desk.token, json={})
    assert gone.status_code == 409 and gone.json()["code"] == "upload_aborted"


def test_part_writes_racing_an_abort_leave_no_folder_and_no_part(tmp_path: Any) -> None:
    # Before parts folders were renamed away first, about one abort in five racing two writers left
    # the folder and a part behind (rmtree listed it, a writer added a file, rmdir failed quietly).
    import os
    import threading

    from svc_api.core.objectstore import LocalObjectStore
    from svc_api.education.uploads.multipart import LocalMultipart

    parts = LocalMultipart(LocalObjectStore(tmp_path), b"k" * 32)
    data = os.urandom(64 * 1024)
    for round_ in range(150):
        store_id = parts.start(f"up/{round_}")
        go = threading.Barrier(3)

        def write(first: int, store_id: str = store_id, go: threading.Barrier = go) -> None:
            go.wait()
            for number in range(first, first + 20):
                try:
                    parts.write_part(store_id, number, data)
                except OSError:  # the upload is gone
                    return

        writers = [threading.Thread(target=write, args=(first,)) for first in (1, 101)]
        for writer in writers:
            writer.start()
        go.wait()
        parts.abort(f"up/{round_}", store_id)
        for writer in writers:
            writer.join()
        assert list((tmp_path / "_multipart").iterdir()) == [], f"round {round_}"


def test_listing_parts_while_a_complete_removes_the_folder_reads_an_assembled_upload(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # CI once got a 500: the second of two completes listed the folder, the first assembled and
    # removed it, and the second's stat of a listed part raised FileNotFoundError.
    import os
    import shutil

    from svc_api.core.objectstore import LocalObjectStore
    from svc_api.education.uploads.multipart import LocalMultipart

    parts = LocalMultipart(LocalObjectStore(tmp_path), b"k" * 32)
    store_id = parts.start("up/race")
    parts.write_part(store_id, 1, b"a" * 10)
    parts.write_part(store_id, 2, b"b" * 7)
    real_scandir = os.scandir

    def scan_then_remove(path: Any) -> list[os.DirEntry[str]]:
        entries = list(real_scandir(path))
        monkeypatch.setattr(os, "scandir", real_scandir)  # once; rmtree scans too
        shutil.rmtree(path)  # the other complete finishes between the listing and the stats
        return entries

    monkeypatch.setattr(os, "scandir", scan_then_remove)
    assert parts.list_parts("up/race", store_id) == {}

    replaced = parts.start("up/again")
    parts.write_part(replaced, 1, b"a" * 10)

    def scan_then_replace(path: Any) -> list[os.DirEntry[str]]:
        entries = list(real_scandir(path))
        monkeypatch.setattr(os, "scandir", real_scandir)  # once; the write globs too
        parts.write_part(replaced, 1, b"c" * 12)  # a part sent again replaces its file mid-listing
        return entries

    monkeypatch.setattr(os, "scandir", scan_then_replace)
    listed = parts.list_parts("up/again", replaced)
    assert list(listed) == [1] and listed[1].size == 12
