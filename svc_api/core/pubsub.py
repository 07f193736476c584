"""Publish and subscribe for real-time channels: events published anywhere in a process (a backtest
thread, the signal worker) reach the sockets subscribed to their topic, in this process and, with
``REDIS_URL``, in every process sharing that Redis (Redis pub/sub carries them).

A hub is registered for its database URL, so that domain code holding only a connection can
publish (:func:`publish`); publishing never raises: a lost real-time event leaves the durable
state (jobs, signals, notifications) as it was.

Example:
    >>> import asyncio
    >>> hub = Hub()
    >>> async def roundtrip():
    ...     sub = hub.subscribe("user:AB12CD", asyncio.get_running_loop())
    ...     hub.publish("user:AB12CD", {"event": "progress"})
    ...     return await asyncio.wait_for(sub.queue.get(), 1)
    >>> asyncio.run(roundtrip())
    '{"event": "progress"}'
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import threading
import weakref
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy.engine import Connection

from svc_api.core.store import after_commit

logger = logging.getLogger(__name__)

QUEUE_SIZE = 256
"""Messages a slow socket may have waiting; later ones are dropped for it (it reads state again)."""
CLOSE = ""
"""Put on a subscriber's queue when the fan-out between processes is lost: its socket would hear only
this process's events, so it is closed and the client reconnects once the fan-out is back."""
_HUBS: dict[str, list[Hub]] = {}
_HUBS_LOCK = threading.Lock()


@dataclass(eq=False)
class Subscriber:
    """One socket's subscription: messages arrive on ``queue`` in its event loop."""

    topic: str
    loop: asyncio.AbstractEventLoop
    queue: asyncio.Queue[str] = field(default_factory=lambda: asyncio.Queue(QUEUE_SIZE))


class Hub:
    """Topics to subscribers; Redis pub/sub between processes when ``redis_url`` is given."""

    def __init__(self, redis_url: str | None = None, prefix: str = "svc-rt") -> None:
        self.prefix = prefix
        self._subs: dict[str, set[Subscriber]] = {}
        self._lock = threading.Lock()
        self._redis_url = redis_url
        self._redis: Any = None
        self._listeners: dict[asyncio.AbstractEventLoop, asyncio.Task[None]] = {}
        self._held = 0
        # False from the moment the Redis listener fails until it is subscribed again
        self.fanout_up = True
        if redis_url:
            import redis

            self._redis = redis.Redis.from_url(redis_url, socket_timeout=2)

    @property
    def connections(self) -> int:
        """Subscriptions held in this process."""
        with self._lock:
            return sum(len(s) for s in self._subs.values())

    def claim(self, limit: int) -> bool:
        """Hold one of the ``limit`` socket places of this process, from the handshake on (a socket
        still authenticating counts); False when every place is held. :meth:`release` gives it back.

        Example:
            >>> hub = Hub()
            >>> hub.claim(1), hub.claim(1), hub.release(), hub.claim(1)
            (True, False, None, True)
        """
        with self._lock:
            if self._held >= limit:
                return False
            self._held += 1
            return True

    def release(self) -> None:
        """Give back a place taken with :meth:`claim`."""
        with self._lock:
            self._held -= 1

    def subscribe(self, topic: str, loop: asyncio.AbstractEventLoop) -> Subscriber:
        """A new subscription to ``topic`` delivered in ``loop``."""
        sub = Subscriber(topic, loop)
        with self._lock:
            self._subs.setdefault(topic, set()).add(sub)
        if self._redis_url and loop not in self._listeners:
            self._listeners[loop] = loop.create_task(self._listen(loop))
        return sub

    def unsubscribe(self, sub: Subscriber) -> None:
        """End a subscription."""
        with self._lock:
            self._subs.get(sub.topic, set()).discard(sub)

    def publish(self, topic: str, message: dict[str, Any]) -> None:
        """Send ``message`` to the subscribers of ``topic`` (through Redis when configured)."""
        data = json.dumps(message, default=str)
        if self._redis is not None:
            try:
                self._redis.publish(f"{self.prefix}:{topic}", data)
                return
            except Exception:  # Redis down: at least this process's sockets hear of it
                logger.warning("real-time event not published to Redis", exc_info=True)
        self._dispatch(topic, data)

    def _dispatch(self, topic: str, data: str) -> None:
        with self._lock:
            subs = list(self._subs.get(topic, ()))
        for sub in subs:
            with contextlib.suppress(RuntimeError):  # its loop has closed
                sub.loop.call_soon_threadsafe(_offer, sub.queue, data)

    async def _listen(self, loop: asyncio.AbstractEventLoop) -> None:
        import redis.asyncio as aioredis

        while True:
            try:
                client = aioredis.Redis.from_url(str(self._redis_url))
                async with client.pubsub() as pubsub:
                    await pubsub.psubscribe(f"{self.prefix}:*")
                    self.fanout_up = True
                    async for message in pubsub.listen():
                        if message.get("type") == "pmessage":
                            topic = message["channel"].decode().split(":", 1)[1]
                            self._dispatch(topic, message["data"].decode())
            except asyncio.CancelledError:
                raise
            except Exception:
                logger.warning("real-time Redis listener failed; retrying", exc_info=True)
                self.fanout_up = False
                self._close_all(loop)
                await asyncio.sleep(1)

    def _close_all(self, loop: asyncio.AbstractEventLoop) -> None:
        """Tell every subscriber of ``loop`` to close (see :data:`CLOSE`); runs in that loop."""
        with self._lock:
            subs = [sub for topic in self._subs.values() for sub in topic if sub.loop is loop]
        for sub in subs:
            if sub.queue.full():  # the close must get through: drop the oldest message instead
                sub.queue.get_nowait()
            sub.queue.put_nowait(CLOSE)

    def close(self) -> None:
        """Stop the Redis listeners."""
        for task in self._listeners.values():
            task.cancel()
        self._listeners.clear()


