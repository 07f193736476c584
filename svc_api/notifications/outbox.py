"""The outbox: every notification becomes a record (``app``) and one row per other channel the user
allows, written in the caller's transaction; the delivery worker sends the rows and retries failures.

Ids are derived from the user, the event (``key``) and the channel, and rows are inserted with
``ON CONFLICT DO NOTHING``: writing the same event twice (a fan-out batch run again after a crash)
adds nothing, so each user gets each event once per channel. A row is claimed for a lease before it
is sent and marked sent after; e-mail files are named by the row, so a send repeated after a crash
between the two replaces its own file. Other transports are marked one by one, so a crash can repeat
at most the one message that was in flight (at-least-once, by the width of one commit).

Example:
    >>> len(outbox_id("AB12CD", "post_1", "community_post", "mail"))
    32
    >>> backoff(1), backoff(3), backoff(20)
    (30, 120, 3600)
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy.engine import Connection

from svc_api.accounts import service as accounts
from svc_api.core.store import Store
from svc_api.notifications import outbox_queries as queries
from svc_api.notifications.channels import BOT_CHANNELS, route_of, wanted_channels
from svc_api.notifications.chats import compose_chat, plain
from svc_api.notifications.transports import DeliveryFailed, Transport

logger = logging.getLogger(__name__)

MAX_ATTEMPTS = 8
"""Attempts of one row before it is given up (``failed``; its last error is kept)."""
LEASE_SECONDS = 120


def outbox_id(svc_id: str, key: str, event_type: str, channel: str) -> str:
    """The id of one user's row of one event on one channel (``app``: the notification's id)."""
    return hashlib.sha256(f"{svc_id}|{key}|{event_type}|{channel}".encode()).hexdigest()[:32]


def record_id(svc_id: str, key: str, event_type: str) -> str:
    """The id of the ``app`` record of one user's notification about one event."""
    return hashlib.sha256(f"{svc_id}|{key}|{event_type}".encode()).hexdigest()[:24]


def backoff(attempts: int) -> int:
    """Seconds before retry number ``attempts``: 30 s doubling, at most an hour."""
    return int(min(30 * 2 ** (attempts - 1), 3600))


def enqueue(
    conn: Connection,
    svc_ids: list[str],
    title: str,
    body: str,
    event_type: str,
    *,
    key: str,
    now: int,
    record_ids: Mapping[str, str] | None = None,
) -> int:
    """Write the records and outbox rows of one event for ``svc_ids`` (each user's channels and
    switches decide); ``record_ids`` overrides the ids of ``app`` records. How many users it reached.

    Example:
        >>> from svc_api.accounts.service import register
        >>> with store.write() as conn:
        ...     sid = register(conn, "o@example.com", "password1", ip="::1", ttl=60, now=0).svc_id
        ...     enqueue(conn, [sid], "Hi", "New post", "community_post", key="p1", now=5)
        ...     enqueue(conn, [sid], "Hi", "New post", "community_post", key="p1", now=6)
        ...     queries.outbox_counts(conn)
        1
        1
        {('mail', 'pending'): 1}
    """
    event = Event(svc_ids, title, body, event_type, key, record_ids)
    return enqueue_events(conn, [event], now=now)[0]


@dataclass(frozen=True)
class Event:
    """One event to notify ``svc_ids`` of (the arguments of :func:`enqueue`)."""

    svc_ids: Sequence[str]
    title: str
    body: str
    event_type: str
    key: str
    record_ids: Mapping[str, str] | None = None


def enqueue_events(conn: Connection, events: Sequence[Event], *, now: int) -> list[int]:
    """:func:`enqueue` of many events in a few statements for all of them (the users' profiles and
    chats read once, the records and outbox rows inserted together); how many users each reached.

    Example:
        >>> with store.write() as conn:
        ...     enqueue_events(conn, [Event(["NOPE00"], "Hi", "x", "community_post", "p1")], now=5)
        [0]
    """
    users = sorted({u for e in events for u in e.svc_ids})
    bots = any(set(route_of(e.event_type).channels) & set(BOT_CHANNELS) for e in events if e.svc_ids)
    profiles = accounts.delivery_profiles(conn, users) if users else {}
    chats = queries.chat_ids(conn, users) if bots and users else {}
    records: list[dict[str, Any]] = []
    rows: list[dict[str, Any]] = []
    reached = [_rows_of(e, profiles, chats, records, rows, now) for e in events]
    queries.insert_records(conn, records)
    queries.insert_outbox(conn, rows)
    return reached


