"""Deleting objects whose store row is gone, crash-safely: the queue of :data:`object_deletions`.

The order that never shows a row pointing to a missing object: a domain deletes its row and queues
the row's object keys **in the same transaction** (:func:`queue_deletes`); after the commit,
:func:`drain` deletes each object, then its queue row. A reader that still finds the row finds its
objects; a crash after the commit leaves queued keys that the next :func:`drain` finishes (deleting an
object that is already gone counts as done), so an object outlives its row by at most one pass and
never the other way round.

Example:
    >>> import tempfile
    >>> from svc_api.core.objectstore import LocalObjectStore
    >>> from svc_api.core.store import Store
    >>> objects = LocalObjectStore(tempfile.mkdtemp()); objects.put("a/b.json", b"{}")
    >>> with store.write() as conn:
    ...     queue_deletes(conn, ["a/b.json", "a/c.json"], now=1)
    >>> drain(store, objects), objects.exists("a/b.json"), pending(store)
    (2, False, 0)
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

import sqlalchemy as sa
from sqlalchemy import Connection

from svc_api.core.objectstore import ObjectStore
from svc_api.core.store import Store
from svc_api.core.tables import object_deletions

logger = logging.getLogger("svc_api.objectqueue")
_q = object_deletions.c


def queue_deletes(conn: Connection, keys: Iterable[str], *, now: int) -> None:
    """Queue ``keys`` for deletion, in the caller's transaction (a key already queued stays once)."""
    wanted = list(dict.fromkeys(keys))
    if not wanted:
        return
    have = set(conn.execute(sa.select(_q.key).where(_q.key.in_(wanted))).scalars())
    fresh = [{"key": k, "queued_at": int(now)} for k in wanted if k not in have]
    if fresh:
        conn.execute(object_deletions.insert(), fresh)


def drain(store: Store, objects: ObjectStore, *, limit: int = 1000) -> int:
    """Delete up to ``limit`` queued objects, oldest first, each object before its queue row; the
    number done. An object whose deletion fails stays queued for the next pass (logged)."""
    with store.read() as conn:
        keys = list(conn.execute(sa.select(_q.key).order_by(_q.queued_at, _q.key).limit(limit)).scalars())
    return len(_delete(store, objects, keys))


def delete_queued(store: Store, objects: ObjectStore, keys: Iterable[str]) -> int:
    """Delete these queued objects now (after the commit that queued them), each before its queue
    row; how many existed. A failure leaves the key queued for :func:`drain` (logged)."""
    return sum(_delete(store, objects, list(dict.fromkeys(keys))).values())


def _delete(store: Store, objects: ObjectStore, keys: list[str]) -> dict[str, bool]:
    done: dict[str, bool] = {}
    for key in keys:
        try:
            # False when already gone (a crash after an earlier delete): done either way
            done[key] = objects.delete(key)
        except Exception:
            logger.exception("object %s could not be deleted; it stays queued", key)
    if done:
        with store.write() as conn:
            conn.execute(object_deletions.delete().where(_q.key.in_(list(done))))
    return done


def pending(store: Store) -> int:
    """How many objects wait for deletion (for health and tests)."""
    with store.read() as conn:
        return int(conn.execute(sa.select(sa.func.count()).select_from(object_deletions)).scalar_one())
