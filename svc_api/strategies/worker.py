"""The generation worker: a few threads of one app compiling the ``generating`` versions of its store.

Routes wake the threads of their process with :func:`notify` after the transaction that queued a
version commits; other processes find the work at their next poll.

Example:
    >>> notify()
    >>> GenerationWorker.name
    'strategy_generation'
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from typing import Any

from svc_api.core.store import StoreUnavailable
from svc_api.strategies.generation import STALE_AFTER, claim_next, compile_version, finish, recover

logger = logging.getLogger("svc_api.generation")


class _Wakeup:
    """Wakes idle workers of this process when a generation is queued (no lost wake-ups)."""

    def __init__(self) -> None:
        self.cond = threading.Condition()
        self.count = 0

    def notify(self) -> None:
        with self.cond:
            self.count += 1
            self.cond.notify_all()

    def wait(self, seen: int, timeout: float, stopping: threading.Event) -> None:
        with self.cond:
            self.cond.wait_for(lambda: self.count != seen or stopping.is_set(), timeout)


_WAKEUP = _Wakeup()


def notify() -> None:
    """Tell the workers of this process that a version is waiting (call after the commit).

    Example:
        >>> notify()
    """
    _WAKEUP.notify()


class GenerationWorker:
    """A few threads compiling the ``generating`` versions of one app's store.

    Started and stopped by the app's lifespan. ``SVC_GENERATION_THREADS`` sets the number of
    threads (default 2; 0 runs none, leaving the work to other processes).

    Example:
        >>> from svc_api.core.services import Services
        >>> from svc_api.settings import Settings
        >>> settings = Settings(database_url="sqlite:///:memory:", secret_key=b"k" * 32)
        >>> from svc_api.migrations import migrate
        >>> worker = GenerationWorker(Services(settings, migrate=migrate))
        >>> worker.start(); worker.step(); worker.stop()
        False
    """

    def __init__(
        self,
        services: Any,
        *,
        threads: int | None = None,
        poll_seconds: float = 1.0,
        stale_after: int = STALE_AFTER,
        recover_every: float = 10.0,
    ) -> None:
        self.services = services
        self.threads = services.settings.generation_threads if threads is None else threads
        self.poll_seconds = poll_seconds
        self.stale_after = stale_after
        self.recover_every = recover_every
        self._stopping = threading.Event()
        self._running: list[threading.Thread] = []
        self._next_recovery = 0.0
        self._lock = threading.Lock()
        self._id = uuid.uuid4().hex[:12]

    name = "strategy_generation"

    def health(self) -> dict[str, Any]:
        """``running`` with the live thread count, or ``stopped``."""
        alive = sum(t.is_alive() for t in self._running)
        state = "running" if alive or self.threads == 0 else "stopped"
        return {"state": state, "threads": alive}

    def run_once(self) -> bool:
        """Compile one waiting version in this thread (see :meth:`step`)."""
        return self.step()

    def start(self) -> None:
        """Start the threads (recovery of interrupted generations runs first in each loop)."""
        self._stopping.clear()
        for i in range(self.threads):
            thread = threading.Thread(target=self._run, args=(f"{self._id}-{i}",), daemon=True)
            thread.name = f"svc-generation-{i}"
            thread.start()
            self._running.append(thread)

    def stop(self, timeout: float = 10.0) -> None:
        """Stop the threads and wait for them (a compilation in progress finishes first)."""
        self._stopping.set()
        notify()
        for thread in self._running:
            thread.join(timeout)
        self._running.clear()

    def step(self, worker: str | None = None) -> bool:
        """Recover if due, then compile one waiting version; True when one was processed."""
        worker = worker or f"{self._id}-x"
        store = self.services.store
        self._recover_if_due(store)
        with store.write() as conn:
            claim = claim_next(conn, worker, now=self.services.clock.now())
        if claim is None:
            return False
        outcome = compile_version(claim.fields)
        with store.write() as conn:
            finish(conn, claim, outcome, now=self.services.clock.now())
        return True

    def _recover_if_due(self, store: Any) -> None:
        with self._lock:
            if time.monotonic() < self._next_recovery:
                return
            self._next_recovery = time.monotonic() + self.recover_every
        with store.write() as conn:
            counts = recover(conn, stale_after=self.stale_after, now=self.services.clock.now())
        if any(counts.values()):
            logger.warning("interrupted strategy generations: %s", counts)

    def _run(self, worker: str) -> None:
        while not self._stopping.is_set():
            seen = _WAKEUP.count
            try:
                worked = self.step(worker)
            except StoreUnavailable as exc:
                logger.warning("generation worker: store unavailable (%s)", exc)
                worked = False
            except Exception:
                logger.exception("generation worker: unexpected failure")
                worked = False
            if not worked:
                _WAKEUP.wait(seen, self.poll_seconds, self._stopping)
