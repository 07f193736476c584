"""The background generation of strategies: compile each ``generating`` version to ``active`` or ``failed``.

Versions are claimed in the database (``claimed_by``, ``claimed_at``, ``attempts``), so several
worker threads and several processes share the work without doing a version twice. A claim not
finished within ``stale_after`` seconds was left by a crash: it is released for another attempt,
or, after :data:`MAX_ATTEMPTS` attempts, the version fails and its charge is refunded. That
recovery runs when a worker starts and then periodically.

A failed generation keeps the compiler's message, phrase, position and suggestion, and refunds the
upfront charge in full (ledger action ``strategy_refund``, once: the refund is keyed by the version's
``generation_id``).

Example:
    >>> outcome = compile_version({"entry_condition": "close is above SMA(50)", "tp_condition": "3%",
    ...     "sl_condition": None, "market_type": "spot", "position_side": "long",
    ...     "signal_mode": "signal_orders"})
    >>> outcome.status, outcome.candle_count
    ('active', 50)
"""

from __future__ import annotations

import json
import logging
import threading
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from svc_api.core.store import StoreUnavailable
from svc_api.credits import service as credits
from svc_api.strategies.tables import strategy_versions
from svc_engine.strategy import StrategyCompileError, compile_strategy

logger = logging.getLogger("svc_api.generation")

MAX_ATTEMPTS = 3
STALE_AFTER = 30
_INTERRUPTED = "generation was interrupted repeatedly; the credit was refunded, edit the strategy to retry"


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


@dataclass(frozen=True)
class Outcome:
    """The result of compiling one version: ``active`` with the program, or ``failed`` with the error.

    Example:
        >>> Outcome("failed", error={"message": "x"}).program_json is None
        True
    """

    status: str
    program_json: str | None = None
    candle_count: int | None = None
    error: dict[str, Any] | None = None


def compile_version(fields: Mapping[str, Any]) -> Outcome:
    """Compile the conditions and settings of a version with the engine.

    Example:
        >>> out = compile_version({"entry_condition": "the moon is full", "tp_condition": None,
        ...     "sl_condition": None, "market_type": "spot", "position_side": "long",
        ...     "signal_mode": "signal_only"})
        >>> out.status, out.error["phrase"], out.error["suggestion"]
        ('failed', 'moon', 'moving')
    """
    try:
        program = compile_strategy(
            fields["entry_condition"],
            fields["tp_condition"],
            fields["sl_condition"],
            market_type=fields["market_type"],
            position_side=fields["position_side"],
            signal_mode=fields["signal_mode"],
        )
        return Outcome("active", program.to_json(), int(program.candle_count))
    except StrategyCompileError as exc:
        error = {
            "message": str(exc),
            "phrase": exc.phrase,
            "position": exc.position,
            "suggestion": exc.suggestion,
            "field": f"{exc.field}_condition" if exc.field else "",
        }
        return Outcome("failed", error=error)
    except Exception:
        # A compiler defect must not leave the version generating forever nor keep the credit.
        logger.exception("strategy compiler failed unexpectedly")
        return Outcome("failed", error={"message": "the conditions could not be compiled", "phrase": ""})


@dataclass(frozen=True)
class Claim:
    """A version taken by one worker.

    Example:
        >>> Claim("AB12CD", "rsidip", 1, "g" * 32, "w1", {}).version
        1
    """

    svc_id: str
    name: str
    version: int
    generation_id: str
    worker: str
    fields: dict[str, Any]


def claim_next(conn: Connection, worker: str, *, now: int | None = None) -> Claim | None:
    """Take the oldest unclaimed ``generating`` version for ``worker`` (None when there is none).

    Example:
        >>> from svc_api.core.store import Store
        >>> from svc_api.migrations import migrate
        >>> store = Store("sqlite:///:memory:"); _ = migrate(store)
        >>> with store.write() as conn:
        ...     claim_next(conn, "w1") is None
        True
    """
    now = int(time.time()) if now is None else now
    v = strategy_versions.c
    query = (
        sa.select(strategy_versions)
        .where(v.status == "generating", v.claimed_by.is_(None))
        .order_by(v.created_at, v.generation_id)
        .limit(1)
        .with_for_update(skip_locked=True)
    )
    row = conn.execute(query).first()
    if row is None:
        return None
    taken = conn.execute(
        strategy_versions.update()
        .where(v.generation_id == row.generation_id, v.status == "generating", v.claimed_by.is_(None))
        .values(claimed_by=worker, claimed_at=now, attempts=v.attempts + 1)
    ).rowcount
    if taken != 1:
        return None
    names = ("entry_condition", "tp_condition", "sl_condition", "market_type", "position_side", "signal_mode")
    return Claim(
        row.svc_id, row.name, int(row.version), row.generation_id, worker, {n: getattr(row, n) for n in names}
    )


