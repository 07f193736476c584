"""Keyset cursors and page sizes for every list.

A cursor is ``base64url(JSON) "." base64url(HMAC-SHA256[:16])``: opaque to clients, cheap to check,
and tamper-evident. Anything that is not a cursor this service signed with this secret is a 400,
never a silent restart at page one (spec, Common rules 2).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

from svc_api.core.errors import ApiError

T = TypeVar("T")

__all__ = ["MAX_CURSOR_LENGTH", "decode_cursor", "encode_cursor", "page_size"]

#: Longer strings are refused before any decoding work (a cursor holds a few keys, not a payload).
MAX_CURSOR_LENGTH = 2048
_MAC_BYTES = 16  # 128 bits of HMAC-SHA256: forging is out of reach, cursors stay short
_INTEGER = re.compile(r"[+-]?[0-9]{1,18}")
_B64URL = re.compile(r"[A-Za-z0-9_-]+")


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _key(secret: str | bytes) -> bytes:
    return secret.encode() if isinstance(secret, str) else secret


def _mac(payload: str, secret: str | bytes) -> bytes:
    # Domain-separate cursor MACs from any other HMAC made with the same service secret.
    message = b"svc-cursor\x00" + payload.encode("ascii")
    return hmac.new(_key(secret), message, hashlib.sha256).digest()[:_MAC_BYTES]


def encode_cursor(position: Mapping[str, Any], secret: str | bytes) -> str:
    """Sign a keyset position (JSON-serialisable mapping) into an opaque URL-safe cursor.

    >>> c = encode_cursor({"ts": 1700000000, "id": "tx_9"}, b"secret")
    >>> decode_cursor(c, b"secret")
    {'id': 'tx_9', 'ts': 1700000000}
    """
    if not secret:
        raise ValueError("cursor secret must not be empty")
    payload = _b64(json.dumps(dict(position), separators=(",", ":"), sort_keys=True).encode())
    return f"{payload}.{_b64(_mac(payload, secret))}"


def _invalid(detail: str) -> ApiError:
    return ApiError(400, "invalid_cursor", extra={"message": f"cursor is not valid: {detail}"})


def decode_cursor(cursor: str, secret: str | bytes) -> dict[str, Any]:
    """The position inside a cursor; `ApiError` 400 ``invalid_cursor`` if malformed or tampered.

    >>> decode_cursor("eyJ0cyI6MX0.AAAAAAAAAAAAAAAAAAAAAA", b"secret")
    Traceback (most recent call last):
    ...
    svc_api.core.errors.ApiError: 400 invalid_cursor
    """
    if not isinstance(cursor, str) or not cursor:
        raise _invalid("expected a non-empty string")
    if len(cursor) > MAX_CURSOR_LENGTH:
        raise _invalid("too long")
    payload, dot, signature = cursor.partition(".")
    # Strict alphabet: the stdlib decoder would silently skip stray characters.
    if not dot or not _B64URL.fullmatch(payload) or not _B64URL.fullmatch(signature):
        raise _invalid("malformed")
    # The signature's text is compared, not its decoded bytes: a decoder ignores the unused low
    # bits of the last character, so another spelling of the same bytes would pass (1 in 4 edits).
    if not hmac.compare_digest(signature, _b64(_mac(payload, secret))):
        raise _invalid("signature does not match")
    try:
        raw = _unb64(payload)
    except (binascii.Error, ValueError):
        raise _invalid("malformed") from None
    try:
        position = json.loads(raw)
    except (UnicodeDecodeError, ValueError):
        raise _invalid("malformed") from None
    if not isinstance(position, dict):
        raise _invalid("malformed")
    return position


def page_size(
    value: object, default: int, lo: int, hi: int, *, clamp: bool = False, name: str = "limit"
) -> int:
    """A page size from a query or body value: missing -> ``default``; non-integer -> 400.

    Out of ``[lo, hi]`` is a 400 ``invalid_page_size``, except that with ``clamp=True`` a value
    above ``hi`` becomes ``hi`` (the spec's "larger clamped"); below ``lo`` is always a 400.

    >>> page_size(None, 25, 1, 100), page_size("40", 25, 1, 100), page_size(500, 50, 1, 50, clamp=True)
    (25, 40, 50)
    >>> page_size("1.5", 25, 1, 100)
    Traceback (most recent call last):
    ...
    svc_api.core.errors.ApiError: 400 invalid_page_size
    """
    if value is None:
        return default
    number = _as_int(value)
    if number is None:
        raise ApiError(
            400, "invalid_page_size", extra={"message": f"{name} must be an integer, got {value!r}"}
        )
    if number > hi and clamp:
        return hi
    if not lo <= number <= hi:
        raise ApiError(
            400,
            "invalid_page_size",
            extra={"message": f"{name} must be between {lo} and {hi}, got {number}"},
        )
    return number


def _as_int(value: object) -> int | None:
    """An int from an int or a decimal-integer string; None for bools, floats and anything else."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and _INTEGER.fullmatch(value.strip()):
        return int(value.strip())
    return None


def keyset_page(fetch: Callable[[int], Sequence[T]], limit: int) -> tuple[list[T], bool]:
    """One page of a keyset-paged list and whether more follow: ``fetch(n)`` returns up to ``n``
    rows after the position; one row more than the page is asked for, to know without a count.

    Example:
        >>> keyset_page(lambda n: list(range(10))[:n], 3)
        ([0, 1, 2], True)
        >>> keyset_page(lambda n: [7][:n], 3)
        ([7], False)
    """
    rows = fetch(limit + 1)
    return list(rows[:limit]), len(rows) > limit
