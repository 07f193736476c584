"""One contract per ``/education/v1`` route: its query, body and reply models and its documented
answers, declared beside the route (:func:`svc_api.education.conventions.route` takes an :class:`Op`).

The endpoint validates the query with :class:`EduQuery` (an undeclared parameter, or one given twice
that is not repeatable, is a 400) and the body with :class:`EduBody` (an undeclared field is a 400)
before the handler runs; the handler reads ``req.params`` and ``req.fields``. Rules that need the
store (an unknown topic, a product that is not on sale) stay in the services. The API description's
path item of the route is built from the same :class:`Op` (:mod:`svc_api.apidoc.education`).

Example:
    >>> class Search(EduQuery):
    ...     q: Annotated[str | None, Check(lambda v, n: v, {"type": "string"})]
    >>> Search.from_query(QueryParams("q=rsi")).q
    'rsi'
    >>> Search.from_query(QueryParams("q=a&q=b"))
    Traceback (most recent call last):
    ...
    svc_api.core.errors.Invalid: q may be given once
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, ClassVar

from pydantic import ConfigDict, Field
from starlette.datastructures import QueryParams

from svc_api.core.contract import Answer, Check, Fields, Op, Shape
from svc_api.core.cursors import page_size
from svc_api.core.errors import Invalid
from svc_api.core.params import AsSent

JsonDict = dict[str, Any]

__all__ = [
    "Annotated",
    "Answer",
    "Check",
    "Cursor",
    "EduBody",
    "EduQuery",
    "Limit",
    "Money",
    "NoBody",
    "NoQuery",
    "Op",
    "Page",
    "Shape",
    "SignedQuery",
    "Timestamp",
    "if_match",
    "signed",
]

DEFAULT_LIMIT = 20
MAX_LIMIT = 100


class EduQuery(Fields):
    """A route's query parameters: each declared one once (a list for those in ``repeatable``);
    any other parameter is a 400 naming it."""

    repeatable: ClassVar[frozenset[str]] = frozenset()
    """Parameters that may be repeated (``topic=a&topic=b``); the rule receives the list."""

    @classmethod
    def from_query(cls, query: QueryParams) -> Any:
        """The model of ``query`` (400 for an unknown or a repeated parameter, then the rules).

        Example:
            >>> NoQuery.from_query(QueryParams("x=1"))
            Traceback (most recent call last):
            ...
            svc_api.core.errors.Invalid: unknown query parameter 'x'; this route takes no parameters
        """
        if not query:  # most reads send none; the model is frozen, so one instance serves them all
            empty = _NO_PARAMETERS.get(cls)
            if empty is None:
                empty = _NO_PARAMETERS[cls] = cls.parse({name: [] for name in cls.repeatable})
            return empty
        allowed = tuple(cls.__pydantic_fields__)
        unknown = sorted(set(query.keys()) - set(allowed))
        if unknown:
            takes = ", ".join(allowed) or "no parameters"
            raise Invalid(f"unknown query parameter {unknown[0]!r}; this route takes {takes}")
        values: dict[str, Any] = {}
        for name in allowed:
            given = query.getlist(name)
            if name in cls.repeatable:
                values[name] = given
            elif len(given) > 1:
                raise Invalid(f"{name} may be given once")
            elif given:
                values[name] = given[0]
        return cls.parse(values)


_NO_PARAMETERS: dict[type[EduQuery], Any] = {}
"""Each query model's instance for a request without parameters (see :meth:`EduQuery.from_query`)."""


class NoQuery(EduQuery):
    """A route that takes no query parameters."""


class SignedQuery(EduQuery):
    """The query of a signed, expiring URL (a media object, an upload part). Its route reads it with
    :func:`signed` itself: a missing or broken value is the 403 of a tampered URL, never a 400."""

    expires: AsSent({"type": "integer", "description": "Unix seconds."}, required=True)
    signature: AsSent(
        {"type": "string", "pattern": "^[0-9a-f]{64}$", "description": "HMAC-SHA256 (hex)."}, required=True
    )


