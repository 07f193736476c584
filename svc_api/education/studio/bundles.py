"""Bundles of an instructor's own published products, priced in money, edited under ``If-Match``.

Example:
    >>> check({"title": "Both", "price": {"amount_minor": 5000, "currency": "USD"},
    ...        "product_ids": ["pr_a", "pr_b"]}, "USD")["price"]
    (5000, 'USD')
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from sqlalchemy.engine import Connection

from svc_api.core.errors import ApiError, Conflict, Forbidden, Invalid
from svc_api.education.catalog import service as catalog
from svc_api.education.conventions import etag, parse_money
from svc_api.education.studio import sellers

BUNDLE = "bundle"
FIELDS = ("title", "price", "product_ids", "state")
MAX_PRODUCTS = 20


def check(body: Mapping[str, Any], currency: str, *, partial: bool = False) -> dict[str, Any]:
    """Bundle fields from a request (400 naming the first broken rule)."""
    unknown = sorted(set(body) - set(FIELDS if partial else FIELDS[:3]))
    if unknown:
        raise Invalid(f"unknown field {unknown[0]!r}")
    missing = [] if partial else [name for name in FIELDS[:3] if name not in body]
    if missing:
        raise Invalid(f"{missing[0]} is required")
    out: dict[str, Any] = {}
    if "title" in body:
        if not isinstance(body["title"], str) or not 3 <= len(body["title"].strip()) <= 160:
            raise Invalid("title must be a string of 3-160 characters")
        out["title"] = body["title"].strip()
    if "price" in body:
        out["price"] = parse_money(body["price"], "price")
        if out["price"][1] != currency:
            raise Invalid(f"price.currency must be the catalog's currency {currency}")
    if "product_ids" in body:
        ids = body["product_ids"]
        if (
            not isinstance(ids, list)
            or not all(isinstance(i, str) for i in ids)
            or not 2 <= len(set(ids)) <= MAX_PRODUCTS
        ):
            raise Invalid(f"product_ids must list 2-{MAX_PRODUCTS} product ids")
        out["product_ids"] = sorted(set(ids))
    if "state" in body:
        if body["state"] not in ("published", "unpublished"):
            raise Invalid("state must be published or unpublished")
        out["state"] = body["state"]
    return out


def _published(conn: Connection, product_ids: list[str]) -> None:
    rows = catalog.products_by_id(conn, product_ids)
    if any(row.state != "published" for row in rows.values()):
        raise Conflict("a bundle holds published products only", code="not_published")


def view(conn: Connection, bundle_id: str) -> dict[str, Any]:
    row = catalog.bundle_row(conn, bundle_id)
    return {
        "bundle_id": bundle_id,
        "title": row.title,
        "state": row.state,
        "price": {"amount_minor": int(row.price_minor), "currency": row.currency},
        "product_ids": catalog.bundle_products(conn, bundle_id),
        "etag": etag(BUNDLE, int(row.version)),
    }


def read(conn: Connection, leader_id: str, bundle_id: str) -> dict[str, Any]:
    """The leader's bundle with its current ``ETag`` (403 not yours or unknown)."""
    sellers.require_instructor(conn, leader_id)
    row = catalog.bundle_row(conn, bundle_id)
    if row is None or row.leader_id != leader_id:
        raise Forbidden(f"bundle {bundle_id} is not one of yours", code="not_owner")
    return view(conn, bundle_id)


def create(
    conn: Connection, leader_id: str, body: Mapping[str, Any], *, currency: str, now: int
) -> dict[str, Any]:
    """A bundle (201); 409 when a product is not the leader's own or not published."""
    sellers.require_instructor(conn, leader_id)
    fields = check(body, currency)
    bundle_id = catalog.create_bundle(
        conn, leader_id, fields["title"], fields["price"], fields["product_ids"], now=now
    )
    _published(conn, fields["product_ids"])
    return view(conn, bundle_id)


def update(
    conn: Connection,
    leader_id: str,
    bundle_id: str,
    body: Mapping[str, Any],
    if_match: Callable[[str], None],
    *,
    currency: str,
    now: int,
) -> dict[str, Any]:
    """Change a bundle under ``If-Match`` (403 not yours or unknown, 412 stale, 409 products)."""
    sellers.require_instructor(conn, leader_id)
    row = catalog.bundle_row(conn, bundle_id)
    if row is None or row.leader_id != leader_id:
        raise Forbidden(f"bundle {bundle_id} is not one of yours", code="not_owner")
    if_match(etag(BUNDLE, int(row.version)))
    changes = check(body, currency, partial=True)
    if not changes:
        raise Invalid("send at least one field to change")
    if "product_ids" in changes:
        _published(conn, changes["product_ids"])
    if not catalog.update_bundle(conn, bundle_id, int(row.version), changes, now=now):
        raise ApiError(
            412, "precondition_failed", extra={"message": "the bundle changed meanwhile: read it again"}
        )
    return view(conn, bundle_id)
