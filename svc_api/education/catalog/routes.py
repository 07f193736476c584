"""Public routes of the catalog; a session token, when sent, adds the viewer's state.

Example:
    >>> [r.path for r in ROUTES][:2]
    ['/catalog', '/products/{product_id}']
"""

from __future__ import annotations

from typing import Any

from svc_api.core.errors import Invalid
from svc_api.education.catalog import curriculum
from svc_api.education.catalog import service as catalog
from svc_api.education.commerce import service as commerce
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


def _with_viewer(req: Req, conn: Any, items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    viewer = req.viewer
    if viewer is None:
        return items
    owned = commerce.owned(conn, viewer, [item["product_id"] for item in items])
    return [item | {"viewer": {"owned": item["product_id"] in owned}} for item in items]


def catalog_list(req: Req) -> dict[str, Any]:
    query = _single(req, _CATALOG_PARAMS, repeatable=("topic",))
    query["max_price"] = minor_units(query.get("max_price"), "max_price")
    sort = catalog.sort_of(query.get("sort"))
    with req.store.read() as conn:
        filters = catalog.catalog_filters(conn, query, req.query.getlist("topic"))
        list_name = catalog.filter_fingerprint(filters, sort)
        after, limit = page_params(req, list_name)
        items, more = catalog.catalog(conn, filters, sort, after, limit)
        items = _with_viewer(req, conn, items)
    return page(req, list_name, items, more, lambda item: catalog.position(item, sort))


def product_detail(req: Req) -> dict[str, Any]:
    _known_params(req, ())
    with req.store.read() as conn:
        item = catalog.detail(conn, req.path["product_id"])
        return _with_viewer(req, conn, [item])[0]


def product_curriculum(req: Req) -> dict[str, Any]:
    _known_params(req, ())
    product_id = req.path["product_id"]
    with req.store.read() as conn:
        row = catalog.published(conn, product_id)
        owned = req.viewer is not None and product_id in commerce.owned(conn, req.viewer, [product_id])
        tree = catalog.tree(conn, product_id, int(row.revision))
    return {"product_id": product_id, "revision": int(row.revision), **curriculum.preview(tree, owned=owned)}


def topic_list(req: Req) -> dict[str, Any]:
    query = _single(req, ("q", "cursor", "limit"))
    after, limit = page_params(req, "topics:" + query.get("q", "").strip().casefold())
    with req.store.read() as conn:
        items, more = catalog.topic_page(conn, query.get("q"), after, limit)
    list_name = "topics:" + query.get("q", "").strip().casefold()
    return page(
        req, list_name, items, more, lambda item: {"n": item["name"].casefold(), "id": item["topic_id"]}
    )


def leader_products(req: Req) -> dict[str, Any]:
    _single(req, ("cursor", "limit"))
    leader_id = req.path["leader_id"]
    list_name = f"leader:{leader_id}"
    after, limit = page_params(req, list_name)
    with req.store.read() as conn:
        items, more = catalog.leader_products(conn, leader_id, after, limit)
        items = _with_viewer(req, conn, items)
    return page(req, list_name, items, more, lambda item: catalog.position(item, "newest"))


def product_reviews(req: Req) -> dict[str, Any]:
    _single(req, ("cursor", "limit"))
    product_id = req.path["product_id"]
    list_name = f"reviews:{product_id}"
    after, limit = page_params(req, list_name)
    with req.store.read() as conn:
        items, more = catalog.reviews(conn, product_id, after, limit)
    return page(
        req, list_name, items, more, lambda item: {"t": item["updated_at"], "id": item["reviewer_id"]}
    )


ROUTES = [
    route("/catalog", catalog_list, "GET", access="public", inline=True),
    route("/products/{product_id}", product_detail, "GET", access="public", inline=True),
    route("/products/{product_id}/curriculum", product_curriculum, "GET", access="public"),
    route("/topics", topic_list, "GET", access="public"),
    route("/leaders/{leader_id}/products", leader_products, "GET", access="public"),
    route("/products/{product_id}/reviews", product_reviews, "GET", access="public"),
]
