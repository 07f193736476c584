"""Checks of the fields of an education request body: a text of bounded length, no unknown field."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
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


def only_fields(body: Mapping[str, Any], allowed: Sequence[str]) -> None:
    """400 naming the first field the operation does not take (a typo is never silently ignored).

    Example:
        >>> only_fields({"titel": "x"}, ["title"])
        Traceback (most recent call last):
        ...
        svc_api.core.errors.Invalid: unknown field 'titel'; this operation takes title
    """
    unknown = sorted(set(body) - set(allowed))
    if unknown:
        raise Invalid(
            f"unknown field {unknown[0]!r}; this operation takes {', '.join(allowed) or 'no fields'}"
        )