def _rows_of(
    e: Event,
    profiles: Mapping[str, Any],
    chats: Mapping[str, str],
    records: list[dict[str, Any]],
    rows: list[dict[str, Any]],
    now: int,
) -> int:
    """Add one event's records and outbox rows; how many users it reached."""
    route = route_of(e.event_type)
    reached = 0
    for svc_id in e.svc_ids:
        profile = profiles.get(svc_id)
        if profile is None:
            continue
        channels = wanted_channels(route, profile.switches)
        reached += bool(channels)
        for channel in channels:
            if channel == "app":
                rid = (e.record_ids or {}).get(svc_id) or record_id(svc_id, e.key, e.event_type)
                records.append(
                    {
                        "id": rid,
                        "svc_id": svc_id,
                        "title": e.title,
                        "body": e.body,
                        "event_type": e.event_type,
                        "created_at": now,
                    }
                )
                continue
            address = profile.email if channel == "mail" else chats.get(svc_id)
            if address:
                rows.append(
                    {
                        "id": outbox_id(svc_id, e.key, e.event_type, channel),
                        "svc_id": svc_id,
                        "channel": channel,
                        "address": address,
                        "event_type": e.event_type,
                        "title": e.title,
                        "body": e.body,
                        "next_attempt_at": now,
                        "created_at": now,
                        "event_key": e.key[:64],
                    }
                )
    return reached


def deliver_due(
    store: Store, transports: Mapping[str, Transport], *, now: int, limit: int = 200
) -> dict[str, int]:
    """Send up to ``limit`` due rows: ``{sent, failed, retrying}`` of this run.

    Rows of a channel without a transport (the bot API not configured) are retried later.
    """
    with store.write() as conn:
        rows = queries.claim_due(conn, now=now, limit=limit, lease=LEASE_SECONDS)
        chats = queries.chat_ids(conn, list({r.svc_id for r in rows if r.channel in BOT_CHANNELS}))
    sent: list[str] = []
    counts = {"sent": 0, "failed": 0, "retrying": 0}
    for row in rows:
        transport = transports.get(row.channel)
        try:
            if transport is None:
                raise DeliveryFailed(f"no transport for channel {row.channel!r} (is the bot API configured?)")
            if row.channel in BOT_CHANNELS:
                if not _chat_send(store, transport, row, chats.get(row.svc_id), now):
                    _skipped(store, row.id, now)
                    continue
            else:
                transport.send(row.id, row.address, row.title, row.body)
        except DeliveryFailed as exc:
            _failed(store, row, str(exc), now)
            counts["failed" if row.attempts + 1 >= MAX_ATTEMPTS else "retrying"] += 1
            continue
        sent.append(row.id)
        # A repeated file replaces itself, so files are marked 25 at a time; any other transport
        # right away, leaving a crash only the instant between its send and this commit to repeat.
        if len(sent) >= 25 or not getattr(transport, "idempotent", False):
            _sent(store, sent, now, counts)
    _sent(store, sent, now, counts)
    return counts


def _chat_send(store: Store, transport: Transport, row: Any, chat: str | None, now: int) -> bool:
    """Send one chat row as the bot's composer words it; False when it is not to be sent: the chat
    was unlinked since (a revoked link stops at once), or the user's bot preferences hold it back."""
    if chat is None or chat != row.address:
        return False
    message = compose_chat(store, row, now)
    if message is None:
        return False
    send_chat = getattr(transport, "send_chat", None)
    if send_chat is None or (not message.buttons and message == plain(row)):
        transport.send(row.id, row.address, row.title, row.body)
    else:
        send_chat(row.address, message.text, message.buttons)
    return True


def _skipped(store: Store, row_id: str, now: int) -> None:
    with store.write() as conn:
        queries.mark_sent(conn, [row_id], now, status="skipped")


def _sent(store: Store, ids: list[str], now: int, counts: dict[str, int]) -> None:
    if ids:
        with store.write() as conn:
            queries.mark_sent(conn, ids, now)
        counts["sent"] += len(ids)
        ids.clear()


def _failed(store: Store, row: Any, error: str, now: int) -> None:
    attempts = row.attempts + 1
    status = "failed" if attempts >= MAX_ATTEMPTS else "pending"
    logger.warning("delivery %s on %s failed (attempt %d): %s", row.id, row.channel, attempts, error)
    with store.write() as conn:
        queries.mark_failed(
            conn, row.id, attempts=attempts, status=status, retry_at=now + backoff(attempts), error=error
        )
