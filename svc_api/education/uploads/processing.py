"""The uploads worker: probes completed uploads, and keeps nothing stuck or left behind.

One run (:func:`run_once`):

1. aborts uploads whose lease ran out (their parts leave the store), and failed uploads untouched
   for ``EDU_FAILED_UPLOAD_DAYS`` (their file leaves the store), and finishes the store cleanup of
   aborted uploads whose cleanup failed before;
2. puts uploads whose complete died while assembling back to ``uploading``;
3. processes uploads in ``processing``: it takes the processing claim with a conditional update (a
   lease of :data:`~.policy.CLAIM_SECONDS`; a claim whose holder died is taken over once it ran
   out), copies the file out of the store, probes it (:mod:`.probe`) and, still holding the claim,
   marks it ``processed`` with what playback needs, or ``failed``: not retryable for a file the
   decoders reject (``corrupt_media``, ``unsupported_media``), retryable for store trouble
   (``store_unavailable``), a worker error (``worker_error``) or a claim taken over
   :data:`~.policy.MAX_ATTEMPTS` times (``worker_lost``).

Example:
    >>> from svc_api.settings import Settings
    >>> from svc_api.core.services import Services
    >>> upload_worker(Services(Settings(database_url="sqlite://", secret_key=b"k" * 32))).name
    'edu_uploads'
"""

from __future__ import annotations

import logging
from typing import Any

from svc_api.core.liveness import HOLDER
from svc_api.core.objectstore import from_settings
from svc_api.core.store import Store
from svc_api.core.workers import Periodic
from svc_api.education.uploads import completion, policy
from svc_api.education.uploads import queries as q
from svc_api.education.uploads.multipart import Multipart, store_errors
from svc_api.education.uploads.probe import MediaRejected, probe
from svc_api.education.uploads.service import CLEANUP, cleanup
from svc_api.education.uploads.stores import multipart_for

logger = logging.getLogger("svc_api.education.uploads")

BATCH = 4
"""Uploads one run processes at most (the rest wait for the next run)."""


def multipart_of(services: Any) -> Multipart:
    """The multipart side of the service's object store (``OBJECT_STORE_URL``, a local directory
    by default), made once per process."""
    settings = services.settings
    secret = bytes(settings.secret_key)

    def make() -> Multipart:
        return multipart_for(from_settings(settings), secret)

    return services.cached("edu-uploads-multipart", 86400, make)  # type: ignore[no-any-return]


def abort_abandoned(store: Store, mp: Multipart, *, now: int, limit: int = 50) -> int:
    """Abort ``uploading`` uploads whose lease ran out, parts removed from the store; the number."""
    with store.read() as conn:
        rows = q.abandoned(conn, now, limit)
        pending = q.cleanup_pending(conn, limit)
    aborted = 0
    for row in rows:
        with store.write() as conn:
            again = q.row(conn, row.upload_id, lock=True)
            if again is None or again.status != "uploading" or again.lease_until >= now:
                continue  # renewed meanwhile
            q.update(
                conn,
                row.upload_id,
                now,
                status="aborted",
                claimed_by=CLEANUP,
                claim_until=now,
                error_code="lease_expired",
                retryable=False,
                error_message=f"untouched for {policy.LEASE_SECONDS} seconds: the upload was abandoned",
            )
        aborted += 1
        pending.append(row.upload_id)
    for upload_id in pending:
        try:
            cleanup(store, mp, upload_id)
        except store_errors():
            logger.warning("store cleanup of upload %s failed; the next run tries again", upload_id)
    return aborted