def signed(query: QueryParams) -> tuple[int, str]:
    """The ``expires`` and ``signature`` of a signed URL's query, as its check takes them (``-1`` and
    ``""`` for what is missing or not a number, which no signature matches).

    Example:
        >>> signed(QueryParams("expires=10&signature=ab")), signed(QueryParams("expires=x"))
        ((10, 'ab'), (-1, ''))
    """
    try:
        expires = int(query.get("expires", ""))
    except ValueError:
        expires = -1
    return expires, query.get("signature", "")


class EduBody(Fields):
    """A route's JSON body: a field the route does not take is a 400 naming it (a typo is never
    silently ignored), then each declared field's rule in order. Its schema says so
    (``additionalProperties: false``)."""

    model_config = ConfigDict(json_schema_extra={"additionalProperties": False})
    unknown: ClassVar[str] = "unknown field {field!r}; this operation takes {takes}"
    """The 400 of a field the route does not take (formatted with the field and the fields taken)."""
    needed: ClassVar[bool] = False
    """The body must be sent though no one field is required (a change of at least one field)."""

    @classmethod
    def refuse_unknown(cls, data: Mapping[str, Any]) -> None:
        """400 for the first field (by name) the route does not take.

        Example:
            >>> NoBody.refuse_unknown({"x": 1})
            Traceback (most recent call last):
            ...
            svc_api.core.errors.Invalid: unknown field 'x'; this operation takes no fields
        """
        allowed = tuple(cls.__pydantic_fields__)
        unknown = sorted(set(data) - set(allowed))
        if unknown:
            raise Invalid(cls.unknown.format(field=unknown[0], takes=", ".join(allowed) or "no fields"))

    @classmethod
    def prepare(cls, data: Mapping[str, Any]) -> Any:
        cls.refuse_unknown(data)
        return super().prepare(data)

    @classmethod
    def __get_pydantic_json_schema__(cls, schema: Any, handler: Any) -> JsonDict:
        out = super().__get_pydantic_json_schema__(schema, handler)
        if cls.needed:
            out["minProperties"] = 1
        return out


class NoBody(EduBody):
    """A change that takes no body fields (an empty object or no body)."""


def _limit(value: object, name: str) -> int:
    return page_size(value, DEFAULT_LIMIT, 1, MAX_LIMIT)


def _cursor(value: object, name: str) -> str | None:
    return None if value is None else str(value)


Limit = Annotated[
    int,
    Check(
        _limit,
        {
            "type": "integer",
            "minimum": 1,
            "maximum": MAX_LIMIT,
            "default": DEFAULT_LIMIT,
            "description": "Page size, 1-100 (default 20); outside that or not an integer, 400"
            " `invalid_page_size`.",
        },
    ),
]
"""The page size of a list route, 1-100 (default 20; 400 ``invalid_page_size`` otherwise)."""

Cursor = Annotated[
    str | None,
    Check(
        _cursor,
        {
            "type": "string",
            "description": "Opaque cursor of the next page (`next_cursor` of the previous reply; omit for the"
            " first). A malformed or tampered cursor, or one of another list or filter set, is a 400"
            " `invalid_cursor`.",
        },
    ),
]
"""The opaque cursor of the next page, as sent (decoded and bound to its list by the page reader)."""


class Money(Shape):
    """An amount in the currency's smallest unit (cents); decimals are never sent or read."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    amount_minor: Annotated[int, Field(ge=0)]
    currency: Annotated[str, Field(pattern="^[A-Z]{3}$")]
    """ISO 4217 code."""


Timestamp = Annotated[int, Field(description="Unix seconds.")]
"""A time on the wire: Unix seconds."""


class Page(Shape):
    """A page of a list: ``items`` and ``next_cursor`` (null on the last page). A list's page model
    subclasses it and declares the type of its items."""

    items: list[Any]
    next_cursor: str | None
    """Null on the last page."""


def if_match(description: str) -> JsonDict:
    """The ``If-Match`` request header of a change under a version (412 stale, 428 missing), for
    :attr:`Op.parameters`.

    Example:
        >>> if_match("The draft's `ETag`, or `*`.")["required"]
        True
    """
    return {
        "name": "If-Match",
        "in": "header",
        "required": True,
        "description": description,
        "schema": {"type": "string"},
    }
