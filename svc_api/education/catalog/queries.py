"""Every SQL statement of the catalog: topics, products and their revisions, bundles, reviews as a
list, and the full-text index (SQLite FTS5 table ``edu_products_fts``; PostgreSQL a ``tsvector``
expression index on ``search_text``).

Example:
    >>> fts_query("Risk-management 101!")
    ['risk', 'management', '101']
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Row

from svc_api.core.prepared import Prepared, key_slots
from svc_api.core.upsert import insert_new
from svc_api.education.catalog.tables import (
    bundle_items,
    bundles,
    product_topics,
    products,
    revisions,
    topics,
)
from svc_api.education.learning.tables import reviews

_WORD = re.compile(r"\w+", re.UNICODE)
P = products.c


def fts_query(text: str) -> list[str]:
    """The words of a free-text search, lower-cased (operators and quotes never reach the index)."""
    return [word.lower() for word in _WORD.findall(text)][:16]


def _search(conn: Connection, words: list[str]) -> sa.ColumnElement[bool]:
    if conn.dialect.name == "postgresql":
        query = " & ".join(f"{word}:*" for word in words)
        return sa.func.to_tsvector(sa.literal_column("'simple'"), P.search_text).op("@@")(
            sa.func.to_tsquery(sa.literal_column("'simple'"), query)
        )
    match = " ".join(f'"{word}"*' for word in words)
    matched = sa.text("SELECT product_id FROM edu_products_fts WHERE edu_products_fts MATCH :match")
    return P.product_id.in_(matched.bindparams(match=match).columns(sa.column("product_id")))


def index_text(conn: Connection, product_id: str, text: str) -> None:
    """Put the product's searchable text in the index (PostgreSQL indexes the column itself)."""
    conn.execute(products.update().where(P.product_id == product_id).values(search_text=text))
    if conn.dialect.name == "sqlite":
        conn.execute(sa.text("DELETE FROM edu_products_fts WHERE product_id = :p"), {"p": product_id})
        conn.execute(
            sa.text("INSERT INTO edu_products_fts (product_id, body) VALUES (:p, :b)"),
            {"p": product_id, "b": text},
        )


SORTS: dict[str, tuple[sa.ColumnElement[Any], bool]] = {
    "newest": (P.published_at, True),
    "popular": (P.student_count, True),
    "rating": (P.rating_avg, True),
    "price_low": (P.price_minor, False),
    "price_high": (P.price_minor, True),
}
"""Sort name -> (column, descending); ties are broken by ``product_id`` in the same direction."""


def catalog_page(
    conn: Connection, filters: dict[str, Any], sort: str, after: tuple[Any, str] | None, limit: int
) -> list[Row[Any]]:
    """Published products matching ``filters``, in ``sort`` order, after the keyset ``after``."""
    if not any(value not in (None, "", (), [], (None, None)) for value in filters.values()):
        params: dict[str, Any] = {"limit": limit}
        if after is not None:
            params.update(v=after[0], k=after[1])
        return _unfiltered(sort, after is not None).all(conn, params)
    column, descending = SORTS[sort]
    query = sa.select(products).where(P.state == "published")
    if filters.get("words"):
        query = query.where(_search(conn, filters["words"]))
    for topic in filters.get("topics", ()):
        query = query.where(
            P.product_id.in_(sa.select(product_topics.c.product_id).where(product_topics.c.topic_id == topic))
        )
    for name in ("language", "kind", "level"):
        if filters.get(name):
            query = query.where(P[name] == filters[name])
    if filters.get("max_price") is not None:
        query = query.where(P.price_minor <= filters["max_price"])
    low, high = filters.get("duration", (None, None))
    if low is not None:
        query = query.where(P.duration_seconds >= low)
    if high is not None:
        query = query.where(P.duration_seconds < high)
    if after is not None:
        value, product_id = after
        key = sa.tuple_(column, P.product_id)
        query = query.where(key < (value, product_id) if descending else key > (value, product_id))
    order = (column.desc(), P.product_id.desc()) if descending else (column.asc(), P.product_id.asc())
    return list(conn.execute(query.order_by(*order).limit(limit)))