def _offer(queue: asyncio.Queue[str], data: str) -> None:
    with contextlib.suppress(asyncio.QueueFull):
        queue.put_nowait(data)


def register(database_url: str, hub: Hub) -> None:
    """Add ``hub`` to those :func:`publish` uses for connections to ``database_url`` (an operator
    command opening the same database in a server's process adds its own, and removes it on close)."""
    with _HUBS_LOCK:
        _HUBS.setdefault(database_url, []).append(hub)


def unregister(hub: Hub) -> None:
    """Stop publishing on ``hub``."""
    with _HUBS_LOCK:
        for hubs in _HUBS.values():
            while hub in hubs:
                hubs.remove(hub)


def publish(conn_or_url: Any, topic: str, message: dict[str, Any]) -> None:
    """Publish on the hub of a connection's (or a store's, or a URL's) database; nothing when none
    is registered. Given a connection inside a transaction, the event goes out after the commit,
    and not at all if the transaction rolls back (:func:`svc_api.core.store.after_commit`).

    Example:
        >>> publish("sqlite:///nowhere.db", "user:AB12CD", {"event": "x"})  # no hub: nothing happens
    """
    publish_many(conn_or_url, [(topic, message)])


def publish_many(conn_or_url: Any, events: Sequence[tuple[str, dict[str, Any]]]) -> None:
    """:func:`publish` of many ``(topic, message)`` events, after one commit (a signal to thousands
    of subscribers is one callback, not thousands).

    Example:
        >>> publish_many("sqlite:///nowhere.db", [("user:AB12CD", {"event": "x"})])
    """
    if not events:
        return
    url = conn_or_url if isinstance(conn_or_url, str) else _url_of(conn_or_url.engine)  # or a Store
    if isinstance(conn_or_url, Connection):
        after_commit(conn_or_url, lambda: _publish_now(url, events))
    else:
        _publish_now(url, events)


_URLS: weakref.WeakKeyDictionary[Any, str] = weakref.WeakKeyDictionary()


def _url_of(engine: Any) -> str:
    # Rendering a URL quotes each part: tens of microseconds, once per engine rather than per event.
    url = _URLS.get(engine)
    if url is None:
        url = _URLS[engine] = engine.url.render_as_string(hide_password=False)
    return url


def _publish_now(url: str, events: Sequence[tuple[str, dict[str, Any]]]) -> None:
    with _HUBS_LOCK:
        hubs = list(_HUBS.get(url, ()))
    for hub in hubs:
        for topic, message in events:
            try:
                hub.publish(topic, message)
            except Exception:
                logger.warning("real-time event %s not published", topic, exc_info=True)


def user_topic(svc_id: str) -> str:
    """The topic of one account's events.

    Example:
        >>> user_topic("AB12CD")
        'user:AB12CD'
    """
    return f"user:{svc_id}"
