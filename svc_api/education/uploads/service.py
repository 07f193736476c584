"""Uploads of an instructor's media: register, list, read, part URLs, part receipts, reconcile and
abort (:mod:`.completion` assembles, :mod:`.processing` probes), and :func:`processed_media` for
the curriculum.

Every operation needs an instructor role (403); another instructor's upload is as unknown as a
missing one (404). Store calls run outside store transactions where they can (the part listing,
presigning), and state changes are conditional updates of the upload row taken under a lock, so
racing requests leave one consistent part set.

Example:
    >>> safe_name("Lesson 1: intro (final).mp4")
    'Lesson_1_intro_final_.mp4'
"""

from __future__ import annotations

import re
from typing import Any

from sqlalchemy.engine import Connection, Row

from svc_api.core.errors import Conflict, NotFound
from svc_api.core.store import Store
from svc_api.education.conventions import new_id
from svc_api.education.studio import service as studio
from svc_api.education.uploads import policy
from svc_api.education.uploads import queries as q
from svc_api.education.uploads.contract import EduUploadRegistration, Part
from svc_api.education.uploads.multipart import Multipart, StoredPart

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
CLEANUP = "cleanup"
"""``claimed_by`` of an aborted upload whose parts may still be in the store."""


def safe_name(filename: str) -> str:
    """The file name as a piece of an object key."""
    name = _UNSAFE.sub("_", filename).lstrip("._-")[-100:]
    return name or "file"


def view(conn: Connection, row: Row[Any], *, received: list[int] | None = None) -> dict[str, Any]:
    """The authoritative snapshot of an upload."""
    numbers = q.part_numbers(conn, row.upload_id) if received is None else received
    received_bytes = q.part_totals(conn, [row.upload_id]).get(row.upload_id, (0, 0))[1]
    out: dict[str, Any] = {
        "upload_id": row.upload_id,
        "kind": row.kind,
        "filename": row.filename,
        "content_type": row.content_type,
        "size_bytes": int(row.size_bytes),
        "sha256": row.sha256,
        "status": row.status,
        "part_policy": policy.POLICY.describe(int(row.part_size), int(row.part_count)),
        "lease": {"seconds": policy.LEASE_SECONDS, "expires_at": int(row.lease_until)},
        "parts_received": len(numbers),
        "received_parts": policy.ranges(numbers),
        "bytes_received": int(received_bytes),
        "missing_parts": int(row.part_count) - len(numbers),
        "part_failures": int(row.part_failures),
        "processing": {"attempts": int(row.attempts), "claim_expires_at": row.claim_until}
        if row.status == "processing"
        else None,
        "media": _media(row) if row.status == "processed" else None,
        "error": {"code": row.error_code, "message": row.error_message, "retryable": bool(row.retryable)}
        if row.error_code is not None
        else None,
        "created_at": int(row.created_at),
        "updated_at": int(row.updated_at),
    }
    return out


def _media(row: Row[Any]) -> dict[str, Any]:
    return {"media_key": row.object_key, **dict(row.media or {})}


def own(conn: Connection, leader_id: str, upload_id: str, *, lock: bool = False) -> Row[Any]:
    """The leader's upload (404 unknown or another's)."""
    row = q.row(conn, upload_id, lock=lock)
    if row is None or row.leader_id != leader_id:
        raise NotFound(f"no upload {upload_id} among yours", code="not_found")
    return row


def require_open(row: Row[Any], now: int) -> None:
    """409 unless parts may still arrive: not finished, not aborted, lease not run out."""
    if row.status == "aborted":
        raise Conflict(f"upload {row.upload_id} was aborted", code="upload_aborted")
    if row.status != "uploading":
        raise Conflict(f"upload {row.upload_id} is {row.status}: its parts are final", code="upload_finished")
    if row.lease_until < now:
        raise Conflict(
            f"the lease of upload {row.upload_id} ran out: it is being aborted, register again",
            code="lease_expired",
        )


def gate(store: Store, leader_id: str, upload_id: str | None) -> None:
    """403 unless the caller is an instructor; with ``upload_id``, 404 unless it is one of theirs
    (what a route checks before the rules of its body)."""
    with store.read() as conn:
        studio.require_instructor(conn, leader_id)
        if upload_id is not None:
            own(conn, leader_id, upload_id)


