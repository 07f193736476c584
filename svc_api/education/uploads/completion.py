"""Completing an upload and asking for its processing again.

``complete`` checks before it changes anything: every part of the registered manifest recorded,
the store holding each with the recorded entity tag and the size the part policy gives it, and the
client's own manifest (``parts``, optional) naming the same tags (422 otherwise, the upload stays
``uploading``). It then takes the ``assembling`` claim with a conditional update, so of two
completes at once one assembles and the other answers 409 ``complete_in_progress`` (or, once the
first is done, the snapshot): the file is assembled and processed once. Assembly hashes the whole
file: a SHA-256 other than the registered one asks for the parts whose bytes disagree with the
SHA-256 their receipts reported (422 ``parts_corrupt``, back to ``uploading`` with the good parts,
a bounded number of times), or else fails the upload (not retryable, 422 ``checksum_mismatch``,
the parts and the file removed): :mod:`.resend`. Store trouble while assembling puts the
upload back to ``uploading`` and answers 503; a complete that died while assembling is taken over
by the next complete once its claim ran out. A complete of a completed upload answers its snapshot;
of a failed one, 409 ``upload_finished`` (as every other call on a finished upload).

Example:
    >>> check_manifest({1: "a", 2: "b"}, {1: "a", 2: "b"}, None) is None
    True
"""

from __future__ import annotations

from typing import Any

from svc_api.core.errors import ApiError, Conflict, Unavailable
from svc_api.core.store import Store
from svc_api.education.conventions import new_id
from svc_api.education.studio import service as studio
from svc_api.education.uploads import policy, resend
from svc_api.education.uploads import queries as q
from svc_api.education.uploads.contract import Part
from svc_api.education.uploads.multipart import ChecksumMismatch, Multipart, StoredPart, store_errors
from svc_api.education.uploads.service import apply_listing, own, view
from svc_api.education.uploads.tables import uploads

U = uploads.c


def _unprocessable(code: str, message: str, **extra: Any) -> ApiError:
    return ApiError(422, "unprocessable", code=code, extra={"message": message, **extra})


def check_manifest(recorded: dict[int, str], wanted: dict[int, str], sent: dict[int, str] | None) -> None:
    """422 when the client's manifest ``sent`` names other parts or tags than the recorded ones."""
    if sent is not None and sent != recorded:
        wrong = sorted(n for n in set(sent) | set(recorded) if sent.get(n) != recorded.get(n))
        raise _unprocessable(
            "manifest_mismatch",
            f"the manifest disagrees with the recorded parts at {wrong[:10]}",
            parts=wrong[:50],
        )


def _check_parts(row: Any, recorded: dict[int, Any], stored: dict[int, StoredPart], assembled: bool) -> None:
    count = int(row.part_count)
    missing = [n for n in range(1, count + 1) if n not in recorded]
    if missing:
        raise _unprocessable(
            "parts_missing",
            f"{len(missing)} of {count} parts are not received: send their receipts or reconcile",
            missing_parts=policy.ranges(missing)[:50],
        )
    if assembled:
        return
    for number in range(1, count + 1):
        held = stored.get(number)
        if held is None or held.etag != recorded[number].etag:
            raise _unprocessable(
                "store_disagrees",
                f"part {number} in the store is not the recorded one: reconcile, then complete",
                part_number=number,
            )
        size = policy.POLICY.expected_size(int(row.size_bytes), int(row.part_size), number)
        if held.size != size:
            raise _unprocessable(
                "part_size_mismatch",
                f"part {number} holds {held.size} bytes, the manifest needs {size}",
                part_number=number,
            )


