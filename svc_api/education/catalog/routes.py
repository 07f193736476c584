"""Public routes of the catalog; a session token, when sent, adds the viewer's state.

Example:
    >>> [r.path for r in ROUTES][:2]
    ['/catalog', '/products/{product_id}']
"""

from __future__ import annotations

from typing import Any

from svc_api.education.catalog import browse
from svc_api.education.catalog import contract as op
from svc_api.education.catalog import service as catalog
from svc_api.education.conventions import Req, page, page_params, route


def _paging(req: Req) -> browse.Paging:
    return lambda list_name: page_params(req, list_name)


def catalog_list(req: Req) -> dict[str, Any]:
    query = req.params
    found = browse.catalog_page(req.store, query, req.viewer, _paging(req))
    return page(
        req, found.list_name, found.items, found.more, lambda item: catalog.position(item, query.sort)
    )


def product_detail(req: Req) -> dict[str, Any]:
    return browse.product_page(req.store, req.path["product_id"], req.viewer)


def product_curriculum(req: Req) -> dict[str, Any]:
    return browse.curriculum_page(req.store, req.path["product_id"], req.viewer)


def topic_list(req: Req) -> dict[str, Any]:
    found = browse.topics_page(req.store, req.params.q, _paging(req))
    return page(
        req,
        found.list_name,
        found.items,
        found.more,
        lambda item: {"n": item["name"].casefold(), "id": item["topic_id"]},
    )


def leader_products(req: Req) -> dict[str, Any]:
    found = browse.leader_page(req.store, req.path["leader_id"], req.viewer, _paging(req))
    return page(req, found.list_name, found.items, found.more, lambda item: catalog.position(item, "newest"))


def product_reviews(req: Req) -> dict[str, Any]:
    found = browse.reviews_page(req.store, req.path["product_id"], _paging(req))
    return page(
        req,
        found.list_name,
        found.items,
        found.more,
        lambda item: {"t": item["updated_at"], "id": item["reviewer_id"]},
    )


ROUTES = [
    route("/catalog", catalog_list, "GET", access="public", inline=True, op=op.CATALOG),
    route("/products/{product_id}", product_detail, "GET", access="public", inline=True, op=op.PRODUCT),
    route("/products/{product_id}/curriculum", product_curriculum, "GET", access="public", op=op.CURRICULUM),
    route("/topics", topic_list, "GET", access="public", op=op.TOPICS),
    route("/leaders/{leader_id}/products", leader_products, "GET", access="public", op=op.LEADER_PRODUCTS),
    route("/products/{product_id}/reviews", product_reviews, "GET", access="public", op=op.REVIEWS),
]
