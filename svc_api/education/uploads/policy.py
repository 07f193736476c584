"""What an upload may be and how it is cut into parts: the request of ``POST /studio/uploads``
checked field by field, the part policy, the lease and the statuses.

Choices (documented in docs/education-api.md, section "Uploads"):

- parts of 5 MiB (S3's own minimum for every part but the last) to 64 MiB, at most 10,000 of them;
  the service picks the smallest whole number of MiB that keeps the count within bounds, a client
  may ask for another size within the bounds (``part_size_bytes``);
- a video is at most 20 GiB (``video/mp4``, ``video/quicktime``, ``video/webm``,
  ``video/x-matroska``), a PDF at most 512 MiB (``application/pdf``);
- a lease of 24 hours, renewed by every part URL, receipt and reconcile; an upload whose lease ran
  out is aborted by the worker and its parts leave the store;
- at most 20 uploads of one instructor in flight (``uploading``) at once (409 past it).

Example:
    >>> POLICY.part_size_for(12 * MIB)
    5242880
    >>> POLICY.part_count(12 * MIB, 5 * MIB), POLICY.part_size_for(100 * GIB) // MIB
    (3, 11)
    >>> ranges([1, 2, 3, 5, 7, 8])
    [[1, 3], [5, 5], [7, 8]]
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from svc_api.core.errors import Invalid

MIB = 1 << 20
GIB = 1 << 30

STATUSES = ("uploading", "assembling", "processing", "processed", "failed", "aborted")
"""``uploading`` (parts arrive), ``assembling`` (a complete is joining the parts), ``processing``
(waiting for or held by the worker), ``processed``, ``failed`` (retryable or not), ``aborted``."""
OPEN = ("uploading",)
FINISHED = ("assembling", "processing", "processed", "failed")

KINDS: dict[str, tuple[str, ...]] = {
    "video": ("video/mp4", "video/quicktime", "video/webm", "video/x-matroska"),
    "pdf": ("application/pdf",),
}
MAX_SIZE = {"video": 20 * GIB, "pdf": 512 * MIB}

LEASE_SECONDS = 24 * 3600
"""An upload nobody touches for this long is abandoned: the worker aborts it."""
URL_TTL_SECONDS = 3600
"""How long a part URL accepts its PUT."""
MAX_URLS = 16
"""Part URLs one call hands out at most."""
MAX_IN_FLIGHT = 20
"""Uploads of one instructor in ``uploading`` at once."""
CLAIM_SECONDS = 300
"""How long a processing or assembling claim holds before another worker may take it over."""
MAX_ATTEMPTS = 3
"""Processing claims taken over (a worker died each time) before the upload fails as retryable."""
PART_RESENDS = 3
"""Completes that may find corrupt parts (and ask for them again) before one more fails the upload
(``EDU_UPLOAD_PART_RESENDS``)."""

_SHA256 = re.compile(r"[0-9a-f]{64}")
_BAD_NAME = re.compile(r"[\x00-\x1f\x7f/\\]")
FIELDS = ("filename", "content_type", "size_bytes", "sha256", "kind", "part_size_bytes")


@dataclass(frozen=True)
class PartPolicy:
    """Bounds of the parts of a multipart upload.

    Example:
        >>> PartPolicy(min_part=5 * MIB, max_part=64 * MIB, max_parts=10_000).part_size_for(1)
        5242880
    """

    min_part: int
    max_part: int
    max_parts: int

    def part_size_for(self, size: int) -> int:
        """The service's part size for a file of ``size`` bytes: the minimum, or the smallest whole
        number of MiB that needs no more than ``max_parts`` parts."""
        need = -(-size // self.max_parts)
        return self.min_part if need <= self.min_part else -(-need // MIB) * MIB

    @staticmethod
    def part_count(size: int, part_size: int) -> int:
        """Parts of ``part_size`` bytes (the last one shorter) that hold ``size`` bytes."""
        return max(1, -(-size // part_size))

    def expected_size(self, size: int, part_size: int, part_number: int) -> int:
        """Bytes part ``part_number`` must hold."""
        count = self.part_count(size, part_size)
        return part_size if part_number < count else size - part_size * (count - 1)

    def describe(self, part_size: int, part_count: int) -> dict[str, Any]:
        """The ``part_policy`` object of an upload."""
        return {
            "part_size_bytes": part_size,
            "part_count": part_count,
            "min_part_bytes": self.min_part,
            "max_part_bytes": self.max_part,
            "max_parts": self.max_parts,
            "max_urls_per_call": MAX_URLS,
            "url_ttl_seconds": URL_TTL_SECONDS,
        }


POLICY = PartPolicy(min_part=5 * MIB, max_part=64 * MIB, max_parts=10_000)


def _int(body: Mapping[str, Any], name: str) -> int | None:
    value = body.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise Invalid(f"{name} must be an integer number of bytes")
    return value


def check_registration(body: Mapping[str, Any], policy: PartPolicy) -> dict[str, Any]:
    """The fields of a new upload with its part size and count (400 naming the first broken rule).

    Example:
        >>> fields = check_registration({"filename": "a.pdf", "content_type": "application/pdf",
        ...     "size_bytes": 11 * MIB, "sha256": "ab" * 32, "kind": "pdf"}, POLICY)
        >>> fields["part_size"], fields["part_count"]
        (5242880, 3)
    """
    unknown = sorted(set(body) - set(FIELDS))
    if unknown:
        raise Invalid(f"unknown field {unknown[0]!r}; this operation takes {', '.join(FIELDS)}")
    for name in FIELDS[:5]:
        if body.get(name) is None:
            raise Invalid(f"{name} is required")
    kind = body["kind"]
    if not isinstance(kind, str) or kind not in KINDS:
        raise Invalid(f"kind must be one of {', '.join(KINDS)}, got {kind!r}")
    filename = body["filename"]
    if not isinstance(filename, str) or not 1 <= len(filename.strip()) <= 255 or _BAD_NAME.search(filename):
        raise Invalid("filename must be 1-255 characters with no path separator or control character")
    content_type = body["content_type"]
    if content_type not in KINDS[kind]:
        raise Invalid(
            f"content_type of a {kind} must be one of {', '.join(KINDS[kind])}, got {content_type!r}"
        )
    size = _int(body, "size_bytes") or 0
    if not 1 <= size <= MAX_SIZE[kind]:
        raise Invalid(f"size_bytes of a {kind} must be 1-{MAX_SIZE[kind]}, got {size}")
    sha256 = body["sha256"]
    if not isinstance(sha256, str) or not _SHA256.fullmatch(sha256.lower()):
        raise Invalid("sha256 must be the 64 hex digits of the whole file's SHA-256")
    asked = _int(body, "part_size_bytes")
    part_size = asked if asked is not None else min(policy.part_size_for(size), policy.max_part)
    if not policy.min_part <= part_size <= policy.max_part:
        raise Invalid(f"part_size_bytes must be {policy.min_part}-{policy.max_part}, got {part_size}")
    count = policy.part_count(size, part_size)
    if count > policy.max_parts:
        raise Invalid(f"{size} bytes in parts of {part_size} make {count} parts, over {policy.max_parts}")
    return {
        "kind": kind,
        "filename": filename.strip(),
        "content_type": content_type,
        "size_bytes": size,
        "sha256": sha256.lower(),
        "part_size": part_size,
        "part_count": count,
    }


def check_part_numbers(value: object, part_count: int) -> list[int] | None:
    """Requested part numbers: None (all missing ones) or 1-16 distinct numbers of the upload.

    Example:
        >>> check_part_numbers([3, 1], 4), check_part_numbers(None, 4)
        ([1, 3], None)
    """
    if value is None:
        return None
    if not isinstance(value, list) or not value:
        raise Invalid(f"part_numbers must be a list of 1-{MAX_URLS} part numbers")
    if len(value) > MAX_URLS:
        raise Invalid(f"at most {MAX_URLS} part URLs per call, asked for {len(value)}")
    numbers = set()
    for item in value:
        if isinstance(item, bool) or not isinstance(item, int) or not 1 <= item <= part_count:
            raise Invalid(f"part numbers run from 1 to {part_count}, got {item!r}")
        numbers.add(item)
    if len(numbers) != len(value):
        raise Invalid("part_numbers lists a part twice")
    return sorted(numbers)


def check_parts(
    value: object, part_count: int, field: str = "parts", *, optional: tuple[str, ...] = ()
) -> dict[int, str]:
    """``[{part_number, etag}]`` as ``{part_number: etag}`` (quotes dropped, lower case); 400 on
    any other shape, a part number outside the upload or a part named twice. ``optional``: fields
    an item may carry besides (the caller reads them).

    Example:
        >>> check_parts([{"part_number": 2, "etag": '"AB12"'}], 3)
        {2: 'ab12'}
    """
    shape = "{part_number, etag" + "".join(f", {name}?" for name in optional) + "}"
    if not isinstance(value, list) or not value:
        raise Invalid(f"{field} must be a non-empty list of {shape}")
    out: dict[int, str] = {}
    for i, item in enumerate(value):
        if not isinstance(item, dict) or not {"part_number", "etag"} <= set(item) <= {
            "part_number",
            "etag",
            *optional,
        }:
            raise Invalid(f"{field}[{i}] must be an object {shape}")
        number, tag = item["part_number"], item["etag"]
        if isinstance(number, bool) or not isinstance(number, int) or not 1 <= number <= part_count:
            raise Invalid(f"{field}[{i}].part_number must be 1-{part_count}, got {number!r}")
        if not isinstance(tag, str) or not 1 <= len(tag.strip('"')) <= 80:
            raise Invalid(f"{field}[{i}].etag must be the entity tag the store answered for the part")
        if number in out:
            raise Invalid(f"{field} names part {number} twice")
        out[number] = normal_etag(tag)
    return out


def check_receipts(value: object, part_count: int) -> tuple[dict[int, str], dict[int, str]]:
    """The ``parts`` of part receipts: ``{part: etag}`` as :func:`check_parts` gives it, and the
    SHA-256 the client reports for each part's bytes where it does (``sha256``: 64 hex digits,
    given back in lower case; absent or null: none); 400 on a malformed one.

    Example:
        >>> check_receipts([{"part_number": 1, "etag": "a", "sha256": "AB" * 32},
        ...                 {"part_number": 2, "etag": "b"}], 2)[1] == {1: "ab" * 32}
        True
    """
    etags = check_parts(value, part_count, optional=("sha256",))
    sums: dict[int, str] = {}
    for i, item in enumerate(value):  # type: ignore[arg-type]  # a list: check_parts said so
        digest = item.get("sha256")
        if digest is None:
            continue
        if not isinstance(digest, str) or not _SHA256.fullmatch(digest.lower()):
            raise Invalid(f"parts[{i}].sha256 must be the 64 hex digits of the part's SHA-256")
        sums[item["part_number"]] = digest.lower()
    return etags, sums


def normal_etag(tag: str) -> str:
    """An entity tag without its quotes, in lower case (how both stores are compared).

    Example:
        >>> normal_etag('"D41D8CD98F00B204E9800998ECF8427E"')
        'd41d8cd98f00b204e9800998ecf8427e'
    """
    return tag.strip().strip('"').lower()


def ranges(numbers: Iterable[int]) -> list[list[int]]:
    """Sorted part numbers as inclusive ``[first, last]`` runs (how a snapshot lists received parts)."""
    out: list[list[int]] = []
    for n in sorted(numbers):
        if out and n == out[-1][1] + 1:
            out[-1][1] = n
        else:
            out.append([n, n])
    return out