def complete(
    store: Store,
    mp: Multipart,
    leader_id: str,
    upload_id: str,
    manifest: list[Part] | None,
    *,
    now: int,
    resends: int = policy.PART_RESENDS,
) -> dict[str, Any]:
    """Check, assemble and hand the upload to processing (see the module docstring); ``manifest``:
    the parts the client names (None: no manifest); ``resends``: completes that may ask for
    corrupt parts again (:mod:`.resend`)."""
    with store.read() as conn:
        studio.require_instructor(conn, leader_id)
        row = own(conn, leader_id, upload_id)
        sent = None if manifest is None else policy.check_parts(manifest, int(row.part_count))
        if row.status in ("processing", "processed"):
            return view(conn, row)  # completed already: the same snapshot, as a replay
        _can_complete(row, now)
        recorded = q.parts(conn, upload_id)
    stored = mp.list_parts(row.object_key, row.store_upload_id)
    assembled = not stored and mp.assembled(row.object_key)
    _check_parts(row, recorded, stored, assembled)
    etags = {n: r.etag for n, r in recorded.items()}
    check_manifest(etags, etags, sent)
    holder = new_id("cp_")
    with store.write() as conn:
        if not _claim(conn, upload_id, holder, now):
            row = own(conn, leader_id, upload_id)
            if row.status in ("processing", "processed"):
                return view(conn, row)
            _can_complete(row, now)
            raise Conflict("another complete of this upload is running", code="complete_in_progress")
    try:
        try:
            mp.assemble(row.object_key, row.store_upload_id, etags, row.sha256)
        except ChecksumMismatch as exc:
            resend.settle(store, mp, row, holder, recorded, exc.actual, now=now, resends=resends)
    except store_errors() as exc:
        with store.write() as conn:
            q.release(conn, upload_id, holder, now, status="uploading")
        raise Unavailable(
            f"the object store failed while assembling: {type(exc).__name__}", retry_after=5
        ) from None
    with store.write() as conn:
        if not q.release(conn, upload_id, holder, now, status="processing", attempts=0):
            mp.remove(row.object_key)
            raise Conflict(f"upload {upload_id} was aborted while assembling", code="upload_aborted")
        return view(conn, own(conn, leader_id, upload_id))


def _can_complete(row: Any, now: int) -> None:
    if row.status == "aborted":
        raise Conflict(f"upload {row.upload_id} was aborted", code="upload_aborted")
    if row.status == "failed":
        # As every other call on a finished upload: a failed one is not completed again (a
        # retryable processing failure takes processing-retries; any other registers again).
        raise Conflict(f"upload {row.upload_id} is failed: its parts are final", code="upload_finished")
    if row.status == "assembling" and (row.claim_until or 0) >= now:
        raise Conflict("another complete of this upload is running", code="complete_in_progress")
    if row.status == "uploading" and row.lease_until < now:
        raise Conflict(f"the lease of upload {row.upload_id} ran out", code="lease_expired")


def _claim(conn: Any, upload_id: str, holder: str, now: int) -> bool:
    """``uploading`` (or a dead complete's ``assembling``) to ``assembling`` held by ``holder``."""
    free = (U.status == "uploading") | ((U.status == "assembling") & (U.claim_until < now))
    query = (
        uploads.update()
        .where(U.upload_id == upload_id, free)
        .values(
            status="assembling", claimed_by=holder, claim_until=now + policy.CLAIM_SECONDS, updated_at=now
        )
    )
    return bool(conn.execute(query).rowcount == 1)


def retry(store: Store, leader_id: str, upload_id: str, *, now: int) -> dict[str, Any]:
    """Processing again after a retryable failure (409 not failed, 422 not retryable)."""
    with store.write() as conn:
        studio.require_instructor(conn, leader_id)
        row = own(conn, leader_id, upload_id, lock=True)
        if row.status != "failed":
            raise Conflict(f"upload {upload_id} is {row.status}, not failed", code="not_failed")
        if not row.retryable:
            raise _unprocessable(
                "not_retryable",
                f"processing failed with {row.error_code}, which no retry can fix: register again",
            )
        q.update(
            conn,
            upload_id,
            now,
            when=("failed",),
            status="processing",
            attempts=0,
            claimed_by=None,
            claim_until=None,
            error_code=None,
            error_message=None,
            retryable=None,
        )
        return view(conn, own(conn, leader_id, upload_id))


def resume_stale(store: Store, mp: Multipart, *, now: int, limit: int = 20) -> int:
    """Uploads whose complete died while assembling go back to ``uploading`` (the store's part set
    recorded again) so that the client's next complete proceeds; the number resumed."""
    with store.read() as conn:
        rows = q.stale_assembling(conn, now, limit)
    for row in rows:
        stored = mp.list_parts(row.object_key, row.store_upload_id)
        with store.write() as conn:
            again = q.row(conn, row.upload_id, lock=True)
            if again is None or again.status != "assembling" or (again.claim_until or 0) >= now:
                continue  # taken over meanwhile
            q.update(conn, row.upload_id, now, status="uploading", claimed_by=None, claim_until=None)
            if stored:
                apply_listing(conn, row.upload_id, stored, int(row.part_count), now)
    return len(rows)
