"""Leases of in-flight idempotency keys: renewed while their process lives, released at once when it
died (see :mod:`svc_api.core.liveness`), so a client's retry after a crash proceeds instead of
answering "still being processed" for minutes.

Example:
    >>> from svc_api.core.idempotency import claim
    >>> _ = claim(store, "AB12CD", "k" * 16, "f1", 600, now=1_700_000_000)
    >>> renew_leases(store, now=1_700_000_000), release_dead(store)
    (1, 0)
"""

from __future__ import annotations

import logging
import threading
from typing import Any

import sqlalchemy as sa

from svc_api.core.liveness import HOLDER, LEASE_SECONDS, RENEW_EVERY, is_dead
from svc_api.core.store import Store, StoreUnavailable
from svc_api.core.tables import idempotency_keys

logger = logging.getLogger("svc_api.http")


def renew_leases(store: Store, *, holder: str = HOLDER, now: int) -> int:
    """Extend the leases of the in-flight keys ``holder`` works on; the number renewed.

    Example:
        >>> renew_leases(store, now=0), renew_leases(store, holder="elsewhere:1:1", now=0)
        (0, 0)
    """
    t = idempotency_keys.c
    with store.write() as conn:
        result = conn.execute(
            idempotency_keys.update()
            .where(t.holder == holder, t.state == "in_flight")
            .values(lease_until=now + LEASE_SECONDS)
        )
    return int(result.rowcount)


def release_dead(store: Store) -> int:
    """Delete the in-flight keys of processes of this host that died (on start-up): a retry under
    such a key proceeds at once. The number released.

    Example:
        >>> release_dead(store)
        0
    """
    t = idempotency_keys.c
    with store.write() as conn:
        rows = conn.execute(sa.select(t.principal, t.key, t.holder).where(t.state == "in_flight")).all()
        dead = [(r.principal, r.key) for r in rows if is_dead(r.holder)]
        for principal, key in dead:
            conn.execute(idempotency_keys.delete().where(t.principal == principal, t.key == key))
    return len(dead)


class LeaseWorker:
    """Renews this process's idempotency leases every ``RENEW_EVERY`` seconds while it lives, and
    releases the keys of dead processes when it starts.

    Example:
        >>> LeaseWorker(None).name
        'idempotency_leases'
    """

    name = "idempotency_leases"

    def __init__(self, services: Any) -> None:
        self.services = services
        self.renewed = 0
        self.released = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        """Release dead processes' keys now, then renew in a daemon thread."""
        try:
            self.released = release_dead(self.services.store)
        except StoreUnavailable:
            logger.warning("idempotency keys of dead processes not released: store unavailable")
        self._thread = threading.Thread(target=self._run, name="svc-idempotency-leases", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop renewing."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(5)

    def health(self) -> dict[str, Any]:
        """``running`` with the keys released at start and renewed last."""
        alive = self._thread is not None and self._thread.is_alive()
        state = "running" if alive else "stopped"
        return {"state": state, "released": self.released, "renewed": self.renewed}

    def run_once(self) -> int:
        """Renew this process's leases now."""
        self.renewed = renew_leases(self.services.store, now=self.services.clock.now())
        return self.renewed

    def _run(self) -> None:
        while not self._stop.wait(RENEW_EVERY):
            try:
                self.run_once()
            except StoreUnavailable as exc:
                logger.warning("idempotency leases not renewed: %s", exc)


__all__ = ["LeaseWorker", "release_dead", "renew_leases"]
