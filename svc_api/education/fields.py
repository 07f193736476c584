"""The check of a text field of an education request: a string of bounded length once trimmed."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from svc_api.core.errors import Invalid


def text_field(body: Mapping[str, Any], name: str, *, lo: int, hi: int, required: bool = True) -> str | None:
    """A string field of ``lo``-``hi`` characters after trimming (400 naming it otherwise).

    Example:
        >>> text_field({"title": "  Intro  "}, "title", lo=1, hi=80)
        'Intro'
    """
    value = body.get(name)
    if value is None:
        if required:
            raise Invalid(f"{name} is required")
        return None
    if not isinstance(value, str):
        raise Invalid(f"{name} must be a string")
    value = value.strip()
    if not lo <= len(value) <= hi:
        raise Invalid(f"{name} must be {lo}-{hi} characters, got {len(value)}")
    return value
