"""The request models of the studio's routes: each body field's format rule, in the order the
services checked them. Rules that need the store or the settings stay in the services: the
instructor role, ownership, ``If-Match``, known topics, the catalog's currency, a lesson's upload,
the rules of the lesson tree (they read the media its uploads give it).

A field a request did not send is None in the model (an explicit ``null`` is a broken rule), so a
PATCH changes exactly the fields it sent.

Example:
    >>> EduBundleCreate.parse({"title": " Both ", "price": {"amount_minor": 5000, "currency": "USD"},
    ...                        "product_ids": ["pr_b", "pr_a", "pr_b"]}).product_ids
    ['pr_a', 'pr_b']
    >>> EduStudioProductPatch.parse({})
    Traceback (most recent call last):
    ...
    svc_api.core.errors.Invalid: send at least one field to change
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from svc_api.core.contract import ABSENT, Fields
from svc_api.core.errors import Invalid
from svc_api.education.catalog import service as catalog
from svc_api.education.contract import Annotated, Check, EduBody
from svc_api.education.fields import Text
from svc_api.education.money import parse_money
from svc_api.education.studio import profile as payout_profile
from svc_api.education.studio import schemas

MAX_BUNDLE_PRODUCTS = 20


class StudioBody(EduBody):
    """A studio body: an unknown field is a 400 with the studio's own wording (``unknown``, formatted
    with the field and the fields taken), then the ``required`` fields, then each field's rule."""

    required: ClassVar[tuple[str, ...]] = ()
    """Fields whose absence is a 400 before any rule runs (the first missing one named)."""
    schema_required: ClassVar[tuple[str, ...]] = ()
    """What the description marks required, when the rules themselves refuse an absent field."""

    @classmethod
    def prepare(cls, data: Mapping[str, Any]) -> Any:
        cls.refuse_unknown(data)
        missing = [name for name in cls.required if name not in data]
        if missing:
            raise Invalid(f"{missing[0]} is required")
        if cls.needed and not data:  # a change of at least one field
            raise Invalid("send at least one field to change")
        return Fields.prepare.__func__(cls, data)  # type: ignore[attr-defined]

    @classmethod
    def required_names(cls) -> list[str]:
        return list(cls.schema_required or cls.required)


def _given(rule: Any) -> Any:
    """``rule`` for a sent value; None for an absent one (the field keeps its value or default)."""

    def check(value: object, name: str, *args: Any) -> Any:
        return None if value is ABSENT else rule(value, name, *args)

    return check


def _choice(value: object, name: str, allowed: tuple[str, ...]) -> str:
    if value not in allowed:
        raise Invalid(f"{name} must be one of {', '.join(allowed)}")
    return str(value)


def _text(value: object, name: str, lo: int, hi: int) -> str:
    if not isinstance(value, str) or not lo <= len(value.strip()) <= hi:
        raise Invalid(f"{name} must be a string of {lo}-{hi} characters")
    return value.strip()


def _language(value: object, name: str) -> str:
    if not isinstance(value, str) or len(value) != 2 or not value.islower():
        raise Invalid("language must be a two-letter ISO 639-1 code such as en")
    return value


def _topics(value: object, name: str) -> list[str]:
    if not isinstance(value, list) or len(value) > catalog.MAX_TOPICS:
        raise Invalid(f"topics must be a list of at most {catalog.MAX_TOPICS} topic ids")
    return sorted({catalog.topic_id(item, "topics") for item in value})


def _flag(value: object, name: str) -> bool:
    if not isinstance(value, bool):
        raise Invalid(f"{name} must be true or false")
    return value


def _price(value: object, name: str) -> tuple[int, str]:
    return parse_money(value, name)


def _choice_field(allowed: tuple[str, ...], **schema: Any) -> Any:
    return Annotated[
        str | None, Check(_given(_choice), {"enum": list(allowed), **schema}, args=(allowed,), absent=ABSENT)
    ]


def _text_field(lo: int, hi: int) -> Any:
    limits = {"minLength": lo} if lo else {}
    schema = {
        "type": "string",
        **limits,
        "maxLength": hi,
        "description": f"{lo}-{hi} characters once trimmed.",
    }
    return Annotated[str | None, Check(_given(_text), schema, args=(lo, hi), absent=ABSENT)]


Level = _choice_field(catalog.LEVELS)
Subtitle = _text_field(0, 240)
Description = _text_field(0, 5000)
Title = Annotated[str | None, Check(_given(_text), schemas.TITLE, args=(3, 160), absent=ABSENT)]
Price = Annotated[tuple[int, str] | None, Check(_given(_price), schemas.PRICE_IN, absent=ABSENT)]
"""``(amount_minor, currency)``; that the currency is the catalog's is the service's check."""
Language = Annotated[
    str | None,
    Check(
        _given(_language),
        {"type": "string", "pattern": "^[a-z]{2}$", "description": "ISO 639-1."},
        absent=ABSENT,
    ),
]
Topics = Annotated[
    list[str] | None,
    Check(
        _given(_topics),
        {
            "type": "array",
            "maxItems": catalog.MAX_TOPICS,
            "items": {"type": "string", "pattern": "^[a-z0-9][a-z0-9-]{0,39}$"},
            "description": "Ids of known topics (400 an unknown one); duplicates count once.",
        },
        absent=ABSENT,
    ),
]
Flag = Annotated[bool | None, Check(_given(_flag), {"type": "boolean"}, absent=ABSENT)]


