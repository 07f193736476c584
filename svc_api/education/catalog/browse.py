"""The catalog pages clients read, each in one read transaction: the catalog, a product and its
curriculum, topics, a leader's products, a product's reviews. A viewer (the caller's account, None
for a guest) adds whether each product is theirs.

A list takes ``paging``: the route's reading of ``cursor`` and ``limit`` for a list name (a cursor
made for another list or filter set is refused there), so the catalog, whose list name depends on
its resolved filters, pages inside its own transaction.

Example:
    >>> from svc_api.education.catalog.contract import CatalogQuery
    >>> page = catalog_page(store, CatalogQuery.parse({}), None, lambda name: (None, 20))
    >>> page.items, page.more
    ([], False)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sqlalchemy.engine import Connection

from svc_api.core.store import Store
from svc_api.education.catalog import curriculum
from svc_api.education.catalog import service as catalog
from svc_api.education.commerce import service as commerce

Paging = Callable[[str], tuple[dict[str, Any] | None, int]]
"""List name -> (the position a page starts after, None for the first page; the page size)."""


@dataclass(frozen=True)
class Page:
    """One page of a list: its name (cursors are bound to it), the items and whether more follow."""

    list_name: str
    items: list[dict[str, Any]]
    more: bool


def _with_viewer(conn: Connection, viewer: str | None, items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    if viewer is None:
        return items
    owned = commerce.owned(conn, viewer, [item["product_id"] for item in items])
    return [item | {"viewer": {"owned": item["product_id"] in owned}} for item in items]


def catalog_page(store: Store, query: Any, viewer: str | None, paging: Paging) -> Page:
    """A page of the catalog under the filters of ``query`` (a checked
    :class:`~svc_api.education.catalog.contract.CatalogQuery`; 400 for an unknown topic)."""
    with store.read() as conn:
        filters = catalog.catalog_filters(conn, query)
        list_name = catalog.filter_fingerprint(filters, query.sort)
        after, limit = paging(list_name)
        items, more = catalog.catalog(conn, filters, query.sort, after, limit)
        return Page(list_name, _with_viewer(conn, viewer, items), more)


def product_page(store: Store, product_id: str, viewer: str | None) -> dict[str, Any]:
    """A product page (404 when no client may see it)."""
    with store.read() as conn:
        return _with_viewer(conn, viewer, [catalog.detail(conn, product_id)])[0]


def curriculum_page(store: Store, product_id: str, viewer: str | None) -> dict[str, Any]:
    """The curriculum of a product's published revision, lessons locked unless the viewer owns it."""
    with store.read() as conn:
        row = catalog.published(conn, product_id)
        owned = viewer is not None and product_id in commerce.owned(conn, viewer, [product_id])
        tree = catalog.tree(conn, product_id, int(row.revision))
    return {"product_id": product_id, "revision": int(row.revision), **curriculum.preview(tree, owned=owned)}


def topics_page(store: Store, text: str | None, paging: Paging) -> Page:
    """Topics whose name contains ``text``, by name."""
    list_name = "topics:" + (text or "").strip().casefold()
    after, limit = paging(list_name)
    with store.read() as conn:
        items, more = catalog.topic_page(conn, text, after, limit)
    return Page(list_name, items, more)


def leader_page(store: Store, leader_id: str, viewer: str | None, paging: Paging) -> Page:
    """A leader's published products, newest first (404 when nobody by that id teaches here)."""
    list_name = f"leader:{leader_id}"
    after, limit = paging(list_name)
    with store.read() as conn:
        items, more = catalog.leader_products(conn, leader_id, after, limit)
        return Page(list_name, _with_viewer(conn, viewer, items), more)


def reviews_page(store: Store, product_id: str, paging: Paging) -> Page:
    """A page of a product's reviews, newest first."""
    list_name = f"reviews:{product_id}"
    after, limit = paging(list_name)
    with store.read() as conn:
        items, more = catalog.reviews(conn, product_id, after, limit)
    return Page(list_name, items, more)
