"""Per-account rate-limit overrides: set and cleared by an operator (``svc admin rate-limit``), read
by the rate limiter through :class:`OverrideCache`.

An override replaces, for one account, either its plan's limit (``endpoint`` ``default``; a session
still gets the first-party factor on top, as with plans) or the limit of one costly kind of request
(``backtest_launch``, ``key_generation``, ``checkout``: :data:`~svc_api.core.ratelimit.ENDPOINT_LIMITS`).
The server reads the whole (small) table every :data:`REFRESH_SECONDS` in a background thread, so a
change applies within that time everywhere, without a restart; the ``X-RateLimit-*`` headers of each
response tell the limit that applied.

Example:
    >>> set_override(store, "NOPE00", 100, endpoint="default", reason="x", now=0)
    Traceback (most recent call last):
    ...
    svc_api.core.errors.NotFound: unknown account NOPE00
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any

import sqlalchemy as sa

from svc_api.core.errors import Invalid, NotFound
from svc_api.core.ratelimit import ENDPOINT_LIMITS
from svc_api.core.store import Store
from svc_api.limits import queries

logger = logging.getLogger(__name__)

ENDPOINTS = ("default", *ENDPOINT_LIMITS)
"""What an override can apply to: every request of the account, or one endpoint group."""
REFRESH_SECONDS = 5.0
"""How often a server reads the overrides again (a change applies within this time)."""
MAX_PER_MINUTE = 1_000_000


def set_override(
    store: Store, svc_id: str, per_minute: int, *, endpoint: str, reason: str, now: int
) -> dict[str, Any]:
    """Set the per-minute limit of ``svc_id`` for ``endpoint``; the override as stored.

    Example:
        >>> from svc_api.core.store import Store
        >>> set_override(Store("sqlite:///:memory:"), "AB12CD", 0, endpoint="default", reason="x", now=0)
        Traceback (most recent call last):
        ...
        svc_api.core.errors.Invalid: the limit must be 1-1000000 requests a minute, got 0
    """
    if endpoint not in ENDPOINTS:
        raise Invalid(f"endpoint must be one of {', '.join(ENDPOINTS)}, got {endpoint!r}")
    whole = isinstance(per_minute, int) and not isinstance(per_minute, bool)
    if not whole or not 1 <= per_minute <= MAX_PER_MINUTE:
        raise Invalid(f"the limit must be 1-{MAX_PER_MINUTE} requests a minute, got {per_minute!r}")
    if not reason.strip():
        raise Invalid("a reason is required")
    values = {
        "svc_id": svc_id,
        "endpoint": endpoint,
        "per_minute": per_minute,
        "reason": reason[:500],
        "set_at": now,
    }
    try:
        with store.write() as conn:
            queries.put(conn, values)
    except sa.exc.IntegrityError:  # the account's foreign key: no such account
        raise NotFound(f"unknown account {svc_id}") from None
    return values


def clear_override(store: Store, svc_id: str, *, endpoint: str | None) -> dict[str, Any]:
    """Remove an account's override for ``endpoint`` (all of them when None): back to the defaults."""
    if endpoint is not None and endpoint not in ENDPOINTS:
        raise Invalid(f"endpoint must be one of {', '.join(ENDPOINTS)}, got {endpoint!r}")
    with store.write() as conn:
        removed = queries.delete(conn, svc_id, endpoint)
    return {"svc_id": svc_id, "removed": removed}


def show(store: Store, svc_id: str) -> dict[str, Any]:
    """An account's overrides."""
    with store.read() as conn:
        rows = queries.of_account(conn, svc_id)
    fields = ("endpoint", "per_minute", "reason", "set_at")
    return {"svc_id": svc_id, "overrides": [{name: getattr(r, name) for name in fields} for r in rows]}


_NONE: Mapping[str, int] = MappingProxyType({})


class OverrideCache:
    """Every override in memory, read again in a background thread once :data:`REFRESH_SECONDS` have
    passed, so the limiter never waits for the database (on the event loop or in a handler). A store
    that cannot be read keeps the last overrides known.

    Example:
        >>> cache = OverrideCache(lambda: store); cache.refresh()
        >>> dict(cache.get("AB12CD"))
        {}
    """

    def __init__(self, store: Callable[[], Store], refresh_seconds: float = REFRESH_SECONDS) -> None:
        self.store = store  # a getter: the store is opened (and migrated) on first use, not here
        self.refresh_seconds = refresh_seconds
        self._by_account: dict[str, Mapping[str, int]] = {}
        self._loaded_at = float("-inf")
        self._loading = threading.Lock()

    def get(self, svc_id: str) -> Mapping[str, int]:
        """The overrides of ``svc_id`` (endpoint -> per minute), as last read."""
        stale = time.monotonic() - self._loaded_at > self.refresh_seconds
        if stale and self._loading.acquire(blocking=False):
            threading.Thread(target=self._refresh_locked, name="rate-limit-overrides", daemon=True).start()
        return self._by_account.get(svc_id, _NONE)

    def refresh(self) -> None:
        """Read every override now (in the calling thread)."""
        with self._loading:
            self._load()

    def _refresh_locked(self) -> None:
        try:
            self._load()
        finally:
            self._loading.release()

    def _load(self) -> None:
        try:
            with self.store().read() as conn:
                rows = queries.all_overrides(conn)
        except Exception as exc:  # StoreUnavailable, or a store not migrated yet: try again later
            logger.warning("rate-limit overrides not read (%s); keeping the last known", exc)
            self._loaded_at = time.monotonic()
            return
        by_account: dict[str, dict[str, int]] = {}
        for svc_id, endpoint, per_minute in rows:
            by_account.setdefault(svc_id, {})[endpoint] = per_minute
        self._by_account = {k: MappingProxyType(v) for k, v in by_account.items()}
        self._loaded_at = time.monotonic()
