"""The request models of the upload routes: each field's format rule, in the order the routes check
them. Rules that need the upload (a part number beyond its part count, a part named twice, its
state) stay in :mod:`.policy` and the services; the Ops are in :mod:`.operations`.

Example:
    >>> body = EduUploadRegistration.parse({"filename": " a.pdf ", "content_type": "application/pdf",
    ...     "size_bytes": 11 * MIB, "sha256": "AB" * 32, "kind": "pdf"})
    >>> body.filename, body.part_size_bytes, body.part_count
    ('a.pdf', 5242880, 3)
    >>> EduUploadRegistration.parse({"kind": "pdf"})
    Traceback (most recent call last):
    ...
    svc_api.core.errors.Invalid: filename is required
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, NamedTuple, cast

from svc_api.core.contract import Sent
from svc_api.core.errors import Invalid
from svc_api.education.contract import Annotated, Check, Cursor, EduBody, EduQuery, Limit
from svc_api.education.uploads import policy
from svc_api.education.uploads.policy import KINDS, MAX_URLS, MIB, STATUSES

_SHA256 = re.compile(r"[0-9a-f]{64}")
_BAD_NAME = re.compile(r"[\x00-\x1f\x7f/\\]")
FIELDS = ("filename", "content_type", "size_bytes", "sha256", "kind", "part_size_bytes")
"""The fields of a registration, as its messages name them (the first five must be sent, their
absence reported in this order)."""


def _status(value: object, name: str) -> str | None:
    if value is not None and value not in STATUSES:
        raise Invalid(f"status must be one of {', '.join(STATUSES)}, got {value!r}")
    return None if value is None else str(value)


class EduUploadsQuery(EduQuery):
    """A page of the caller's uploads, of one status or all."""

    status: Annotated[str | None, Check(_status, {"enum": list(STATUSES)})]
    cursor: Cursor
    limit: Limit


