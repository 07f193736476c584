"""Public routes of the catalog; a session token, when sent, adds the viewer's state.

Example:
    >>> [r.path for r in ROUTES][:2]
    ['/catalog', '/products/{product_id}']
"""

from __future__ import annotations

from typing import Any

from svc_api.core.errors import Invalid
from svc_api.education.catalog import browse
from svc_api.education.catalog import service as catalog
from svc_api.education.conventions import Req, minor_units, page, page_params, route

_CATALOG_PARAMS = (
    "q",
    "topic",
    "language",
    "kind",
    "level",
    "max_price",
    "duration",
    "sort",
    "cursor",
    "limit",
)


def _known_params(req: Req, allowed: tuple[str, ...]) -> None:
    unknown = sorted(set(req.query.keys()) - set(allowed))
    if unknown:
        raise Invalid(f"unknown query parameter {unknown[0]!r}; this route takes {', '.join(allowed)}")


def _single(req: Req, allowed: tuple[str, ...], repeatable: tuple[str, ...] = ()) -> dict[str, Any]:
    _known_params(req, allowed)
    out: dict[str, Any] = {}
    for name in allowed:
        values = req.query.getlist(name)
        if len(values) > 1 and name not in repeatable:
            raise Invalid(f"{name} may be given once")
        if values and name not in repeatable:
            out[name] = values[0]
    return out


def _paging(req: Req) -> browse.Paging:
    return lambda list_name: page_params(req, list_name)


def catalog_list(req: Req) -> dict[str, Any]:
    query = _single(req, _CATALOG_PARAMS, repeatable=("topic",))
    query["max_price"] = minor_units(query.get("max_price"), "max_price")
    sort = catalog.sort_of(query.get("sort"))
    found = browse.catalog_page(req.store, query, req.query.getlist("topic"), sort, req.viewer, _paging(req))
    return page(req, found.list_name, found.items, found.more, lambda item: catalog.position(item, sort))


def product_detail(req: Req) -> dict[str, Any]:
    _known_params(req, ())
    return browse.product_page(req.store, req.path["product_id"], req.viewer)


def product_curriculum(req: Req) -> dict[str, Any]:
    _known_params(req, ())
    return browse.curriculum_page(req.store, req.path["product_id"], req.viewer)


def topic_list(req: Req) -> dict[str, Any]:
    query = _single(req, ("q", "cursor", "limit"))
    found = browse.topics_page(req.store, query.get("q"), _paging(req))
    return page(
        req,
        found.list_name,
        found.items,
        found.more,
        lambda item: {"n": item["name"].casefold(), "id": item["topic_id"]},
    )


def leader_products(req: Req) -> dict[str, Any]:
    _single(req, ("cursor", "limit"))
    found = browse.leader_page(req.store, req.path["leader_id"], req.viewer, _paging(req))
    return page(req, found.list_name, found.items, found.more, lambda item: catalog.position(item, "newest"))


def product_reviews(req: Req) -> dict[str, Any]:
    _single(req, ("cursor", "limit"))
    found = browse.reviews_page(req.store, req.path["product_id"], _paging(req))
    return page(
        req,
        found.list_name,
        found.items,
        found.more,
        lambda item: {"t": item["updated_at"], "id": item["reviewer_id"]},
    )


ROUTES = [
    route("/catalog", catalog_list, "GET", access="public", inline=True),
    route("/products/{product_id}", product_detail, "GET", access="public", inline=True),
    route("/products/{product_id}/curriculum", product_curriculum, "GET", access="public"),
    route("/topics", topic_list, "GET", access="public"),
    route("/leaders/{leader_id}/products", leader_products, "GET", access="public"),
    route("/products/{product_id}/reviews", product_reviews, "GET", access="public"),
]
