"""The reply models of the upload routes: the upload's snapshot and its page, the part URLs and the
stored part.

Example:
    >>> EduUploadLease.model_validate({"seconds": 86400, "expires_at": 1}).seconds
    86400
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from svc_api.education.contract import Page, Shape, Timestamp

Status = Literal["uploading", "assembling", "processing", "processed", "failed", "aborted"]


class EduUploadPartPolicy(Shape):
    """How the upload is cut into parts."""

    part_size_bytes: int
    part_count: int
    min_part_bytes: int
    max_part_bytes: int
    max_parts: int
    max_urls_per_call: int
    url_ttl_seconds: int


class EduUploadLease(Shape):
    """How long the upload stays open untouched (renewed by part URLs, receipts and reconcile)."""

    seconds: int
    expires_at: Timestamp


class EduUploadProcessing(Shape):
    """While ``processing``, the worker's claim."""

    attempts: int | None = None
    claim_expires_at: int | None = None


class EduUploadMedia(Shape):
    """When ``processed``: ``media_key`` (the object key of the assembled file); a video adds
    ``duration_seconds`` (whole seconds, rounded up), ``codec``, ``width``, ``height``,
    ``frame_rate`` (probed with FFmpeg through PyAV); a PDF adds ``pages`` (pypdf)."""

    media_key: str | None = None
    duration_seconds: int | None = None
    codec: str | None = None
    width: int | None = None
    height: int | None = None
    frame_rate: float | None = None
    pages: int | None = None


class EduUploadError(Shape):
    """Why it failed or was aborted. Not retryable: ``checksum_mismatch``, ``corrupt_media``,
    ``unsupported_media``, ``lease_expired``. Retryable: ``store_unavailable``, ``worker_error``,
    ``worker_lost`` (claims taken over 3 times)."""

    code: str | None = None
    message: str | None = None
    retryable: bool | None = None


class EduUpload(Shape):
    """The authoritative snapshot of an upload."""

    upload_id: str
    kind: Literal["video", "pdf"]
    filename: str
    content_type: str
    size_bytes: int
    sha256: str
    status: Status
    """`uploading`: parts arrive; `assembling`: a complete joins the parts; `processing`: waiting
    for or held by the worker; `processed`; `failed` (see `error.retryable`); `aborted` (by DELETE,
    or by the worker when the lease ran out)."""
    part_policy: EduUploadPartPolicy
    lease: EduUploadLease
    parts_received: int
    received_parts: list[Annotated[list[int], Field(min_length=2, max_length=2)]]
    """Recorded part numbers as inclusive `[first, last]` runs."""
    bytes_received: int
    missing_parts: int
    part_failures: Annotated[int, Field(ge=0)]
    """Completes that found parts whose bytes disagree with the SHA-256 their receipt reported
    (each answered 422 `parts_corrupt`); past `EDU_UPLOAD_PART_RESENDS` (3) of them the next fails
    the upload."""
    processing: EduUploadProcessing | None
    """While `processing`, the worker's claim."""
    media: EduUploadMedia | None
    """When `processed`: the assembled file and what probing found."""
    error: EduUploadError | None
    """Why it failed or was aborted."""
    created_at: int
    updated_at: int


class EduUploadPage(Page):
    """A page of uploads, newest first."""

    items: list[EduUpload]


class EduUploadPartUrl(Shape):
    """Where to PUT one part."""

    part_number: int
    method: Literal["PUT"]
    url: str
    size_bytes: int
    """What the part must hold."""
    expires_at: int


class EduUploadPartUrls(Shape):
    """URLs for missing parts."""

    upload_id: str
    missing_parts: int
    lease: EduUploadLease
    parts: list[EduUploadPartUrl]


class EduUploadPart(Shape):
    """A part the local store holds."""

    upload_id: str
    part_number: int
    etag: str
    size_bytes: int
