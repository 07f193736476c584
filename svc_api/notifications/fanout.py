"""Fan-outs: one event to a whole audience (a leader's followers, every account), written in
batches by a worker so that a post to 100,000 followers costs its author one row.

A fan-out keeps its position (the last account id done); each batch writes its records and outbox
rows and moves the position in one transaction, so a worker killed mid-run repeats at most the
batch it was in, whose rows exist already (see :mod:`svc_api.notifications.outbox`): every member
of the audience gets the event once per channel. Other domains name their audiences with
:func:`register_audience`.

Example:
    >>> "everyone" in AUDIENCES
    True
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable

from sqlalchemy.engine import Connection

from svc_api.accounts import service as accounts
from svc_api.core.store import Store
from svc_api.notifications import outbox
from svc_api.notifications import outbox_queries as queries

Audience = Callable[[Connection, str, "str | None", int], list[str]]
"""``(conn, argument, after, limit) -> account ids`` in id order after ``after``."""

AUDIENCES: dict[str, Audience] = {
    "everyone": lambda conn, arg, after, limit: accounts.account_ids_after(conn, after, limit),
}
BATCH = 1000


def register_audience(name: str, members: Audience) -> None:
    """Name an audience whose members ``members`` lists (called by the domain that knows them).

    Example:
        >>> register_audience("nobody", lambda conn, arg, after, limit: [])
        >>> AUDIENCES.pop("nobody") is not None
        True
    """
    AUDIENCES[name] = members


def start_fanout(
    conn: Connection, audience: str, arg: str, event_type: str, *, key: str, title: str, body: str, now: int
) -> str:
    """Open a fan-out of one event in the caller's transaction; its id (the same event twice: one).

    Example:
        >>> with store.write() as conn:
        ...     fid = start_fanout(conn, "everyone", "", "announcement", key="a1", title="t", body="b", now=1)
        >>> run_fanouts(store, now=2)
        0
    """
    if audience not in AUDIENCES:
        raise ValueError(f"unknown audience {audience!r}")
    fanout_id = hashlib.sha256(f"{audience}|{arg}|{event_type}|{key}".encode()).hexdigest()[:32]
    queries.insert_fanout(
        conn,
        id=fanout_id,
        audience=audience,
        audience_arg=arg,
        event_type=event_type,
        event_key=key,
        title=title,
        body=body,
        created_at=now,
    )
    return fanout_id


def run_fanouts(store: Store, *, now: int, batch: int = BATCH, max_batches: int = 1000) -> int:
    """Work through open fan-outs, one batch per transaction; how many users were reached."""
    reached = 0
    for _ in range(max_batches):
        with store.write() as conn:
            fanout = queries.open_fanout(conn)
            if fanout is None:
                return reached
            members = AUDIENCES[fanout.audience](conn, fanout.audience_arg, fanout.position, batch)
            if not members:
                queries.advance_fanout(conn, fanout.id, position=fanout.position, added=0, done_at=now)
                continue
            added = outbox.enqueue(
                conn, members, fanout.title, fanout.body, fanout.event_type, key=fanout.event_key, now=now
            )
            queries.advance_fanout(conn, fanout.id, position=members[-1], added=added, done_at=None)
            reached += added
    return reached
