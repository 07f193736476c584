"""The one lifecycle of background work: a small :class:`Worker` protocol and a :class:`Registry`.

Every background loop of the service (strategy generation, the backtest job runner, the trend
refresh, and the signal worker, schedulers, outbox and reconcilers to come) is a worker: ``start``
and ``stop`` it, ask its ``health``, or, in tests, ``run_once`` instead of starting threads. Domains
provide a factory ``(services) -> Worker | None`` (None when settings switch it off); the app
registers the factories in one place (:mod:`svc_api.workers`). ``svc serve`` runs them in each
server process, ``svc worker`` in a process of their own.

Example:
    >>> class Tick:
    ...     name = "tick"
    ...     def __init__(self): self.runs = 0
    ...     def start(self): pass
    ...     def stop(self): pass
    ...     def health(self): return {"state": "running", "runs": self.runs}
    ...     def run_once(self): self.runs += 1; return self.runs
    >>> registry = Registry()
    >>> registry.register("tick", lambda services: Tick())
    >>> running = registry.start(services=None)
    >>> running.run_once("tick"), running.health()
    (1, {'tick': {'state': 'running', 'runs': 1}})
    >>> running.stop()
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any, Protocol, runtime_checkable

logger = logging.getLogger("svc_api.workers")


@runtime_checkable
class Worker(Protocol):
    """Background work with a lifecycle.

    ``health()`` returns a JSON-ready dict with at least ``state`` (``running``, ``stopped`` or
    ``failing``); ``run_once()`` does one unit of the work in the calling thread.
    """

    name: str

    def start(self) -> None: ...

    def stop(self) -> None: ...

    def health(self) -> dict[str, Any]: ...

    def run_once(self) -> Any: ...


Factory = Callable[[Any], Worker | None]


class Running:
    """The workers one :meth:`Registry.start` call started, in start order.

    Example:
        >>> Running([]).health()
        {}
    """

    def __init__(self, workers: list[Worker]) -> None:
        self.workers = workers

    def get(self, name: str) -> Worker:
        """The running worker called ``name`` (KeyError when it is not running)."""
        for worker in self.workers:
            if worker.name == name:
                return worker
        raise KeyError(name)

    def run_once(self, name: str) -> Any:
        """One unit of the named worker's work, in this thread."""
        return self.get(name).run_once()

    def health(self) -> dict[str, dict[str, Any]]:
        """Each worker's health; a worker whose health check raises reports ``failing``."""
        out: dict[str, dict[str, Any]] = {}
        for worker in self.workers:
            try:
                out[worker.name] = worker.health()
            except Exception as exc:
                out[worker.name] = {"state": "failing", "error": type(exc).__name__}
        return out

    def stop(self) -> None:
        """Stop every worker, last started first; a failing stop is logged and the rest still stop."""
        for worker in reversed(self.workers):
            try:
                worker.stop()
            except Exception:
                logger.exception("worker %s did not stop cleanly", worker.name)
        self.workers = []


class Registry:
    """Named worker factories, started together.

    Example:
        >>> Registry().names()
        []
    """

    def __init__(self) -> None:
        self._factories: dict[str, Factory] = {}

    def register(self, name: str, factory: Factory) -> None:
        """Add a factory; a name registered twice is an error."""
        if name in self._factories:
            raise ValueError(f"worker {name!r} is registered twice")
        self._factories[name] = factory

    def names(self) -> list[str]:
        """The registered names, in registration order."""
        return list(self._factories)

    def start(self, services: Any, only: set[str] | None = None) -> Running:
        """Build and start each worker (those in ``only`` when given); a factory returning None is
        switched off by its settings. A worker that fails to start is logged and left out."""
        started: list[Worker] = []
        for name, factory in self._factories.items():
            if only is not None and name not in only:
                continue
            try:
                worker = factory(services)
                if worker is None:
                    continue
                worker.start()
            except Exception:
                logger.exception("worker %s did not start", name)
                continue
            started.append(worker)
        return Running(started)


class Periodic:
    """A worker that calls ``work()`` every ``every`` seconds in a daemon thread, logging (not
    dying of) its failures; ``run_once`` calls it in the caller's thread.

    Example:
        >>> calls = []
        >>> p = Periodic("tick", 60.0, lambda: calls.append(1) or len(calls))
        >>> p.run_once(), p.health()["state"], p.health()["runs"]
        (1, 'stopped', 1)
    """

    def __init__(self, name: str, every: float, work: Callable[[], Any]) -> None:
        self.name = name
        self.every = every
        self.work = work
        self.runs = 0
        self.failures = 0
        self.last: Any = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        """Run ``work`` now and then every ``every`` seconds until stopped."""
        self._thread = threading.Thread(target=self._loop, name=f"svc-{self.name}", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop after the current run."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(30)

    def health(self) -> dict[str, Any]:
        """``running`` (``failing`` after a failed run) with the count of runs and failures."""
        alive = self._thread is not None and self._thread.is_alive()
        state = ("failing" if self.failures and self.last is None else "running") if alive else "stopped"
        return {"state": state, "runs": self.runs, "failures": self.failures, "last": self.last}

    def run_once(self) -> Any:
        """One run in the calling thread."""
        self.last = self.work()
        self.runs += 1
        return self.last

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                self.run_once()
            except Exception:
                self.failures += 1
                self.last = None
                logger.exception("worker %s failed; retrying in %s s", self.name, self.every)
            self._stop.wait(self.every)
