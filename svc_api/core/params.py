"""Request field types that many operations share: a page size, a cursor, the client platform, an
e-mail address, and the reply shapes of a ``/user`` list page.

Example:
    >>> from svc_api.core.contract import Fields
    >>> class Page(Fields):
    ...     limit: Limit(25, 1, 100)
    ...     cursor: Cursor
    >>> Page.model_validate({"limit": "40"}).limit
    40
"""

from __future__ import annotations

from typing import Annotated, Any

from svc_api.core.contract import Check, Shape
from svc_api.core.cursors import page_size
from svc_api.core.errors import ApiError
from svc_api.core.fields import email_address, text


def Limit(default: int, lo: int, hi: int, *, clamp: bool = False) -> Any:
    """A page size field: ``default`` when absent, ``lo``..``hi`` (above ``hi`` clamped with
    ``clamp``, else 400 ``invalid_page_size``).

    Example:
        >>> Limit(25, 1, 100).__metadata__[0].run(None, "limit")
        25
    """

    def rule(value: object, name: str) -> int:
        return page_size(value, default, lo, hi, clamp=clamp, name=name)

    more = " (larger is clamped)" if clamp else ""
    schema = {
        "type": "integer",
        "minimum": lo,
        "maximum": hi,
        "default": default,
        "description": f"Page size, {lo}-{hi}{more}.",
    }
    return Annotated[int, Check(rule, schema)]


def _cursor(value: object, name: str) -> str | None:
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise ApiError(400, "invalid_cursor", extra={"message": f"{name} must be a string"})
    return value


Cursor = Annotated[
    str | None,
    Check(_cursor, {"type": ["string", "null"], "description": "The cursor of the previous page, as sent."}),
]
"""An opaque page cursor (its position is decoded and checked by :meth:`Call.cursor`)."""


def _platform(value: object, name: str) -> str:
    return text(value, name, hi=32) or "api"


Platform = Annotated[
    str,
    Check(
        _platform,
        {"type": "string", "minLength": 1, "maxLength": 32, "default": "api", "description": "The client."},
        absent="api",
    ),
]
"""The client ``platform`` of a login or registration (default ``api``, 1-32 characters)."""

Email = Annotated[
    str,
    Check(email_address, {"type": "string", "format": "email", "maxLength": 320}, required=True),
]
"""An e-mail address, trimmed and lower-cased."""


def _as_sent(value: object, name: str) -> Any:
    return value


def AsSent(schema: dict[str, Any], *, required: bool = False) -> Any:
    """A field the service itself checks, in its own order (after a look-up that answers first):
    the model documents it and passes the value through as sent.

    Example:
        >>> AsSent({"type": "string"}).__metadata__[0].run(5, "code")
        5
    """
    return Annotated[Any, Check(_as_sent, schema, required=required)]


class UserPage(Shape):
    """A page of a ``/user`` list: the items (named by the list), then these."""

    count: int
    """How many items this page holds."""
    last_evaluated_key: str | None
    """The cursor of the next page; null on the last page."""
    has_more: bool
    """Whether a next page exists."""
