"""The counters behind the rate limiter: moving one-minute windows in process memory, or in Redis
shared by every instance (see :mod:`svc_api.core.ratelimit` for the policy and the middleware).

Example:
    >>> import asyncio, limits
    >>> counter = MemoryCounter()
    >>> item = limits.RateLimitItemPerMinute(1)
    >>> asyncio.run(counter.hit(item, "ip", "1.2.3.4"))[0], counter.hit_now(item, "ip", "1.2.3.4")[0]
    (True, False)
"""

from __future__ import annotations

import asyncio
import collections
import threading
import time
import weakref
from typing import Any, Protocol

import limits
import limits.aio.storage
import limits.aio.strategies
import limits.storage
import limits.strategies
from limits import RateLimitItem
from limits.util import WindowStats

from svc_api.core.clock import Clock, WallClock


class Counter(Protocol):
    """Counts hits of a moving window per identity."""

    counts_in_threads: bool

    async def hit(self, item: RateLimitItem, *identifiers: str) -> tuple[bool, WindowStats]: ...

    async def aclose(self) -> None: ...


class MemoryCounter:
    """Process-local moving windows: one deque of hit times per key, trimmed as it is read.

    The same moving-window rule as `limits`' ``MovingWindowRateLimiter``, without its memory
    storage: that storage starts a short-lived expiry thread (sync) or a thread-pool hop per key
    (async) every few milliseconds, and starting a thread blocks the event loop (measured at
    0.1-0.7 ms each on a loaded 2-core host). Here everything happens inline on the event loop,
    and keys idle for a whole window are dropped every ``_SWEEP_EVERY`` hits, so memory stays
    bounded by the callers of the last minute.
    """

    _SWEEP_EVERY = 4096

    counts_in_threads = True

    def __init__(self, clock: Clock | None = None) -> None:
        self._clock = clock or WallClock()
        self._hits: dict[str, collections.deque[float]] = {}
        self._window: dict[str, float] = {}
        self._calls = 0
        self._lock = threading.Lock()

    async def hit(self, item: RateLimitItem, *identifiers: str) -> tuple[bool, WindowStats]:
        return self.hit_now(item, *identifiers)

    def hit_now(self, item: RateLimitItem, *identifiers: str) -> tuple[bool, WindowStats]:
        """:meth:`hit` without the event loop, from any thread (request handlers count here)."""
        with self._lock:
            return self._hit(item, *identifiers)

    def _hit(self, item: RateLimitItem, *identifiers: str) -> tuple[bool, WindowStats]:
        window, now = float(item.get_expiry()), self._clock.seconds()
        key = f"{item.amount}/{window:g}/{'/'.join(identifiers)}"
        hits = self._hits.get(key)
        if hits is None:
            hits = self._hits[key] = collections.deque()
            self._window[key] = window
        while hits and hits[0] <= now - window:
            hits.popleft()
        allowed = len(hits) < item.amount
        if allowed:
            hits.append(now)
        self._calls += 1
        if self._calls % self._SWEEP_EVERY == 0:
            self._sweep(now)
        reset = hits[0] + window if hits else now + window
        return allowed, WindowStats(reset, item.amount - len(hits))

    def _sweep(self, now: float) -> None:
        idle = [k for k, hits in self._hits.items() if not hits or hits[-1] <= now - self._window[k]]
        for key in idle:
            del self._hits[key], self._window[key]

    async def aclose(self) -> None:
        return None


