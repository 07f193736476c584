"""One contract per operation: typed request and reply models, declared beside the route.

A request model (:class:`Fields`) lists an operation's fields in the order the service checks them;
each field carries the rule that checks it (:class:`Check`: one of the core's field validators or a
domain's own) and the JSON Schema the API description shows for it. The dispatcher validates the
request with the model before the handler runs, so a handler receives clean, typed values. A rule
raises the service's own :class:`~svc_api.core.errors.Invalid` (or any ``ServiceError``), which
pydantic passes through untouched: the first broken field answers with the same 400 body as the
hand checks the models replaced.

A reply model (:class:`Shape`) describes what a handler returns; handlers still return plain dicts
(encoded as before), and the models feed the API description and the typed client. ``ErrorDoc``
documents an operation's own errors.

Example:
    >>> from svc_api.core.fields import text
    >>> class Greet(Fields):
    ...     name: Annotated[str, Check(text, {"type": "string"}, required=True, kwargs={"hi": 8})]
    >>> Greet.model_validate({"name": "Ana", "other": 1}).name
    'Ana'
    >>> Greet.model_validate({})
    Traceback (most recent call last):
    ...
    svc_api.core.errors.Invalid: name must be a string of 1-8 characters
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, GetCoreSchemaHandler, GetJsonSchemaHandler, model_validator
from pydantic_core import CoreSchema, core_schema
from starlette.routing import Route

JsonDict = dict[str, Any]

__all__ = [
    "ABSENT",
    "Annotated",
    "Answer",
    "Check",
    "ErrorDoc",
    "Fields",
    "NoFields",
    "Op",
    "Sent",
    "Shape",
    "described",
]


class _Absent:
    """The value of a field the request did not send (distinct from an explicit ``null``)."""

    def __repr__(self) -> str:
        return "ABSENT"


ABSENT: Any = _Absent()


@dataclass(frozen=True)
class Check:
    """The rule of one request field and the schema the description shows for it.

    ``rule(value, name, *args, **kwargs)`` returns the clean value or raises; an absent field reaches
    it as ``absent`` (None unless said otherwise, as ``params.get(name)`` gave the hand checks), so a
    rule's own "is required" message stays the one clients see. ``name`` is the field's name in
    messages when it differs from the attribute; ``required`` marks it required in the schema.

    Example:
        >>> from svc_api.core.fields import page_number
        >>> check = Check(lambda value, name: page_number(value), {"type": "integer", "minimum": 0})
        >>> check.run("3", "page")
        3
    """

    rule: Callable[..., Any]
    schema: Mapping[str, Any]
    required: bool = False
    name: str | None = None
    absent: Any = None
    args: tuple[Any, ...] = ()
    kwargs: Mapping[str, Any] = field(default_factory=dict)

    def run(self, value: Any, name: str) -> Any:
        """The rule applied to ``value`` (an absent value replaced by :attr:`absent`)."""
        if value is ABSENT:
            value = self.absent
        return self.rule(value, self.name or name, *self.args, **self.kwargs)

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> CoreSchema:
        # Bound once per field: a request pays one call of its own per field, not the dataclass
        # look-ups of run().
        rule, args, kwargs, absent, label = self.rule, self.args, dict(self.kwargs), self.absent, self.name

        def validate(value: Any, info: core_schema.ValidationInfo) -> Any:
            if value is ABSENT:
                value = absent
            return rule(value, label or info.field_name, *args, **kwargs)

        return core_schema.with_info_plain_validator_function(validate)

    def __get_pydantic_json_schema__(self, schema: CoreSchema, handler: GetJsonSchemaHandler) -> JsonDict:
        return dict(self.schema)


class Fields(BaseModel):
    """The request model of an operation: unknown fields are ignored (as the hand checks ignored
    them), every declared field is checked by its rule, present or not.

    Example:
        >>> NoFields.model_validate({"anything": 1})
        NoFields()
    """

    model_config = ConfigDict(extra="ignore", frozen=True, use_attribute_docstrings=True)

    @model_validator(mode="before")
    @classmethod
    def _mark_absent(cls, data: Any) -> Any:
        return cls.prepare(data) if isinstance(data, Mapping) else data

    @classmethod
    def prepare(cls, data: Mapping[str, Any]) -> Any:
        """The request's fields as the rules see them: each declared field, :data:`ABSENT` when
        not sent. A model whose rule looks at the request as a whole overrides this.

        Example:
            >>> NoFields.prepare({"x": 1})
            {}
        """
        return {name: data.get(name, ABSENT) for name in cls.__pydantic_fields__}

    @classmethod
    def __get_pydantic_json_schema__(cls, schema: CoreSchema, handler: GetJsonSchemaHandler) -> JsonDict:
        # Every field has a rule that sees absent values, so pydantic calls them all required; the
        # description says what the rules require.
        out = handler.resolve_ref_schema(handler(schema))
        out.pop("required", None)
        if required := cls.required_names():
            out["required"] = required
        return out

    @classmethod
    def parse(cls, data: Mapping[str, Any]) -> Fields:
        """The request validated (what the dispatcher calls). A model without fields is one frozen
        instance made once: ``account_info`` and the other field-less reads pay nothing for it.

        Example:
            >>> NoFields.parse({"x": 1}) is NoFields.parse({})
            True
        """
        empty = _EMPTY.get(cls)
        if empty is not None:
            return empty
        if cls.__pydantic_fields__ or cls.prepare.__func__ is not Fields.prepare.__func__:  # type: ignore[attr-defined]
            return cls.model_validate(data)
        return _EMPTY.setdefault(cls, cls.model_validate({}))

    @classmethod
    def required_names(cls) -> list[str]:
        """The fields the schema marks required.

        Example:
            >>> NoFields.required_names()
            []
        """
        return [name for name, info in cls.model_fields.items() if any(_required(m) for m in info.metadata)]


_EMPTY: dict[type[Fields], Fields] = {}
"""The one instance of each model without fields (see :meth:`Fields.parse`)."""


def _required(marker: Any) -> bool:
    return isinstance(marker, Check) and marker.required


class NoFields(Fields):
    """An operation that takes no fields."""


class Shape(BaseModel):
    """A reply model: the documented fields of what a handler returns (more may be added later, so
    clients keep unknown ones).

    Example:
        >>> class Pong(Shape):
        ...     pong: bool
        ...     '''Always true.'''
        >>> Pong.model_validate({"pong": True, "new": 1}).pong
        True
    """

    model_config = ConfigDict(extra="allow", use_attribute_docstrings=True)


@dataclass(frozen=True)
class Sent:
    """A field's value with the whole request, for a rule that reads other fields: a model's
    :meth:`Fields.prepare` hands it over, and the rule runs at its own place in the model's order
    (the fields it reads were checked before it).

    Example:
        >>> Sent(1, {"a": 1}).request["a"]
        1
    """

    value: Any
    request: Mapping[str, Any]


@dataclass(frozen=True)
class ErrorDoc:
    """One documented error of an operation: the status, the ``error`` name, when it happens and the
    ``code`` it carries, if any.

    Example:
        >>> ErrorDoc(404, "not_found", "no such strategy").status
        404
    """

    status: int
    error: str
    when: str
    code: str | None = None


@dataclass(frozen=True)
class Answer:
    """One documented answer of a REST route other than its success: ``text`` says when it happens
    (markdown, naming the ``code``), or ``shared`` names a response of ``components/responses``;
    ``reply`` is the body's model of a second success (a webhook's 202), else the error envelope.

    Example:
        >>> Answer(404, "`not_found`: no such product.").status
        404
    """

    status: int
    text: str = ""
    shared: str | None = None
    reply: type[Shape] | None = None


@dataclass(frozen=True)
class Op:
    """The contract of one REST route (the platform's and the education marketplace's): the API
    description's path item is built from it (:mod:`svc_api.apidoc.rest`).

    ``reply`` is the success body's model (None: no JSON body, see ``content``); ``query`` and
    ``body`` the request models the route's endpoint validates; ``path`` names each path
    parameter's declaration, a ``components/parameters`` name or a parameter object without its
    name; ``parameters`` are more parameter objects (a signature header); ``request`` the request
    body object of a route that reads its own body (a signed webhook); ``headers`` the reply's own
    headers (``components/headers`` names) besides the standard ones; ``content`` replaces the
    success content for a route that is not JSON.

    Example:
        >>> Op("edu_topics", "Topics by name.", None).status
        200
    """

    operation_id: str
    summary: str
    reply: type[Shape] | None
    description: str = ""
    query: type[Fields] | None = None
    body: type[Fields] | None = None
    path: Mapping[str, str | JsonDict] = field(default_factory=dict)
    status: int = 200
    done: str = "The reply."
    """The success response's description."""
    headers: tuple[str, ...] = ()
    errors: tuple[Answer, ...] = ()
    content: JsonDict | None = None
    security: tuple[JsonDict, ...] | None = None
    """Who may call, when the route's access does not say it (a signed link, a provider's callback)."""
    tag: str = "education"
    parameters: tuple[JsonDict, ...] = ()
    request: JsonDict | None = None


def described(path: str, endpoint: Callable[..., Any], method: str, op: Op) -> Route:
    """A Starlette route whose endpoint carries its contract ``op`` for the API description.

    Example:
        >>> async def ping(request): ...
        >>> described("/ping", ping, "GET", Op("ping", "Ping.", None, tag="platform")).endpoint.op.tag
        'platform'
    """
    endpoint.op = op  # type: ignore[attr-defined]
    return Route(path, endpoint, methods=[method])
