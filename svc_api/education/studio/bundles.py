"""Bundles of an instructor's own published products, priced in money, edited under ``If-Match``.

The body's format rules are its model's (:mod:`.contract`); the rules here need the store or the
settings.

Example:
    >>> BUNDLE
    'bundle'
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sqlalchemy.engine import Connection

from svc_api.core.errors import ApiError, Conflict, Forbidden
from svc_api.education.catalog import service as catalog
from svc_api.education.conventions import etag
from svc_api.education.studio import sellers
from svc_api.education.studio.contract import EduBundleCreate, EduBundlePatch
from svc_api.education.studio.products import require_currency

BUNDLE = "bundle"


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
    conn: Connection, leader_id: str, body: EduBundleCreate, *, currency: str, now: int
) -> dict[str, Any]:
    """A bundle (201); 409 when a product is not the leader's own or not published."""
    sellers.require_instructor(conn, leader_id)
    require_currency(body.price, currency)
    ids = body.product_ids or []
    bundle_id = catalog.create_bundle(conn, leader_id, str(body.title), body.price, ids, now=now)
    _published(conn, ids)
    return view(conn, bundle_id)


def update(
    conn: Connection,
    leader_id: str,
    bundle_id: str,
    body: EduBundlePatch,
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
    require_currency(body.price, currency)
    changes = body.changes()
    if "product_ids" in changes:
        _published(conn, changes["product_ids"])
    if not catalog.update_bundle(conn, bundle_id, int(row.version), changes, now=now):
        raise ApiError(
            412, "precondition_failed", extra={"message": "the bundle changed meanwhile: read it again"}
        )
    return view(conn, bundle_id)