def expire_failed(store: Store, mp: Multipart, *, now: int, keep_seconds: float, limit: int = 50) -> int:
    """Abort failed uploads untouched for ``keep_seconds`` (0: keep them) and remove their file and
    parts from the store; the number aborted. The row turns ``aborted`` first (every call then
    answers 409 ``upload_aborted`` and no lesson can take it), the file goes after: no row that a
    reader trusts ever points to a removed file. A crash between the two is finished by the
    cleanup of :func:`abort_abandoned` on a later run."""
    if keep_seconds <= 0:
        return 0
    before = int(now - keep_seconds)
    with store.read() as conn:
        due = q.failed_before(conn, before, limit)
    aborted: list[str] = []
    for upload_id in due:
        with store.write() as conn:
            again = q.row(conn, upload_id, lock=True)
            if again is None or again.status != "failed" or again.updated_at >= before:
                continue  # retried meanwhile
            q.update(
                conn,
                upload_id,
                now,
                status="aborted",
                claimed_by=CLEANUP,
                claim_until=now,
                error_code="retention_expired",
                retryable=False,
                error_message=f"failed and untouched for {int(keep_seconds)} seconds: its file was removed",
            )
        aborted.append(upload_id)
    for upload_id in aborted:
        try:
            cleanup(store, mp, upload_id)
        except store_errors():
            logger.warning("store cleanup of upload %s failed; the next run tries again", upload_id)
    return len(aborted)


def process(store: Store, mp: Multipart, upload_id: str, *, now: int, holder: str = HOLDER) -> str | None:
    """Claim and process one upload; its new status, or None when someone else holds it."""
    with store.write() as conn:
        if not q.claim(conn, upload_id, "processing", holder, now, now + policy.CLAIM_SECONDS):
            return None
        row = q.row(conn, upload_id)
    if row is None:
        return None
    if row.attempts > policy.MAX_ATTEMPTS:
        return _fail(
            store,
            upload_id,
            holder,
            now,
            "worker_lost",
            True,
            f"processing was taken over {row.attempts - 1} times: its workers died",
        )
    try:
        with mp.local_copy(row.object_key) as path:
            media = probe(row.kind, path)
    except MediaRejected as exc:
        return _fail(store, upload_id, holder, now, exc.code, False, exc.message)
    except store_errors() as exc:
        return _fail(
            store,
            upload_id,
            holder,
            now,
            "store_unavailable",
            True,
            f"the object store failed: {type(exc).__name__}",
        )
    except Exception as exc:
        logger.exception("processing upload %s failed", upload_id)
        return _fail(
            store, upload_id, holder, now, "worker_error", True, f"the worker failed: {type(exc).__name__}"
        )
    with store.write() as conn:
        done = q.release(conn, upload_id, holder, now, status="processed", media=media)
    return "processed" if done else None


def _fail(
    store: Store, upload_id: str, holder: str, now: int, code: str, retryable: bool, message: str
) -> str | None:
    with store.write() as conn:
        done = q.release(
            conn,
            upload_id,
            holder,
            now,
            status="failed",
            error_code=code,
            retryable=retryable,
            error_message=message[:300],
        )
    return "failed" if done else None


def run_once(
    store: Store, mp: Multipart, *, now: int, holder: str = HOLDER, failed_keep_seconds: float = 0
) -> dict[str, int]:
    """One pass of the worker (see the module docstring): counts of what it did; failed uploads
    past ``failed_keep_seconds`` are aborted too (:func:`expire_failed`, counted in ``aborted``)."""
    aborted = abort_abandoned(store, mp, now=now)
    aborted += expire_failed(store, mp, now=now, keep_seconds=failed_keep_seconds)
    resumed = completion.resume_stale(store, mp, now=now)
    with store.read() as conn:
        due = q.claimable(conn, "processing", now, BATCH)
    outcomes = [process(store, mp, upload_id, now=now, holder=holder) for upload_id in due]
    return {
        "aborted": aborted,
        "resumed": resumed,
        "processed": outcomes.count("processed"),
        "failed": outcomes.count("failed"),
    }


def upload_worker(services: Any) -> Periodic | None:
    """The registered worker (None when its interval is 0)."""
    every = float(services.settings.edu_upload_poll_seconds)
    if every <= 0:
        return None
    keep = float(services.settings.edu_failed_upload_days) * 86_400

    def run() -> dict[str, int]:
        mp = multipart_of(services)
        return run_once(services.store, mp, now=int(services.clock.now()), failed_keep_seconds=keep)

    return Periodic("edu_uploads", every, run)