@functools.cache
def _unfiltered(sort: str, after: bool) -> Prepared:
    # The catalog as most visitors open it (no filter), one statement per sort, compiled once.
    column, descending = SORTS[sort]
    query = sa.select(products).where(P.state == "published")
    if after:
        key, bound = sa.tuple_(column, P.product_id), sa.tuple_(sa.bindparam("v"), sa.bindparam("k"))
        query = query.where(key < bound if descending else key > bound)
    order = (column.desc(), P.product_id.desc()) if descending else (column.asc(), P.product_id.asc())
    return Prepared(query.order_by(*order).limit(sa.bindparam("limit")))


def leader_page(
    conn: Connection, leader_id: str, after: tuple[int, str] | None, limit: int
) -> list[Row[Any]]:
    """Published products of one leader, newest first."""
    query = sa.select(products).where(P.leader_id == leader_id, P.state == "published")
    if after is not None:
        query = query.where(sa.tuple_(P.published_at, P.product_id) < after)
    return list(conn.execute(query.order_by(P.published_at.desc(), P.product_id.desc()).limit(limit)))


def has_products(conn: Connection, leader_id: str) -> bool:
    """Whether ``leader_id`` has ever made a product."""
    return conn.execute(sa.select(P.product_id).where(P.leader_id == leader_id).limit(1)).first() is not None


_PRODUCT = Prepared(sa.select(products).where(P.product_id == sa.bindparam("product_id")))


def product(conn: Connection, product_id: str, *, lock: bool = False) -> Row[Any] | None:
    """One product row (``lock``: FOR UPDATE on PostgreSQL); a plain read is prepared (every product
    page reads it)."""
    if not lock:
        return _PRODUCT.first(conn, {"product_id": product_id})  # type: ignore[no-any-return]
    return conn.execute(sa.select(products).where(P.product_id == product_id).with_for_update()).first()


def products_by_id(conn: Connection, product_ids: Sequence[str]) -> dict[str, Row[Any]]:
    """``product_id -> row`` for the given ids."""
    if not product_ids:
        return {}
    rows = conn.execute(sa.select(products).where(P.product_id.in_(list(product_ids))))
    return {row.product_id: row for row in rows}


def insert_product(conn: Connection, **values: Any) -> None:
    conn.execute(products.insert().values(**values))


def update_product(conn: Connection, product_id: str, **values: Any) -> None:
    conn.execute(products.update().where(P.product_id == product_id).values(**values))


def set_topics(conn: Connection, product_id: str, topic_ids: Sequence[str]) -> None:
    conn.execute(product_topics.delete().where(product_topics.c.product_id == product_id))
    for topic_id in topic_ids:
        conn.execute(product_topics.insert().values(product_id=product_id, topic_id=topic_id))


_TOPICS_OF = Prepared(
    sa.select(product_topics.c.product_id, topics.c.topic_id, topics.c.name)
    .join(topics, topics.c.topic_id == product_topics.c.topic_id)
    .where(product_topics.c.product_id.in_(key_slots()))
)


def topics_of(conn: Connection, product_ids: Sequence[str]) -> dict[str, list[dict[str, str]]]:
    """``product_id -> [{topic_id, name}]``."""
    out: dict[str, list[dict[str, str]]] = {pid: [] for pid in product_ids}
    if not product_ids:
        return out
    for row in sorted(_TOPICS_OF.all_keyed(conn, product_ids), key=lambda r: (r.name, r.topic_id)):
        out[row.product_id].append({"topic_id": row.topic_id, "name": row.name})
    return out


def known_topics(conn: Connection, topic_ids: Sequence[str]) -> set[str]:
    rows = conn.execute(sa.select(topics.c.topic_id).where(topics.c.topic_id.in_(list(topic_ids))))
    return {row.topic_id for row in rows}


