"""The text fields of education requests: a string of bounded length once trimmed."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any

from svc_api.core.contract import Check
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


def Text(lo: int, hi: int, *, required: bool = True) -> Any:
    """A body field holding a text of ``lo``-``hi`` characters once trimmed (:func:`text_field`'s
    400s), with the schema that says so.

    Example:
        >>> Text(3, 160).__metadata__[0].run("  Intro  ", "title")
        'Intro'
    """

    def rule(value: object, name: str) -> str | None:
        return text_field({name: value}, name, lo=lo, hi=hi, required=required)

    schema = {
        "type": "string",
        "minLength": lo,
        "maxLength": hi,
        "description": f"{lo}-{hi} characters once trimmed.",
    }
    return Annotated[str, Check(rule, schema, required=required)]
