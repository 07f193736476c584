"""Request bodies as JSON objects, refusing what a hostile client sends to crash a parser or an
encoder later: nesting deeper than :data:`MAX_DEPTH`, lone UTF-16 surrogates (``"\\ud800"`` parses
but can never be written as UTF-8), invalid UTF-8, ``NaN`` and infinities, and anything but an object.
Each is a 400 ``invalid_json`` whose message says which.

Example:
    >>> parse_object(b'{"a": [1, 2]}')
    {'a': [1, 2]}
    >>> parse_object(b'[' * 2000 + b']' * 2000)
    Traceback (most recent call last):
    ...
    svc_api.core.jsonbody.InvalidJson: the body nests deeper than 64 levels
    >>> parse_object(b'{"email": "\\\\ud800"}')
    Traceback (most recent call last):
    ...
    svc_api.core.jsonbody.InvalidJson: the body holds a lone UTF-16 surrogate, which is not text
"""

from __future__ import annotations

import json
import re
from typing import Any

from svc_api.core.errors import Invalid

MAX_DEPTH = 64
_SURROGATE = re.compile(rb"\\[uU][dD][89a-fA-F][0-9a-fA-F]{2}")


class InvalidJson(Invalid):
    """The body is not a JSON object the service can take (400)."""

    error = "invalid_json"


def _no_constant(name: str) -> Any:
    raise InvalidJson(f"the body holds {name}, which JSON does not allow")


# One decoder for every request: json.loads with an option builds a new one per call.
_DECODER = json.JSONDecoder(parse_constant=_no_constant)


def parse_object(raw: bytes) -> dict[str, Any]:
    """The JSON object in ``raw`` (``{}`` for an empty body); see the module docstring."""
    if not raw.strip():
        return {}
    if _depth_over(raw, MAX_DEPTH):
        raise InvalidJson(f"the body nests deeper than {MAX_DEPTH} levels")
    try:
        # what json.loads does with bytes, without building a decoder per body
        value = _DECODER.decode(raw.decode(json.detect_encoding(raw), "surrogatepass"))
    except UnicodeDecodeError:
        raise InvalidJson("the body is not valid UTF-8") from None
    except (ValueError, RecursionError):
        raise InvalidJson("the body must be a JSON object") from None
    if not isinstance(value, dict):
        raise InvalidJson("the body must be a JSON object")
    if _SURROGATE.search(raw) and _has_lone_surrogate(value):
        raise InvalidJson("the body holds a lone UTF-16 surrogate, which is not text")
    return value


def _depth_over(raw: bytes, limit: int) -> bool:
    """Whether brackets nest deeper than ``limit`` (a cheap upper bound: brackets inside strings
    count too, so only a body with that many unclosed brackets is refused)."""
    if raw.count(b"[") + raw.count(b"{") <= limit:
        return False
    depth = 0
    for byte in raw:
        if byte in (0x5B, 0x7B):
            depth += 1
            if depth > limit:
                return True
        elif byte in (0x5D, 0x7D):
            depth -= 1
    return False


def _has_lone_surrogate(value: Any) -> bool:
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


__all__ = ["MAX_DEPTH", "InvalidJson", "parse_object"]
