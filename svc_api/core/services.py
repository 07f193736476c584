"""What every handler may use: settings, the store (migrated on first use), small caches.

Example:
    >>> from svc_api.settings import Settings
    >>> services = Services(Settings(database_url="sqlite:///:memory:", secret_key=b"k" * 32))
    >>> services.store.ping()
    True
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from svc_api.core import pubsub
from svc_api.core.clock import Clock, WallClock
from svc_api.core.pubsub import Hub
from svc_api.core.store import Store, StoreUnavailable
from svc_api.settings import Settings

logger = logging.getLogger("svc_api")


class Services:
    """Shared state of one app: created by ``create_app``, opened and closed by its lifespan.

    The store is migrated when the app starts; if the database is down then, the first request
    that needs it migrates it (and gets a 503 while it is still down).
    """

    def __init__(
        self,
        settings: Settings,
        *,
        migrate: Callable[[Store], Any] | None = None,
        clock: Clock | None = None,
    ) -> None:
        self.settings = settings
        self.clock: Clock = WallClock() if clock is None else clock
        self._migrate = migrate
        self.workers: Any = None
        self._store: Store | None = None
        self._migrated = False
        self._lock = threading.Lock()
        self._cache: dict[str, tuple[float, Any]] = {}
        self.hub = Hub(settings.redis_url)

    @property
    def store(self) -> Store:
        """The migrated store (raises :class:`StoreUnavailable` while the database is unreachable).

        Example:
            >>> Services(Settings(database_url="sqlite://", secret_key=b"k" * 32)).store.dialect
            'sqlite'
        """
        if not self._migrated:
            self.open()
        if self._store is None:
            raise StoreUnavailable("store not opened", self.settings.store_retry_after)
        return self._store

    def open(self) -> None:
        """Create the engine and apply pending migrations (idempotent, thread-safe)."""
        with self._lock:
            if self._store is None:
                self._store = Store(self.settings.database_url, retry_after=self.settings.store_retry_after)
                # domain code holding a connection publishes real-time events on this hub
                pubsub.register(self._store.engine.url.render_as_string(hide_password=False), self.hub)
            if not self._migrated:
                applied = self._migrate(self._store) if self._migrate is not None else []
                if applied:
                    logger.info("applied migrations %s", applied)
                self._migrated = True

    def try_open(self) -> bool:
        """:meth:`open`, logging instead of raising when the database is down; True when ready.

        Example:
            >>> Services(Settings(database_url="sqlite://", secret_key=b"k" * 32)).try_open()
            True
        """
        try:
            self.open()
        except StoreUnavailable as exc:
            logger.warning("store unavailable at start-up (%s); retrying on first request", exc)
            return False
        return True

    def close(self) -> None:
        """Release the database connections and the real-time listeners."""
        self.hub.close()
        pubsub.unregister(self.hub)
        with self._lock:
            if self._store is not None:
                self._store.dispose()

    def cached(self, key: str, ttl: float, compute: Callable[[], Any]) -> Any:
        """``compute()``, remembered for ``ttl`` seconds under ``key``.

        Example:
            >>> s = Services(Settings(database_url="sqlite:///:memory:", secret_key=b"k" * 32))
            >>> s.cached("x", 60, lambda: 1), s.cached("x", 60, lambda: 2)
            (1, 1)
        """
        hit = self._cache.get(key)
        now = time.monotonic()
        if hit is not None and hit[0] > now:
            return hit[1]
        value = compute()
        self._cache[key] = (now + ttl, value)
        return value
