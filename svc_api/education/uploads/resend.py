"""What ``complete`` does when the joined file's SHA-256 is not the registered one.

A client may report each part's SHA-256 with its receipt. When it did, the service hashes each
reported part as the join saw it (the part files, or ranges of the joined S3 object) and the parts
whose bytes disagree are the ones to send again: the upload goes back to ``uploading`` holding the
good parts only (the local part files stay; on S3 they are copied server-side into a new multipart
upload of the same key), their receipts kept and the bad ones' dropped, and complete answers 422
``parts_corrupt`` naming them. ``part-urls`` then hands out URLs for exactly those.

The order keeps every step continuable: the store first holds the new part set (the old one, or
the joined object, still whole), then one transaction records it, then the joined object goes. A
crash or store error before the record leaves the upload as the next complete (or reconcile)
finds it; after the record, a joined object left over is replaced by the next join.

Bounded: ``part_failures`` counts the completes that found corrupt parts; with ``resends`` of them
spent, the next fails the upload as a whole-file mismatch without per-part checksums always did
(422 ``checksum_mismatch``, not retryable, parts and file removed), as does a mismatch where every
reported part agrees (the registered SHA-256 itself is wrong) or none was reported.

Example:
    >>> spans(10, 4, [1, 3])
    {1: (0, 4), 3: (8, 2)}
"""

from __future__ import annotations

import contextlib
from typing import Any, NoReturn

from svc_api.core.errors import ApiError, Conflict
from svc_api.core.store import Store
from svc_api.education.uploads import policy
from svc_api.education.uploads import queries as q
from svc_api.education.uploads.multipart import Multipart, store_errors
from svc_api.education.uploads.service import apply_listing

MESSAGE_CHARS = 300
"""The length of ``error_message`` (the column's)."""


def spans(size: int, part_size: int, numbers: list[int]) -> dict[int, tuple[int, int]]:
    """``{part: (offset, length)}`` of the parts ``numbers`` in a file of ``size`` bytes."""
    return {n: ((n - 1) * part_size, policy.POLICY.expected_size(size, part_size, n)) for n in numbers}


def corrupt_parts(mp: Multipart, row: Any, recorded: dict[int, Any]) -> tuple[list[int], int]:
    """The parts whose joined bytes disagree with the SHA-256 their receipt reported, and how many
    parts reported none."""
    reported = {n: r.sha256 for n, r in recorded.items() if r.sha256}
    if not reported:
        return [], len(recorded)
    where = spans(int(row.size_bytes), int(row.part_size), sorted(reported))
    digests = mp.part_digests(row.object_key, row.store_upload_id, where)
    return sorted(n for n, want in reported.items() if digests[n] != want), len(recorded) - len(reported)


def settle(
    store: Store,
    mp: Multipart,
    row: Any,
    holder: str,
    recorded: dict[int, Any],
    actual: str,
    *,
    now: int,
    resends: int,
) -> NoReturn:
    """Ask for the corrupt parts again (422 ``parts_corrupt``) or fail the upload (422
    ``checksum_mismatch``); store errors propagate (the caller answers 503)."""
    bad, unreported = corrupt_parts(mp, row, recorded)
    failures = int(row.part_failures)
    if not bad or failures >= resends:
        _fail(store, mp, row, holder, actual, now, bad=bad, unreported=unreported, resends=resends)
    count = int(row.part_count)
    keep = spans(int(row.size_bytes), int(row.part_size), [n for n in range(1, count + 1) if n not in bad])
    fresh = mp.keep_parts(row.object_key, row.store_upload_id, keep)
    listing = mp.list_parts(row.object_key, fresh)
    with store.write() as conn:
        reopened = q.release(
            conn,
            row.upload_id,
            holder,
            now,
            status="uploading",
            store_upload_id=fresh,
            part_failures=failures + 1,
            lease_until=now + policy.LEASE_SECONDS,
        )
        if reopened:
            apply_listing(conn, row.upload_id, listing, count, now)
    if not reopened:
        if fresh != row.store_upload_id:
            mp.abort(row.object_key, fresh)
        raise Conflict(f"upload {row.upload_id} was aborted while assembling", code="upload_aborted")
    with contextlib.suppress(*store_errors()):
        mp.remove(row.object_key)  # left over, the next join replaces it (and an abort removes it)
    raise _unprocessable(
        "parts_corrupt",
        f"{len(bad)} parts hold other bytes than their reported SHA-256: send them again "
        f"(part-urls gives their URLs), then complete; {resends - failures - 1} more such completes "
        "are allowed",
        parts=bad,
        part_failures=failures + 1,
        resends_left=resends - failures - 1,
    )


def _fail(
    store: Store,
    mp: Multipart,
    row: Any,
    holder: str,
    actual: str,
    now: int,
    *,
    bad: list[int],
    unreported: int,
    resends: int,
) -> NoReturn:
    """The upload fails, not retryable, its parts and joined file removed (as it always did)."""
    why = f"the assembled file has SHA-256 {actual}, not the registered {row.sha256}"
    if bad:
        why += f"; parts {bad[:8]} still disagree with their SHA-256 after {resends} re-sends"
    elif unreported < int(row.part_count):
        why += "; every part with a reported SHA-256 matches it"
        why += f" ({unreported} reported none)" if unreported else ": the registered SHA-256 is wrong"
    with store.write() as conn:
        q.release(
            conn,
            row.upload_id,
            holder,
            now,
            status="failed",
            error_code="checksum_mismatch",
            retryable=False,
            error_message=why[:MESSAGE_CHARS],
        )
        q.drop_parts(conn, row.upload_id)
    with contextlib.suppress(*store_errors()):  # what is left, the retention of failed uploads removes
        mp.abort(row.object_key, row.store_upload_id)
        mp.remove(row.object_key)
    extra: dict[str, Any] = {"sha256": actual, **({"parts": bad} if bad else {})}
    raise _unprocessable("checksum_mismatch", f"{why}: register again", **extra)


def _unprocessable(code: str, message: str, **extra: Any) -> ApiError:
    return ApiError(422, "unprocessable", code=code, extra={"message": message, **extra})
