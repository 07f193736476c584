"""The contracts of the catalog's public routes: their query models (each parameter's format rule,
in the order they are checked) and the routes' :class:`~svc_api.education.contract.Op`; the reply
models are in :mod:`~svc_api.education.catalog.replies`. Whether a topic exists needs the store and
is checked by the service.

Example:
    >>> from starlette.datastructures import QueryParams
    >>> CatalogQuery.from_query(QueryParams("topic=risk&topic=charts&sort=rating")).topic
    ['charts', 'risk']
    >>> CatalogQuery.from_query(QueryParams("max_price=12.50"))
    Traceback (most recent call last):
    ...
    svc_api.core.errors.Invalid: max_price must be a whole number of minor units (no decimals), got '12.50'
"""

from __future__ import annotations

import re
from typing import Any

from svc_api.core.errors import Invalid
from svc_api.education.catalog import replies
from svc_api.education.catalog import service as catalog
from svc_api.education.contract import Annotated, Answer, Check, Cursor, EduQuery, Limit, NoQuery, Op
from svc_api.education.money import minor_units

_LANGUAGE = re.compile(r"[a-z]{2}")


def _search(value: object, name: str) -> str | None:
    if value is not None and len(str(value)) > 120:
        raise Invalid(f"q must be at most 120 characters, got {len(str(value))}")
    return None if value is None else str(value)


def _topics(value: list[str], name: str) -> list[str]:
    if len(value) > catalog.MAX_TOPICS:
        raise Invalid(f"at most {catalog.MAX_TOPICS} topic parameters, got {len(value)}")
    return sorted({catalog.topic_id(item) for item in value})


def _language(value: object, name: str) -> str | None:
    if value is not None and not _LANGUAGE.fullmatch(str(value)):
        raise Invalid(f"language must be a two-letter ISO 639-1 code such as en, got {value!r}")
    return None if value is None else str(value)


def _one_of(value: object, name: str, allowed: tuple[str, ...]) -> str | None:
    if value is not None and value not in allowed:
        raise Invalid(f"{name} must be one of {', '.join(allowed)}, got {value!r}")
    return None if value is None else str(value)


def _sort(value: object, name: str) -> str:
    return catalog.sort_of(None if value is None else str(value))


def _enum(name: str, allowed: tuple[str, ...], description: str = "") -> Any:
    schema: dict[str, Any] = {"enum": list(allowed)}
    if description:
        schema["description"] = description
    return Annotated[str | None, Check(_one_of, schema, args=(allowed,))]


class CatalogQuery(EduQuery):
    """The catalog's filters, search text, order and page."""

    repeatable = frozenset({"topic"})

    q: Annotated[
        str | None,
        Check(
            _search, {"type": "string", "maxLength": 120, "description": "Free text, at most 120 characters."}
        ),
    ]
    topic: Annotated[
        list[str],
        Check(
            _topics,
            {
                "type": "array",
                "maxItems": catalog.MAX_TOPICS,
                "items": {"type": "string", "pattern": "^[a-z0-9][a-z0-9-]{0,39}$"},
                "description": "A topic id (repeat the parameter for several, at most 5; a product must"
                " have all).",
            },
            absent=[],
        ),
    ]
    language: Annotated[
        str | None,
        Check(
            _language,
            {"type": "string", "pattern": "^[a-z]{2}$", "description": "ISO 639-1 code such as `en`."},
        ),
    ]
    kind: _enum("kind", catalog.KINDS)
    level: _enum("level", catalog.LEVELS)
    duration: _enum(
        "duration",
        tuple(catalog.DURATIONS),
        "Seconds of video: `short` under 2 hours, `medium` 2-10 hours, `long` 10 hours or more.",
    )
    max_price: Annotated[
        int | None,
        Check(
            minor_units,
            {
                "type": "integer",
                "minimum": 0,
                "maximum": 9_999_999_999_999,
                "description": "Highest price in minor units (digits only; `12.50` or `-1` is a 400).",
            },
        ),
    ]
    sort: Annotated[
        str,
        Check(
            _sort,
            {
                "enum": list(catalog.SORTS),
                "description": "Order (default `newest`): newest published, most students, best rated,"
                " cheapest, dearest.",
            },
        ),
    ]
    cursor: Cursor
    limit: Limit