def register(
    store: Store, mp: Multipart, leader_id: str, asked: EduUploadRegistration, *, now: int
) -> dict[str, Any]:
    """A new upload with its part policy and lease (201); 409 with too many in flight."""
    with store.read() as conn:
        studio.require_instructor(conn, leader_id)
    fields = {
        "kind": asked.kind,
        "filename": asked.filename,
        "content_type": asked.content_type,
        "size_bytes": asked.size_bytes,
        "sha256": asked.sha256,
        "part_size": asked.part_size_bytes,
        "part_count": asked.part_count,
    }
    upload_id = new_id("up_")
    key = f"uploads/{upload_id}/{safe_name(asked.filename)}"
    with store.write() as conn:
        _room(conn, leader_id)
    store_id = mp.start(key)
    try:
        with store.write() as conn:
            _room(conn, leader_id)
            q.insert(
                conn,
                upload_id=upload_id,
                leader_id=leader_id,
                object_key=key,
                store_upload_id=store_id,
                status="uploading",
                lease_until=now + policy.LEASE_SECONDS,
                attempts=0,
                created_at=now,
                updated_at=now,
                **fields,
            )
            return view(conn, own(conn, leader_id, upload_id), received=[])
    except BaseException:
        mp.abort(key, store_id)
        raise


def _room(conn: Connection, leader_id: str) -> None:
    if q.in_flight(conn, leader_id, policy.OPEN) >= policy.MAX_IN_FLIGHT:
        raise Conflict(
            f"at most {policy.MAX_IN_FLIGHT} uploads in flight: complete or abort one first",
            code="too_many_uploads",
        )


def read(store: Store, leader_id: str, upload_id: str) -> dict[str, Any]:
    """The authoritative snapshot of one of the leader's uploads."""
    with store.read() as conn:
        studio.require_instructor(conn, leader_id)
        return view(conn, own(conn, leader_id, upload_id))


def listing(
    store: Store, leader_id: str, status: str | None, after: dict[str, Any] | None, limit: int
) -> tuple[list[dict[str, Any]], bool]:
    """The leader's uploads, newest first (``status``: only those)."""
    with store.read() as conn:
        studio.require_instructor(conn, leader_id)
        rows, more = q.page(conn, leader_id, status, after, limit)
        return [view(conn, row) for row in rows], more


def part_target(store: Store, upload_id: str) -> Row[Any] | None:
    """The upload a part sent to a signed URL is for (None when there is none)."""
    with store.read() as conn:
        return q.row(conn, upload_id)


def part_urls(
    store: Store, mp: Multipart, leader_id: str, upload_id: str, numbers: list[Any] | None, *, now: int
) -> dict[str, Any]:
    """URLs for missing parts only (the asked ``numbers``, or the first 16 missing); renews the lease."""
    with store.write() as conn:
        studio.require_instructor(conn, leader_id)
        row = own(conn, leader_id, upload_id, lock=True)
        asked = policy.check_part_numbers(numbers, int(row.part_count))
        require_open(row, now)
        received = set(q.part_numbers(conn, upload_id))
        candidates = asked if asked is not None else range(1, int(row.part_count) + 1)
        missing = [n for n in candidates if n not in received][: policy.MAX_URLS]
        q.update(conn, upload_id, now, lease_until=now + policy.LEASE_SECONDS)
    ttl, pol = policy.URL_TTL_SECONDS, policy.POLICY
    urls = [
        {
            "part_number": n,
            "method": "PUT",
            "url": mp.part_url(upload_id, row.object_key, row.store_upload_id, n, ttl=ttl, now=now),
            "size_bytes": pol.expected_size(int(row.size_bytes), int(row.part_size), n),
            "expires_at": now + ttl,
        }
        for n in missing
    ]
    return {
        "upload_id": upload_id,
        "parts": urls,
        "missing_parts": int(row.part_count) - len(received),
        "lease": {"seconds": policy.LEASE_SECONDS, "expires_at": now + policy.LEASE_SECONDS},
    }


def receipts(
    store: Store, mp: Multipart, leader_id: str, upload_id: str, parts: list[Part], *, now: int
) -> dict[str, Any]:
    """Record parts the client finished (idempotent). Each must be in the store with that entity
    tag (409 otherwise); receipts repeated after complete that agree with the part set answer the
    snapshot. A receipt may report the SHA-256 of the part's bytes (``sha256``): complete then
    finds the parts whose bytes are not those and asks for them again (:mod:`.resend`)."""
    with store.read() as conn:
        studio.require_instructor(conn, leader_id)
        row = own(conn, leader_id, upload_id)
        sent = policy.check_parts(parts, int(row.part_count))
        sums = {part.part_number: part.sha256 for part in parts if part.sha256 is not None}
        if row.status in policy.FINISHED:
            recorded = {n: r.etag for n, r in q.parts(conn, upload_id).items()}
            if all(recorded.get(n) == tag for n, tag in sent.items()):
                return view(conn, row)
        require_open(row, now)
    stored = mp.list_parts(row.object_key, row.store_upload_id)
    for number, tag in sent.items():
        held = stored.get(number)
        if held is None:
            raise Conflict(f"part {number} is not in the store: PUT it first", code="part_not_in_store")
        if held.etag != tag:
            raise Conflict(
                f"part {number}: the store holds entity tag {held.etag}, the receipt says {tag}",
                code="checksum_mismatch",
            )
    with store.write() as conn:
        row = own(conn, leader_id, upload_id, lock=True)
        require_open(row, now)
        for number in sent:
            held = stored[number]
            q.save_part(conn, upload_id, number, held.etag, held.size, now, sums.get(number))
        q.update(conn, upload_id, now, lease_until=now + policy.LEASE_SECONDS)
        return view(conn, own(conn, leader_id, upload_id))