def add_topic(conn: Connection, topic_id: str, name: str) -> None:
    conn.execute(insert_new(conn, topics).values(topic_id=topic_id, name=name, name_folded=name.casefold()))


def topic_page(
    conn: Connection, folded: str | None, after: tuple[str, str] | None, limit: int
) -> list[Row[Any]]:
    """Topics whose name contains ``folded`` (all when None), by name."""
    query = sa.select(topics)
    if folded:
        escaped = folded.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        query = query.where(topics.c.name_folded.like(f"%{escaped}%", escape="\\"))
    if after is not None:
        query = query.where(sa.tuple_(topics.c.name_folded, topics.c.topic_id) > after)
    return list(conn.execute(query.order_by(topics.c.name_folded, topics.c.topic_id).limit(limit)))


def revision(conn: Connection, product_id: str, number: int) -> Row[Any] | None:
    query = sa.select(revisions).where(revisions.c.product_id == product_id, revisions.c.revision == number)
    return conn.execute(query).first()


def insert_revision(
    conn: Connection, product_id: str, number: int, curriculum: dict[str, Any], now: int
) -> None:
    conn.execute(
        revisions.insert().values(
            product_id=product_id, revision=number, curriculum=curriculum, published_at=now
        )
    )


def bundle(conn: Connection, bundle_id: str) -> Row[Any] | None:
    return conn.execute(sa.select(bundles).where(bundles.c.bundle_id == bundle_id)).first()


def bundle_products(conn: Connection, bundle_id: str) -> list[str]:
    rows = conn.execute(
        sa.select(bundle_items.c.product_id)
        .where(bundle_items.c.bundle_id == bundle_id)
        .order_by(bundle_items.c.product_id)
    )
    return [row.product_id for row in rows]


def insert_bundle(conn: Connection, product_ids: Sequence[str], **values: Any) -> None:
    conn.execute(bundles.insert().values(**values))
    for product_id in product_ids:
        conn.execute(bundle_items.insert().values(bundle_id=values["bundle_id"], product_id=product_id))


def update_bundle(conn: Connection, bundle_id: str, version: int, **values: Any) -> bool:
    """Compare-and-set on the bundle's version (it moves by one): True when this call changed it."""
    result = conn.execute(
        bundles.update()
        .where(bundles.c.bundle_id == bundle_id, bundles.c.version == version)
        .values(version=version + 1, **values)
    )
    return result.rowcount == 1


def set_bundle_products(conn: Connection, bundle_id: str, product_ids: Sequence[str]) -> None:
    conn.execute(bundle_items.delete().where(bundle_items.c.bundle_id == bundle_id))
    for product_id in product_ids:
        conn.execute(bundle_items.insert().values(bundle_id=bundle_id, product_id=product_id))


def review_page(
    conn: Connection, product_id: str, after: tuple[int, str] | None, limit: int
) -> list[Row[Any]]:
    """Reviews of a product, newest first."""
    query = sa.select(reviews).where(reviews.c.product_id == product_id)
    if after is not None:
        query = query.where(sa.tuple_(reviews.c.updated_at, reviews.c.svc_id) < after)
    return list(
        conn.execute(query.order_by(reviews.c.updated_at.desc(), reviews.c.svc_id.desc()).limit(limit))
    )


def refresh_rating(conn: Connection, product_id: str) -> None:
    """Recompute the product's rating from its reviews (in the review's transaction)."""
    total, count = conn.execute(
        sa.select(sa.func.coalesce(sa.func.sum(reviews.c.rating), 0), sa.func.count()).where(
            reviews.c.product_id == product_id
        )
    ).one()
    average = round(int(total) / int(count), 4) if count else 0.0
    update_product(conn, product_id, rating_sum=int(total), rating_count=int(count), rating_avg=average)


def add_students(conn: Connection, product_id: str, delta: int) -> None:
    conn.execute(
        products.update().where(P.product_id == product_id).values(student_count=P.student_count + delta)
    )


def count_products(conn: Connection) -> int:
    return int(conn.execute(sa.select(sa.func.count()).select_from(products)).scalar_one())