def _topic_search(value: object, name: str) -> str | None:
    if value is not None and not 2 <= len(str(value).strip()) <= 120:
        raise Invalid(f"q must be 2-120 characters, got {len(str(value).strip())}")
    return None if value is None else str(value)


class TopicQuery(EduQuery):
    """A search of the topics by name."""

    q: Annotated[
        str | None,
        Check(
            _topic_search,
            {
                "type": "string",
                "minLength": 2,
                "maxLength": 120,
                "description": "Search text, 2-120 characters once trimmed (omit to list every topic).",
            },
        ),
    ]
    cursor: Cursor
    limit: Limit


class PageQuery(EduQuery):
    """One page of a list."""

    cursor: Cursor
    limit: Limit


_PAGING = "`invalid_cursor` (malformed, tampered, or from another list); `invalid_page_size`."
_REPEATED = Answer(400, f"`invalid_request` (an unknown or repeated parameter); {_PAGING}")
_NONE_TAKEN = Answer(400, "`invalid_request`: a query parameter (this route takes none).")
_TOKEN = Answer(401, shared="EduTokenRejected")
_NO_PRODUCT = Answer(404, "`not_found`: no published or unpublished product has this id (drafts are hidden).")
_PRODUCT = {"product_id": "EduProductId"}
_VIEWER = " With a session token each entry carries `viewer.owned`."

CATALOG = Op(
    "edu_catalog",
    "The catalog of published products, filtered, searched and paged.",
    replies.EduCatalogPage,
    description="Free-text search runs on the store's full-text index (words are matched by prefix). Each"
    " parameter may be given once except `topic` (repeated, at most 5, all must match)." + _VIEWER,
    query=CatalogQuery,
    done="A page of catalog entries.",
    errors=(
        Answer(
            400,
            "`invalid_request`: an unknown query parameter, one other than `topic` given twice, `q` over 120"
            " characters, a sixth `topic`, a malformed or unknown topic id, a `language` that is not two"
            " lower-case letters, a `kind`, `level`, `duration` or `sort` outside its values, a `max_price`"
            f" that is not a whole number; {_PAGING}",
        ),
        _TOKEN,
    ),
)
PRODUCT = Op(
    "edu_product",
    "A product page with rating, student count and, with a token, the viewer's ownership.",
    replies.EduProduct,
    query=NoQuery,
    path=_PRODUCT,
    done="The product.",
    errors=(_NONE_TAKEN, _TOKEN, _NO_PRODUCT),
)
CURRICULUM = Op(
    "edu_product_curriculum",
    "The lesson tree of a product's newest revision; preview lessons playable, others locked.",
    replies.EduCurriculum,
    description="No lesson ever shows its media; for an owner every lesson is unlocked.",
    path=_PRODUCT,
    done="The curriculum preview.",
    errors=(_NONE_TAKEN, _TOKEN, _NO_PRODUCT),
)
TOPICS = Op(
    "edu_topics",
    "Topics whose name contains the search text, by name.",
    replies.EduTopicPage,
    query=TopicQuery,
    done="A page of topics.",
    errors=(
        Answer(
            400,
            "`invalid_request`: `q` shorter than 2 or longer than 120 characters once trimmed, an unknown or"
            f" repeated parameter; {_PAGING}",
        ),
        _TOKEN,
    ),
)
LEADER_PRODUCTS = Op(
    "edu_leader_products",
    "The published products of one instructor, newest first.",
    replies.EduCatalogPage,
    query=PageQuery,
    path={
        "leader_id": {
            "description": "The instructor's `svc_id`.",
            "schema": {"$ref": "#/components/schemas/EduId"},
        }
    },
    done="A page of the instructor's products." + _VIEWER,
    errors=(
        _REPEATED,
        _TOKEN,
        Answer(404, "`not_found`: nobody by this id is a community leader or sells a product."),
    ),
)
REVIEWS = Op(
    "edu_product_reviews",
    "A product's reviews, newest first.",
    replies.EduReviewPage,
    query=PageQuery,
    path=_PRODUCT,
    done="A page of reviews.",
    errors=(_REPEATED, _TOKEN, Answer(404, "`not_found`: no published or unpublished product has this id.")),
)
