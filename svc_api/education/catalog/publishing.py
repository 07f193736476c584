"""The catalog's write side: products from draft to published revisions, states, and bundles.

A product row starts as a ``draft`` (the studio keeps the draft's own fields apart, so editing a
draft never changes what is published). Publishing a snapshot writes the snapshot's metadata onto
the product and its curriculum as the next revision; enrolled students keep theirs until they adopt
it. ``unpublished`` closes new sales and keeps every entitlement and all progress.

Example:
    >>> KINDS, LEVELS
    (('course', 'publication'), ('beginner', 'intermediate', 'advanced'))
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy.engine import Connection

from svc_api.core.errors import Conflict, Invalid, NotFound
from svc_api.education.catalog import curriculum, queries
from svc_api.education.conventions import new_id

KINDS = ("course", "publication")
LEVELS = ("beginner", "intermediate", "advanced")
METADATA = (
    "kind",
    "title",
    "subtitle",
    "description",
    "language",
    "level",
    "price_minor",
    "currency",
    "refundable",
)


def _search_text(values: Mapping[str, Any], topic_names: Sequence[str]) -> str:
    parts = [values["title"], values.get("subtitle", ""), values.get("description", ""), *topic_names]
    return " ".join(parts)


def _index(conn: Connection, product_id: str, fields: Mapping[str, Any]) -> None:
    queries.set_topics(conn, product_id, list(fields.get("topics", ())))
    names = [topic["name"] for topic in queries.topics_of(conn, [product_id])[product_id]]
    queries.index_text(conn, product_id, _search_text(fields, names))


def _row(fields: Mapping[str, Any]) -> dict[str, Any]:
    if fields["kind"] not in KINDS or fields["level"] not in LEVELS:
        raise Invalid("kind or level is not one the catalog knows")
    return {
        "kind": fields["kind"],
        "title": fields["title"],
        "subtitle": fields.get("subtitle", ""),
        "description": fields.get("description", ""),
        "language": fields["language"],
        "level": fields["level"],
        "price_minor": int(fields["price_minor"]),
        "currency": fields["currency"],
        "refundable": bool(fields.get("refundable", True)),
    }


def create_draft(conn: Connection, leader_id: str, fields: Mapping[str, Any], *, now: int) -> str:
    """A product row in state ``draft`` (not in the catalog, no revision yet); its id."""
    product_id = new_id("pr_")
    queries.insert_product(
        conn,
        product_id=product_id,
        leader_id=leader_id,
        state="draft",
        revision=None,
        sample=bool(fields.get("sample", False)),
        created_at=now,
        updated_at=now,
        **_row(fields),
    )
    return product_id


def publish_snapshot(
    conn: Connection, product_id: str, fields: Mapping[str, Any], tree: object, *, now: int
) -> int:
    """Publish a reviewed snapshot: its metadata onto the product, its curriculum as the next
    revision, state ``published``; the revision number."""
    row = queries.product(conn, product_id, lock=True)
    if row is None:
        raise NotFound(f"no product {product_id}")
    checked = curriculum.check(tree)
    count, seconds = curriculum.totals(checked)
    number = int(row.revision or 0) + 1
    queries.insert_revision(conn, product_id, number, checked, now)
    queries.update_product(
        conn,
        product_id,
        state="published",
        revision=number,
        lesson_count=count,
        duration_seconds=seconds,
        published_at=row.published_at or now,
        updated_at=now,
        **_row(fields),
    )
    _index(conn, product_id, fields)
    return number


def publish_product(conn: Connection, leader_id: str, fields: Mapping[str, Any], *, now: int) -> str:
    """Create a product and publish revision 1 at once (tests and the sample catalog; the studio
    goes through a reviewed snapshot). ``fields``: kind, title, subtitle, description, language,
    level, price_minor, currency, topics (ids), curriculum, refundable, sample."""
    product_id = create_draft(conn, leader_id, fields, now=now)
    publish_snapshot(conn, product_id, fields, fields["curriculum"], now=now)
    return product_id


def publish_revision(conn: Connection, product_id: str, tree: object, *, now: int) -> int:
    """Publish a new curriculum revision with the product's metadata unchanged."""
    row = queries.product(conn, product_id)
    if row is None:
        raise NotFound(f"no product {product_id}")
    fields = {name: getattr(row, name) for name in METADATA}
    fields["topics"] = [topic["topic_id"] for topic in queries.topics_of(conn, [product_id])[product_id]]
    return publish_snapshot(conn, product_id, fields, tree, now=now)


def set_state(conn: Connection, product_id: str, state: str, *, now: int) -> None:
    """Move a product to ``published`` or ``unpublished`` (sales close; entitlements stay)."""
    if queries.product(conn, product_id) is None:
        raise NotFound(f"no product {product_id}")
    queries.update_product(conn, product_id, state=state, updated_at=now)


def _own_products(conn: Connection, leader_id: str, product_ids: Sequence[str]) -> list[str]:
    wanted = sorted(set(product_ids))
    rows = queries.products_by_id(conn, wanted)
    if len(rows) != len(wanted) or any(row.leader_id != leader_id for row in rows.values()):
        raise Conflict("a bundle holds its leader's own products only", code="not_own_product")
    return wanted


def create_bundle(
    conn: Connection,
    leader_id: str,
    title: str,
    price: tuple[int, str],
    product_ids: Sequence[str],
    *,
    now: int,
) -> str:
    """A published bundle of the leader's own products (409 when one is someone else's)."""
    bundle_id = new_id("bn_")
    queries.insert_bundle(
        conn,
        _own_products(conn, leader_id, product_ids),
        bundle_id=bundle_id,
        leader_id=leader_id,
        title=title,
        price_minor=price[0],
        currency=price[1],
        state="published",
        created_at=now,
        updated_at=now,
    )
    return bundle_id


def update_bundle(
    conn: Connection, bundle_id: str, version: int, changes: Mapping[str, Any], *, now: int
) -> bool:
    """Change a bundle's title, price, products or state under its version (compare-and-set);
    False when the version moved meanwhile."""
    row = queries.bundle(conn, bundle_id)
    values = {key: changes[key] for key in ("title", "state") if key in changes}
    if "price" in changes:
        values["price_minor"], values["currency"] = changes["price"]
    if not queries.update_bundle(conn, bundle_id, version, updated_at=now, **values):
        return False
    if "product_ids" in changes:
        queries.set_bundle_products(
            conn, bundle_id, _own_products(conn, row.leader_id, changes["product_ids"])
        )
    return True
