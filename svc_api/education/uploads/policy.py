"""What an upload may be and how it is cut into parts: the part policy, the lease, the statuses,
and the checks of part numbers against an upload (the request's own format rules are the models'
of :mod:`.contract`).

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

from collections.abc import Iterable, Sequence
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


def check_part_numbers(value: list[Any] | None, part_count: int) -> list[int] | None:
    """The asked part numbers (a list of 1-16 items: the model said so) as distinct numbers of the
    upload, sorted; None asks for all missing ones.

    Example:
        >>> check_part_numbers([3, 1], 4), check_part_numbers(None, 4)
        ([1, 3], None)
    """
    if value is None:
        return None
    numbers = set()
    for item in value:
        if isinstance(item, bool) or not isinstance(item, int) or not 1 <= item <= part_count:
            raise Invalid(f"part numbers run from 1 to {part_count}, got {item!r}")
        numbers.add(item)
    if len(numbers) != len(value):
        raise Invalid("part_numbers lists a part twice")
    return sorted(numbers)


def check_parts(parts: Sequence[Any], part_count: int, field: str = "parts") -> dict[int, str]:
    """``{part_number: etag}`` of the parts a request names (their shape and tags checked by the
    model); 400 for a part number outside the upload or a part named twice.

    Example:
        >>> from svc_api.education.uploads.contract import Part
        >>> check_parts([Part(2, "ab12")], 3)
        {2: 'ab12'}
    """
    out: dict[int, str] = {}
    for i, part in enumerate(parts):
        number = part.part_number
        if isinstance(number, bool) or not isinstance(number, int) or not 1 <= number <= part_count:
            raise Invalid(f"{field}[{i}].part_number must be 1-{part_count}, got {number!r}")
        if number in out:
            raise Invalid(f"{field} names part {number} twice")
        out[number] = part.etag
    return out


def ranges(numbers: Iterable[int]) -> list[list[int]]:
    """Sorted part numbers as inclusive ``[first, last]`` runs (how a snapshot lists received parts)."""
    out: list[list[int]] = []
    for n in sorted(numbers):
        if out and n == out[-1][1] + 1:
            out[-1][1] = n
        else:
            out.append([n, n])
    return out