def reconcile(store: Store, mp: Multipart, leader_id: str, upload_id: str, *, now: int) -> dict[str, Any]:
    """Rebuild the part set from the store's part listing (after client loss); renews the lease.
    An empty listing beside a joined object (S3: a complete whose check failed on store trouble
    consumed the multipart upload) keeps the record: the next complete checks that object."""
    with store.read() as conn:
        studio.require_instructor(conn, leader_id)
        require_open(own(conn, leader_id, upload_id), now)
        row = own(conn, leader_id, upload_id)
    stored = mp.list_parts(row.object_key, row.store_upload_id)
    joined = not stored and mp.assembled(row.object_key)
    with store.write() as conn:
        require_open(own(conn, leader_id, upload_id, lock=True), now)
        if not joined:
            apply_listing(conn, upload_id, stored, int(row.part_count), now)
        q.update(conn, upload_id, now, lease_until=now + policy.LEASE_SECONDS)
        return view(conn, own(conn, leader_id, upload_id))


def apply_listing(
    conn: Connection, upload_id: str, stored: dict[int, StoredPart], part_count: int, now: int
) -> None:
    """Make the recorded part set the store's (parts outside the upload's numbers are ignored)."""
    keep = [n for n in stored if 1 <= n <= part_count]
    q.drop_parts(conn, upload_id, keep=keep)
    for number in keep:
        q.save_part(conn, upload_id, number, stored[number].etag, stored[number].size, now)


def abort(store: Store, mp: Multipart, leader_id: str, upload_id: str, *, now: int) -> dict[str, Any]:
    """Abort (idempotent): the upload ends ``aborted`` and its parts leave the store, and so does
    its assembled file unless it was processed (a published lesson may play it)."""
    with store.write() as conn:
        studio.require_instructor(conn, leader_id)
        row = own(conn, leader_id, upload_id, lock=True)
        if row.status != "aborted":
            q.update(
                conn,
                upload_id,
                now,
                status="aborted",
                claimed_by=_cleanup_marker(row),
                claim_until=now,
                error_code=None,
                error_message=None,
                retryable=None,
            )
    cleanup(store, mp, upload_id)
    with store.read() as conn:
        return view(conn, own(conn, leader_id, upload_id))


def _cleanup_marker(row: Row[Any]) -> str:
    """The cleanup marker, remembering whether the assembled file must stay (it was processed)."""
    return f"{CLEANUP}:keep" if row.status == "processed" else CLEANUP


def cleanup(store: Store, mp: Multipart, upload_id: str) -> None:
    """Remove an aborted upload's parts (and file) from the store, then forget them."""
    with store.read() as conn:
        row = q.row(conn, upload_id)
    if row is None or row.status != "aborted":
        return
    mp.abort(row.object_key, row.store_upload_id)
    if row.claimed_by != f"{CLEANUP}:keep":
        mp.remove(row.object_key)
    with store.write() as conn:
        q.drop_parts(conn, upload_id)
        q.update(conn, upload_id, int(row.updated_at), when=("aborted",), claimed_by=None, claim_until=None)


def processed_media(conn: Connection, leader_id: str, upload_id: str) -> dict[str, Any] | None:
    """What a lesson needs of a processed upload of ``leader_id``; None for any other upload.

    ``{"upload_id", "kind": "video"|"pdf", "media_key", "duration_seconds"}`` for a video,
    ``"pages"`` instead of a duration for a PDF.
    """
    row = q.processed(conn, leader_id, upload_id)
    if row is None:
        return None
    media = dict(row.media or {})
    out: dict[str, Any] = {"upload_id": upload_id, "kind": row.kind, "media_key": row.object_key}
    if row.kind == "video":
        out["duration_seconds"] = int(media["duration_seconds"])
    else:
        out["pages"] = int(media["pages"])
    return out