def finish(conn: Connection, claim: Claim, outcome: Outcome, *, now: int | None = None) -> bool:
    """Store the outcome of a claim; a failure refunds the charge. False when the claim was lost
    (the strategy was deleted, or the claim went stale and was taken over).

    Example:
        >>> from svc_api.core.store import Store
        >>> from svc_api.migrations import migrate
        >>> store = Store("sqlite:///:memory:"); _ = migrate(store)
        >>> with store.write() as conn:
        ...     finish(conn, Claim("AB12CD", "rsidip", 1, "g" * 32, "w1", {}), Outcome("active", "{}", 1))
        False
    """
    now = int(time.time()) if now is None else now
    v = strategy_versions.c
    values: dict[str, Any] = {
        "status": outcome.status,
        "program_json": outcome.program_json,
        "candle_count": outcome.candle_count,
        "error": None if outcome.error is None else json.dumps(outcome.error),
        "claimed_by": None,
        "updated_at": now,
    }
    done = conn.execute(
        strategy_versions.update()
        .where(v.generation_id == claim.generation_id, v.status == "generating", v.claimed_by == claim.worker)
        .values(**values)
    ).rowcount
    if done != 1:
        return False
    if outcome.status == "failed":
        _refund(conn, claim.generation_id)
    return True


def recover(
    conn: Connection,
    *,
    now: int | None = None,
    stale_after: int = STALE_AFTER,
    max_attempts: int = MAX_ATTEMPTS,
) -> dict[str, int]:
    """Release claims older than ``stale_after`` seconds; fail and refund those out of attempts.

    Returns ``{"retried": n, "failed": m}``.

    Example:
        >>> from svc_api.core.store import Store
        >>> from svc_api.migrations import migrate
        >>> store = Store("sqlite:///:memory:"); _ = migrate(store)
        >>> with store.write() as conn:
        ...     recover(conn)
        {'retried': 0, 'failed': 0}
    """
    now = int(time.time()) if now is None else now
    v = strategy_versions.c
    stale = conn.execute(
        sa.select(v.generation_id, v.attempts).where(
            v.status == "generating", v.claimed_by.is_not(None), v.claimed_at < now - stale_after
        )
    ).all()
    counts = {"retried": 0, "failed": 0}
    for generation_id, attempts in stale:
        match = (v.generation_id == generation_id) & (v.status == "generating") & v.claimed_by.is_not(None)
        if attempts >= max_attempts:
            error = json.dumps({"message": _INTERRUPTED, "phrase": ""})
            values: dict[str, Any] = {
                "status": "failed",
                "error": error,
                "claimed_by": None,
                "updated_at": now,
            }
        else:
            values = {"claimed_by": None, "claimed_at": None}
        if conn.execute(strategy_versions.update().where(match).values(**values)).rowcount != 1:
            continue
        if attempts >= max_attempts:
            _refund(conn, generation_id)
            counts["failed"] += 1
        else:
            counts["retried"] += 1
    return counts


def _refund(conn: Connection, generation_id: str) -> None:
    v = strategy_versions.c
    row = conn.execute(sa.select(strategy_versions).where(v.generation_id == generation_id)).first()
    if row is None or row.refunded or row.cost_units <= 0:
        return
    credits.refund_credits(
        conn,
        row.svc_id,
        credits.from_units(row.cost_units),
        "strategy_refund",
        f"Refund: generation of {row.name} v{row.version} failed",
        idempotency_key=f"strategy-refund-{generation_id}",
    )
    conn.execute(strategy_versions.update().where(v.generation_id == generation_id).values(refunded=True))


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
            claim = claim_next(conn, worker)
        if claim is None:
            return False
        outcome = compile_version(claim.fields)
        with store.write() as conn:
            finish(conn, claim, outcome)
        return True

    def _recover_if_due(self, store: Any) -> None:
        with self._lock:
            if time.monotonic() < self._next_recovery:
                return
            self._next_recovery = time.monotonic() + self.recover_every
        with store.write() as conn:
            counts = recover(conn, stale_after=self.stale_after)
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
