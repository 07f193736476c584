"""Catalog rules: what a product, a bundle and a topic look like to clients, the catalog's filters,
publishing a revision, and reviews with the rating that follows them.

Until the studio exists (issue 18), products are made with :func:`publish_product` (tests, the
sample catalog); a new curriculum revision with :func:`publish_revision`.

Example:
    >>> with store.write() as conn:
    ...     add_topic(conn, "trading-basics", "Trading basics")
    ...     topic_page(conn, "basics", None, 10)[0][0]["topic_id"]
    'trading-basics'
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy.engine import Connection, Row

from svc_api.community import service as community
from svc_api.core.errors import Invalid, NotFound
from svc_api.education import conventions
from svc_api.education.catalog import curriculum, publishing, queries

DURATIONS = {"short": (None, 7_200), "medium": (7_200, 36_000), "long": (36_000, None)}
"""Catalog ``duration`` filter: under 2 hours, 2-10 hours, 10 hours or more of video."""
SORTS = tuple(queries.SORTS)
MAX_TOPICS = 5
_TOPIC = re.compile(r"[a-z0-9][a-z0-9-]{0,39}")

KINDS, LEVELS = publishing.KINDS, publishing.LEVELS
# the write side, re-exported: other domains meet the catalog here only
create_draft = publishing.create_draft
publish_product = publishing.publish_product
publish_revision = publishing.publish_revision
publish_snapshot = publishing.publish_snapshot
set_state = publishing.set_state
create_bundle = publishing.create_bundle
update_bundle = publishing.update_bundle
new_id = conventions.new_id
add_topic = queries.add_topic
lessons = curriculum.lessons
check_curriculum = curriculum.check
known_topics = queries.known_topics
lesson = curriculum.lesson
product_row = queries.product
products_by_id = queries.products_by_id
bundle_products = queries.bundle_products
bundle_row = queries.bundle
refresh_rating = queries.refresh_rating
add_students = queries.add_students


def topic_id(value: object, field: str = "topic") -> str:
    """A topic id: lower-case letters, digits and ``-``, at most 40 (400 otherwise)."""
    if not isinstance(value, str) or not _TOPIC.fullmatch(value):
        raise Invalid(f"{field} must be a topic id (lower-case letters, digits and '-'), got {value!r}")
    return value


def catalog_filters(conn: Connection, query: Any) -> dict[str, Any]:
    """The catalog's filters from its checked query (a
    :class:`~svc_api.education.catalog.contract.CatalogQuery`); 400 for a topic no product uses."""
    filters: dict[str, Any] = {}
    if query.q is not None:
        filters["words"] = queries.fts_query(query.q)
    wanted = query.topic
    unknown = sorted(set(wanted) - queries.known_topics(conn, wanted)) if wanted else []
    if unknown:
        raise Invalid(f"unknown topic {unknown[0]!r}")
    filters["topics"] = wanted
    filters["language"] = query.language
    filters["kind"] = query.kind
    filters["level"] = query.level
    filters["duration"] = DURATIONS.get(query.duration or "", (None, None))
    filters["max_price"] = query.max_price
    return filters


def sort_of(value: str | None) -> str:
    """The catalog sort (default ``newest``)."""
    if value is None:
        return "newest"
    if value not in queries.SORTS:
        raise Invalid(f"sort must be one of {', '.join(SORTS)}, got {value!r}")
    return value


def filter_fingerprint(filters: Mapping[str, Any], sort: str) -> str:
    """A short digest of a filter set: a cursor is valid for the filters it was made under only."""
    canonical = json.dumps({"f": filters, "s": sort}, sort_keys=True, default=str)
    return "catalog:" + hashlib.sha256(canonical.encode()).hexdigest()[:16]


def _summaries(conn: Connection, rows: Sequence[Row[Any]]) -> list[dict[str, Any]]:
    ids = [row.product_id for row in rows]
    topics = queries.topics_of(conn, ids)
    names = community.leader_names(conn, [row.leader_id for row in rows])
    return [summary(row, topics[row.product_id], names.get(row.leader_id)) for row in rows]


def _unnamed(row: Row[Any]) -> str:
    """The name shown for an instructor without a community profile."""
    return "Sample instructor" if row.sample else str(row.leader_id)


def summary(row: Row[Any], topics: list[dict[str, str]], leader_name: str | None) -> dict[str, Any]:
    """A product as a catalog entry."""
    return {
        "product_id": row.product_id,
        "kind": row.kind,
        "title": row.title,
        "subtitle": row.subtitle,
        "language": row.language,
        "level": row.level,
        "topics": topics,
        "leader": {"leader_id": row.leader_id, "name": leader_name or _unnamed(row)},
        "price": {"amount_minor": int(row.price_minor), "currency": row.currency},
        "rating": {"average": round(float(row.rating_avg), 2), "count": int(row.rating_count)},
        "student_count": int(row.student_count),
        "lesson_count": int(row.lesson_count),
        "duration_seconds": int(row.duration_seconds),
        "state": row.state,
        "sample": bool(row.sample),
        "published_at": row.published_at,
    }


def catalog(
    conn: Connection, filters: dict[str, Any], sort: str, after: dict[str, Any] | None, limit: int
) -> tuple[list[dict[str, Any]], bool]:
    """One page of the catalog and whether more follow."""
    key = None if after is None else (after["v"], after["id"])
    rows = queries.catalog_page(conn, filters, sort, key, limit + 1)
    return _summaries(conn, rows[:limit]), len(rows) > limit


def position(item: Mapping[str, Any], sort: str) -> dict[str, Any]:
    """The keyset position of a catalog entry under ``sort``."""
    value = {
        "newest": item["published_at"],
        "popular": item["student_count"],
        "rating": item["rating"]["average"],
        "price_low": item["price"]["amount_minor"],
        "price_high": item["price"]["amount_minor"],
    }[sort]
    return {"v": value, "id": item["product_id"]}


def published(conn: Connection, product_id: str) -> Row[Any]:
    """A product clients may see: published, or unpublished (its owners still learn from it); 404
    for drafts and unknown ids."""
    row = queries.product(conn, product_id)
    if row is None or row.state not in ("published", "unpublished") or row.revision is None:
        raise NotFound(f"no product {product_id}")
    return row


def detail(conn: Connection, product_id: str) -> dict[str, Any]:
    """The product page: its catalog entry plus description and what buying it gets."""
    row = published(conn, product_id)
    item = _summaries(conn, [row])[0]
    item["description"] = row.description
    item["revision"] = row.revision
    item["purchasable"] = row.state == "published"
    item["refundable"] = bool(row.refundable)
    return item


_TREES: dict[tuple[str, str, int], dict[str, Any]] = {}
_TREES_KEPT = 4096


def tree(conn: Connection, product_id: str, revision: int) -> dict[str, Any]:
    """The curriculum of one revision of a product (treat it as read-only). A published revision
    never changes, so it is remembered per database after its first read."""
    key = (str(conn.engine.url), product_id, int(revision))
    kept = _TREES.get(key)
    if kept is not None:
        return kept
    row = queries.revision(conn, product_id, revision)
    if row is None:
        raise NotFound(f"no revision {revision} of product {product_id}")
    if len(_TREES) >= _TREES_KEPT:
        _TREES.clear()
    _TREES[key] = dict(row.curriculum)
    return _TREES[key]


def leader_products(
    conn: Connection, leader_id: str, after: dict[str, Any] | None, limit: int
) -> tuple[list[dict[str, Any]], bool]:
    """Published products of a leader (404 when nobody by that id teaches here)."""
    if not community.leader_names(conn, [leader_id]) and not queries.has_products(conn, leader_id):
        raise NotFound(f"no leader {leader_id}")
    key = None if after is None else (after["v"], after["id"])
    rows = queries.leader_page(conn, leader_id, key, limit + 1)
    return _summaries(conn, rows[:limit]), len(rows) > limit


def topic_page(
    conn: Connection, text: str | None, after: dict[str, Any] | None, limit: int
) -> tuple[list[dict[str, Any]], bool]:
    """Topics whose name contains ``text`` (checked by the route's model), by name."""
    key = None if after is None else (after["n"], after["id"])
    rows = queries.topic_page(conn, text.strip().casefold() if text else None, key, limit + 1)
    return [{"topic_id": row.topic_id, "name": row.name} for row in rows[:limit]], len(rows) > limit


def reviews(
    conn: Connection, product_id: str, after: dict[str, Any] | None, limit: int
) -> tuple[list[dict[str, Any]], bool]:
    """A page of a product's reviews, newest first."""
    published(conn, product_id)
    key = None if after is None else (after["t"], after["id"])
    rows = queries.review_page(conn, product_id, key, limit + 1)
    items = [
        {
            "reviewer_id": row.svc_id,
            "rating": row.rating,
            "comment": row.comment,
            "updated_at": row.updated_at,
        }
        for row in rows[:limit]
    ]
    return items, len(rows) > limit


def count_products(conn: Connection) -> int:
    """How many products exist (the sample catalog loads into an empty store only)."""
    return queries.count_products(conn)