class EduStudioProductPatch(StudioBody):
    """The fields to change (at least one; `kind` is fixed at creation)."""

    unknown = "unknown field {field!r}; a product takes {takes}"
    needed = True

    title: Title
    subtitle: Subtitle
    description: Description
    language: Language
    level: Level
    price: Price
    topics: Topics
    refundable: Flag

    def changes(self) -> dict[str, Any]:
        """The sent fields as the draft stores them (the price as ``price_minor`` and ``currency``).

        Example:
            >>> EduStudioProductPatch.parse({"subtitle": " s ", "level": "advanced"}).changes()
            {'subtitle': 's', 'level': 'advanced'}
        """
        return draft_fields(self)


class EduStudioProductCreate(StudioBody):
    """A new draft; `subtitle` and `description` default to empty, `topics` to none, `refundable` to
    true."""

    unknown = "unknown field {field!r}; a product takes {takes}"
    required = ("kind", "title", "language", "level", "price")

    kind: Annotated[
        str | None,
        Check(_given(_choice), {"enum": list(catalog.KINDS)}, args=(catalog.KINDS,), absent=ABSENT),
    ]
    title: Title
    subtitle: Subtitle
    description: Description
    language: Language
    level: Level
    price: Price
    topics: Topics
    refundable: Flag

    def changes(self) -> dict[str, Any]:
        """The sent fields as the draft stores them."""
        return draft_fields(self)


def draft_fields(model: Fields) -> dict[str, Any]:
    """A product body's sent fields as the draft stores them (the price as ``price_minor`` and
    ``currency``).

    Example:
        >>> draft_fields(EduStudioProductPatch.parse({"price": {"amount_minor": 5, "currency": "USD"}}))
        {'price_minor': 5, 'currency': 'USD'}
    """
    out = {name: value for name, value in model if value is not None and name != "price"}
    price = getattr(model, "price", None)
    if price is not None:
        out["price_minor"], out["currency"] = price
    return out


class EduStudioCurriculumRequest(StudioBody):
    """The whole lesson tree; its rules (shape, kinds, unique ids, bounds) are checked once the media
    of its lessons' uploads is known (the service)."""

    schema_required = ("sections",)

    sections: Annotated[
        Any,
        Check(
            lambda value, name: value,
            {
                "type": "array",
                "minItems": 1,
                "maxItems": 50,
                "items": {
                    "type": "object",
                    "additionalProperties": False,
                    "required": ["section_id", "title", "lessons"],
                    "properties": {
                        "section_id": {"type": "string", "pattern": "^[A-Za-z0-9_-]{1,40}$"},
                        "title": {"type": "string", "minLength": 1, "maxLength": 160},
                        "lessons": {
                            "type": "array",
                            "minItems": 1,
                            "maxItems": 500,
                            "items": schemas.LESSON_IN,
                        },
                    },
                },
                "description": "At most 500 lessons in all.",
            },
            absent=ABSENT,
        ),
    ]

    def tree(self) -> dict[str, Any]:
        """The tree as sent (``{}`` without ``sections``: the tree's rules say what is missing).

        Example:
            >>> EduStudioCurriculumRequest.parse({}).tree()
            {}
        """
        return {} if self.sections is ABSENT else {"sections": self.sections}


def _accepted(value: object, name: str) -> bool:
    if value is not True:
        raise Invalid("accept_contract must be true: the contract is what makes you a seller")
    return True


def _profile(value: object, name: str) -> dict[str, Any]:
    return payout_profile.check(value or {})  # type: ignore[arg-type]  # a non-object is its 400


class EduOnboardingSubmit(StudioBody):
    """The hosted onboarding page's submission."""

    schema_required = ("accept_contract", "payout_profile")

    accept_contract: Annotated[
        bool, Check(_accepted, {"type": "boolean", "description": "Must be `true` (400 otherwise)."})
    ]
    payout_profile: Annotated[dict[str, Any], Check(_profile, schemas.PAYOUT_PROFILE)]
    """The normalised payout profile (every field, None where it does not apply)."""


def _product_ids(value: object, name: str) -> list[str]:
    if (
        not isinstance(value, list)
        or not all(isinstance(item, str) for item in value)
        or not 2 <= len(set(value)) <= MAX_BUNDLE_PRODUCTS
    ):
        raise Invalid(f"product_ids must list 2-{MAX_BUNDLE_PRODUCTS} product ids")
    return sorted(set(value))


def _bundle_state(value: object, name: str) -> str:
    if value not in ("published", "unpublished"):
        raise Invalid("state must be published or unpublished")
    return str(value)


ProductIds = Annotated[
    list[str] | None,
    Check(
        _given(_product_ids),
        {
            "type": "array",
            "minItems": 2,
            "maxItems": MAX_BUNDLE_PRODUCTS,
            "uniqueItems": True,
            "items": {"type": "string"},
            "description": f"2-{MAX_BUNDLE_PRODUCTS} distinct ids of the caller's own published products.",
        },
        absent=ABSENT,
    ),
]


class EduBundleCreate(StudioBody):
    """A bundle of the instructor's own published products."""

    unknown = "unknown field {field!r}"
    required = ("title", "price", "product_ids")

    title: Title
    price: Price
    product_ids: ProductIds


class EduBundlePatch(StudioBody):
    """The fields of a bundle to change (at least one)."""

    unknown = "unknown field {field!r}"
    needed = True

    title: Title
    price: Price
    product_ids: ProductIds
    state: Annotated[
        str | None,
        Check(
            _given(_bundle_state),
            {"enum": ["published", "unpublished"], "description": "`unpublished` closes the bundle's sales."},
            absent=ABSENT,
        ),
    ]

    def changes(self) -> dict[str, Any]:
        """The sent fields.

        Example:
            >>> EduBundlePatch.parse({"state": "unpublished"}).changes()
            {'state': 'unpublished'}
        """
        return {name: value for name, value in self if value is not None}


class EduAnswerRequest(StudioBody):
    """An instructor's answer to a learner's question."""

    schema_required = ("body",)

    body: Text(1, 4000)