class RedisCounter:
    """Shared counters in Redis. A redis-py asyncio client belongs to one event loop, so one
    client is kept per running loop (one in production; several under test clients)."""

    counts_in_threads = False

    def __init__(self, url: str, key_prefix: str, timeout: float) -> None:
        self._url = "async+" + url
        self._prefix = key_prefix
        self._timeout = timeout
        self._by_loop: weakref.WeakKeyDictionary[
            asyncio.AbstractEventLoop, limits.aio.strategies.MovingWindowRateLimiter
        ] = weakref.WeakKeyDictionary()

    def _limiter(self) -> limits.aio.strategies.MovingWindowRateLimiter:
        loop = asyncio.get_running_loop()
        limiter = self._by_loop.get(loop)
        if limiter is None:
            storage = limits.aio.storage.RedisStorage(
                self._url,
                implementation="redispy",
                key_prefix=self._prefix,
                wrap_exceptions=True,
                socket_connect_timeout=self._timeout,
                socket_timeout=self._timeout,
            )
            limiter = limits.aio.strategies.MovingWindowRateLimiter(storage)
            self._by_loop[loop] = limiter
        return limiter

    async def hit(self, item: RateLimitItem, *identifiers: str) -> tuple[bool, WindowStats]:
        limiter = self._limiter()
        allowed = await limiter.hit(item, *identifiers)
        return allowed, await limiter.get_window_stats(item, *identifiers)

    async def aclose(self) -> None:
        limiter = self._by_loop.pop(asyncio.get_running_loop(), None)
        if limiter is not None:
            storage: Any = limiter.storage
            await storage.bridge.storage.aclose()


class Budget:
    """``amount`` events per moving window of ``window`` seconds per identifier, counted from a
    worker thread (a handler's), in process memory or in Redis shared by every instance. Unlike the
    per-request limiter it is asked and spent apart: a login asks first and spends only on failure.
    A Redis that cannot be reached raises ``limits.errors.StorageError`` (the caller fails closed).

    Example:
        >>> budget = Budget("demo", 2, 60)
        >>> budget.wait("a"), budget.spend("a"), budget.spend("a")
        (0.0, None, None)
        >>> budget.wait("a") > 0, budget.wait("b")
        (True, 0.0)
    """

    def __init__(
        self,
        name: str,
        amount: int,
        window: int,
        *,
        storage_url: str | None = None,
        key_prefix: str = "svc-ratelimit",
        timeout: float = 1.0,
    ) -> None:
        self.amount = amount
        self.item = limits.RateLimitItemPerSecond(amount, window, namespace=name)
        storage: limits.storage.Storage
        if not storage_url or storage_url.startswith("memory://"):
            storage = limits.storage.MemoryStorage()
        else:
            storage = limits.storage.RedisStorage(
                storage_url,
                key_prefix=key_prefix,
                wrap_exceptions=True,
                socket_connect_timeout=timeout,
                socket_timeout=timeout,
            )
        self._limiter = limits.strategies.MovingWindowRateLimiter(storage)

    def wait(self, *identifiers: str) -> float:
        """Seconds until one more event fits (0.0 when one fits now)."""
        if self._limiter.test(self.item, *identifiers):
            return 0.0
        reset = self._limiter.get_window_stats(self.item, *identifiers).reset_time
        return max(1.0, reset - time.time())  # the limits library's reset is wall time

    def spend(self, *identifiers: str) -> None:
        """Count one event."""
        self._limiter.hit(self.item, *identifiers)


def counter_for(
    storage_url: str | None, key_prefix: str, timeout: float, clock: Clock | None = None
) -> Counter:
    """The counter of a storage URL: None or ``memory://`` in process (on ``clock``, wall time by
    default), ``redis://...`` shared (on the limits library's wall time, the same in every process).

    Example:
        >>> type(counter_for(None, "p", 1.0)).__name__
        'MemoryCounter'
    """
    if not storage_url or storage_url.startswith("memory://"):
        return MemoryCounter(clock)
    if storage_url.startswith(("redis://", "rediss://", "redis+unix://")):
        return RedisCounter(storage_url, key_prefix, timeout)
    raise ValueError(f"unsupported rate-limit storage {storage_url!r}: use memory:// or redis://")


__all__ = ["Budget", "Counter", "MemoryCounter", "RedisCounter", "counter_for"]