def _bytes(value: object, name: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise Invalid(f"{name} must be an integer number of bytes")
    return value


def _kind(value: object, name: str) -> str:
    if not isinstance(value, str) or value not in KINDS:
        raise Invalid(f"kind must be one of {', '.join(KINDS)}, got {value!r}")
    return value


def _filename(value: object, name: str) -> str:
    if not isinstance(value, str) or not 1 <= len(value.strip()) <= 255 or _BAD_NAME.search(value):
        raise Invalid("filename must be 1-255 characters with no path separator or control character")
    return value.strip()


def _content_type(sent: Sent, name: str) -> str:
    kind = sent.request["kind"]  # checked before
    if sent.value not in KINDS[kind]:
        raise Invalid(f"content_type of a {kind} must be one of {', '.join(KINDS[kind])}, got {sent.value!r}")
    return str(sent.value)


def _size(sent: Sent, name: str) -> int:
    kind = sent.request["kind"]
    size = _bytes(sent.value, name) or 0
    if not 1 <= size <= policy.MAX_SIZE[kind]:
        raise Invalid(f"size_bytes of a {kind} must be 1-{policy.MAX_SIZE[kind]}, got {size}")
    return size


def _sha256(value: object, name: str) -> str:
    if not isinstance(value, str) or not _SHA256.fullmatch(value.lower()):
        raise Invalid("sha256 must be the 64 hex digits of the whole file's SHA-256")
    return value.lower()


def _part_size(sent: Sent, name: str) -> int:
    """The asked part size, or the service's for the file's size (whose rule ran before); the part
    count it gives must stay within the policy's bound."""
    pol, size, asked = policy.POLICY, sent.request["size_bytes"], _bytes(sent.value, name)
    part_size = asked if asked is not None else min(pol.part_size_for(size), pol.max_part)
    if not pol.min_part <= part_size <= pol.max_part:
        raise Invalid(f"part_size_bytes must be {pol.min_part}-{pol.max_part}, got {part_size}")
    count = pol.part_count(size, part_size)
    if count > pol.max_parts:
        raise Invalid(f"{size} bytes in parts of {part_size} make {count} parts, over {pol.max_parts}")
    return part_size


_SENT = ("content_type", "size_bytes", "part_size_bytes")


class EduUploadRegistration(EduBody):
    """A new upload: the file's kind, name, type, size and SHA-256, and optionally its part size."""

    kind: Annotated[str, Check(_kind, {"enum": list(KINDS)}, required=True)]
    filename: Annotated[
        str,
        Check(
            _filename,
            {
                "type": "string",
                "minLength": 1,
                "maxLength": 255,
                "description": "No `/`, `\\` or control character.",
            },
            required=True,
        ),
    ]
    content_type: Annotated[
        str,
        Check(
            _content_type,
            {
                "enum": [t for types in KINDS.values() for t in types],
                "description": "One of the kind's types (`application/pdf` for a PDF).",
            },
            required=True,
        ),
    ]
    size_bytes: Annotated[int, Check(_size, {"type": "integer", "minimum": 1}, required=True)]
    sha256: Annotated[
        str,
        Check(
            _sha256,
            {"type": "string", "pattern": "^[0-9a-fA-F]{64}$", "description": "SHA-256 of the whole file."},
            required=True,
        ),
    ]
    part_size_bytes: Annotated[
        int,
        Check(_part_size, {"type": "integer", "minimum": 5 * MIB, "maximum": 64 * MIB}),
    ]

    @classmethod
    def prepare(cls, data: Mapping[str, Any]) -> Any:
        # An unknown field, then every missing one, is reported before any field's rule, in the
        # words the registration always used; the rules that read other fields get the request
        # (those fields were checked before them).
        unknown = sorted(set(data) - set(FIELDS))
        if unknown:
            raise Invalid(f"unknown field {unknown[0]!r}; this operation takes {', '.join(FIELDS)}")
        for name in FIELDS[:5]:
            if data.get(name) is None:
                raise Invalid(f"{name} is required")
        return super().prepare(data) | {name: Sent(data.get(name), data) for name in _SENT}

    @property
    def part_count(self) -> int:
        """The parts of ``part_size_bytes`` that hold the file."""
        return policy.POLICY.part_count(self.size_bytes, self.part_size_bytes)


def _part_numbers(value: object, name: str) -> list[Any] | None:
    """The asked numbers as sent (whether each is one of the upload's needs the upload)."""
    if value is None:
        return None
    if not isinstance(value, list) or not value:
        raise Invalid(f"part_numbers must be a list of 1-{policy.MAX_URLS} part numbers")
    if len(value) > policy.MAX_URLS:
        raise Invalid(f"at most {policy.MAX_URLS} part URLs per call, asked for {len(value)}")
    return value


class EduPartUrlsRequest(EduBody):
    """Which parts to hand out URLs for (none: the first missing ones)."""

    part_numbers: Annotated[
        list[Any] | None,
        Check(
            _part_numbers,
            {
                "type": "array",
                "minItems": 1,
                "maxItems": MAX_URLS,
                "uniqueItems": True,
                "items": {"type": "integer", "minimum": 1},
            },
        ),
    ]


class Part(NamedTuple):
    """One part a request names: its number as sent (checked against the upload by
    :func:`.policy.part_numbers`), its entity tag without quotes in lower case, and the SHA-256 of
    its bytes a receipt may report."""

    part_number: Any
    etag: str
    sha256: str | None = None


def normal_etag(tag: str) -> str:
    """An entity tag without its quotes, in lower case (how both stores are compared).

    Example:
        >>> normal_etag('"D41D8CD98F00B204E9800998ECF8427E"')
        'd41d8cd98f00b204e9800998ecf8427e'
    """
    return tag.strip().strip('"').lower()


def _parts(value: object, name: str, optional: tuple[str, ...] = ()) -> list[Part]:
    """``[{part_number, etag}]`` (``optional``: fields an item may carry besides) as parts."""
    shape = "{part_number, etag" + "".join(f", {extra}?" for extra in optional) + "}"
    if not isinstance(value, list) or not value:
        raise Invalid(f"{name} must be a non-empty list of {shape}")
    for i, item in enumerate(value):
        if not isinstance(item, dict) or not {"part_number", "etag"} <= set(item) <= {
            "part_number",
            "etag",
            *optional,
        }:
            raise Invalid(f"{name}[{i}] must be an object {shape}")
        tag = item["etag"]
        if not isinstance(tag, str) or not 1 <= len(tag.strip('"')) <= 80:
            raise Invalid(f"{name}[{i}].etag must be the entity tag the store answered for the part")
    return [Part(item["part_number"], normal_etag(item["etag"])) for item in value]


def _receipts(value: object, name: str) -> list[Part]:
    parts = _parts(value, name, ("sha256",))
    items = cast(list[dict[str, Any]], value)  # a list of objects: _parts said so
    out = []
    for i, part in enumerate(parts):
        digest = items[i].get("sha256")
        if digest is not None and (not isinstance(digest, str) or not _SHA256.fullmatch(digest.lower())):
            raise Invalid(f"parts[{i}].sha256 must be the 64 hex digits of the part's SHA-256")
        out.append(part._replace(sha256=None if digest is None else digest.lower()))
    return out


def _manifest(value: object, name: str) -> list[Part] | None:
    return None if value is None else _parts(value, name)


_PART_ITEM = {
    "type": "object",
    "required": ["part_number", "etag"],
    "properties": {"part_number": {"type": "integer", "minimum": 1}, "etag": {"type": "string"}},
}


class EduPartReceipts(EduBody):
    """The parts the client finished, each with the entity tag its PUT answered."""

    parts: Annotated[
        list[Part],
        Check(
            _receipts,
            {
                "type": "array",
                "minItems": 1,
                "items": {
                    "type": "object",
                    "additionalProperties": False,
                    "required": ["part_number", "etag"],
                    "properties": {
                        "part_number": {"type": "integer", "minimum": 1},
                        "etag": {"type": "string", "minLength": 1, "maxLength": 82},
                        "sha256": {
                            "type": ["string", "null"],
                            "pattern": "^[0-9a-fA-F]{64}$",
                            "description": "SHA-256 (hex) of the bytes the part should hold (optional;"
                            " null is none). A part's last reported one stays while it is recorded.",
                        },
                    },
                },
            },
            required=True,
        ),
    ]


class EduUploadManifest(EduBody):
    """The client's own manifest of the parts (optional): complete checks it names the recorded ones."""

    parts: Annotated[list[Part] | None, Check(_manifest, {"type": "array", "items": _PART_ITEM})]
