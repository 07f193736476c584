"""The backtest job runner: a thread pool of the app that runs the engine's drivers.

A launch writes a ``backtest_jobs`` row (credits charged) and hands a :class:`Work` to
:meth:`JobRunner.submit`. A runner thread calls the engine (``svc_engine.sim.backtest``,
``full_range`` or ``portfolio``) on the engine's executor (:class:`~svc_engine.executors.LocalExecutor`,
or :class:`~svc_engine.executors.RayExecutor` at ``settings.ray_address``), writes its progress
events to the row, stores ``result.to_dict()`` in the object store and marks the row ``completed``
with a ``backtest_complete`` notification, all in one transaction. Any failure marks it ``failed``
and refunds the credits in the same transaction (idempotently: ``refund:<job_id>``).

Crash recovery: the runner refreshes ``heartbeat_at`` of its jobs every ``heartbeat_seconds``; at
start-up and at every heartbeat, ``running`` rows whose heartbeat is older than ``stale_seconds``
(their process died) are failed and refunded. Configuration: :mod:`.config`; what a job runs and
keeps: :mod:`.execution`, :mod:`.progress`, :mod:`.artifacts`.

Example:
    >>> adaptive_limit(4, busy=0.0), adaptive_limit(4, busy=1.0), adaptive_limit(1, busy=1.0)
    (4, 2, 1)
"""

from __future__ import annotations

import functools
import json
import logging
import threading
import time
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any

from svc_api.backtests import queries
from svc_api.backtests.artifacts import coin_key, put_all, result_key
from svc_api.backtests.config import CapacityExceeded, RunnerConfig, adaptive_limit, others_load
from svc_api.backtests.execution import (
    Work,
    failure_message,
    history_figures,
    portfolio_coin_results,
    run_engine,
)
from svc_api.backtests.progress import Progress
from svc_api.core import pubsub
from svc_api.core.clock import Clock, WallClock
from svc_api.core.liveness import is_dead
from svc_api.core.objectstore import ObjectStore, open_object_store
from svc_api.core.store import until_stored
from svc_api.credits import service as credits
from svc_api.notifications import service as notifications
from svc_engine.data import Catalog, DataStore
from svc_engine.executors import Executor, LocalExecutor

logger = logging.getLogger("svc_api.backtests")

INTERRUPTED = "the service restarted while the job was running; credits refunded"


class JobRunner:
    """The thread pool that executes jobs; one per app (see the module docstring).

    Example:
        >>> import tempfile
        >>> runner = JobRunner(None, config=RunnerConfig(queue_capacity=1), var_dir=tempfile.mkdtemp())
        >>> runner.in_flight(), runner.workers(), runner.limit_now()
        (0, 1, 3)
        >>> with runner.reserve():
        ...     with runner.reserve():
        ...         pass
        Traceback (most recent call last):
        ...
        svc_api.backtests.config.CapacityExceeded
    """

    def __init__(
        self,
        store: Any,
        *,
        config: RunnerConfig,
        data_dir: Any = None,
        ray_address: str | None = None,
        secret: bytes = b"",
        var_dir: Any = ".",
        executor: Executor | None = None,
        objects: ObjectStore | None = None,
        clock: Clock | None = None,
    ) -> None:
        self.store = store
        # The service's clock: rows are stamped and heartbeats judged by it (tests move it).
        self.clock: Clock = clock or WallClock()
        self.config = config
        self.datastore = DataStore(data_dir)
        self._ray_address = ray_address
        self.executor: Executor | None = executor
        self.objects = objects or open_object_store(
            config.object_store_url, var_dir=var_dir, secret=secret, endpoint_url=config.s3_endpoint_url
        )
        self._pool: ThreadPoolExecutor | None = None
        self._lock = threading.Lock()
        self._reserved = 0
        self._active: dict[str, Future[Any]] = {}
        self._owners: dict[str, str] = {}  # job id -> account of the jobs in flight
        self._stop = threading.Event()
        self._heart: threading.Thread | None = None
        self._catalog: tuple[float, Catalog] | None = None

    # -- life cycle

    def start(self) -> None:
        """Open the executor, fail and refund jobs left running by a dead process, start beating."""
        if self.executor is None:
            if self._ray_address:
                from svc_engine.executors import RayExecutor

                self.executor = RayExecutor(address=self._ray_address)
            else:
                self.executor = LocalExecutor()
        self._pool = ThreadPoolExecutor(self.config.threads, thread_name_prefix="svc-backtest")
        try:
            self.recover()
        except Exception:
            logger.warning("backtest recovery deferred: store unavailable", exc_info=True)
        self._heart = threading.Thread(target=self._beat, name="svc-backtest-heartbeat", daemon=True)
        self._heart.start()
        _ACTIVE.append(self.objects)

    def stop(self) -> None:
        """Stop taking jobs, wait for running ones, fail and refund the ones never started."""
        self._stop.set()
        if self.objects in _ACTIVE:
            _ACTIVE.remove(self.objects)
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
        if self._heart is not None:
            self._heart.join(timeout=5)
        with self._lock:
            left = [job_id for job_id, f in self._active.items() if f.cancelled()]
            self._active.clear()
            self._owners.clear()
        for job_id in left:
            self.fail(job_id, "the service stopped before the job started; credits refunded")
        if self.executor is not None:
            self.executor.close()

    # -- capacity

    @contextmanager
    def reserve(self) -> Iterator[None]:
        """Hold one place in the queue while a launch is written; raises :class:`CapacityExceeded`."""
        with self._lock:
            if len(self._active) + self._reserved >= self.config.queue_capacity:
                raise CapacityExceeded
            self._reserved += 1
        try:
            yield
        finally:
            with self._lock:
                self._reserved -= 1

    def in_flight(self) -> int:
        """Jobs submitted to this runner and not finished yet."""
        with self._lock:
            return len(self._active)

    def limit_now(self, svc_id: str | None = None) -> int:
        """Running jobs allowed to ``svc_id`` now: lower when the executor is busy with other accounts'
        jobs (:func:`~svc_api.backtests.config.others_load`)."""
        busy = self.executor.busy() if self.executor is not None else 0.0
        with self._lock:
            owners = list(self._owners.values())
        return adaptive_limit(self.config.max_concurrent, busy=others_load(busy, owners, svc_id))

    def workers(self) -> int:
        """Parallel workers of the executor (for duration estimates)."""
        return self.executor.workers if self.executor is not None else 1

    def catalog(self, ttl: float = 30.0) -> Catalog:
        """The data catalog, re-read at most every ``ttl`` seconds (new candles show up)."""
        now = time.monotonic()
        cached = self._catalog
        if cached is None or now - cached[0] > ttl:
            cached = (now, Catalog(self.datastore))
            self._catalog = cached
        return cached[1]

    # -- execution

    def submit(self, work: Work) -> None:
        """Queue ``work`` (its row already exists, status ``running``)."""
        if self._pool is None or self._stop.is_set():
            self.fail(work.job_id, "the service is stopping; credits refunded")
            return
        with self._lock:
            future = self._pool.submit(self._execute, work)
            self._active[work.job_id] = future
            self._owners[work.job_id] = work.svc_id
        future.add_done_callback(lambda _f: self._done(work.job_id))

    def wait(self, job_id: str, timeout: float | None = None) -> None:
        """Block until a job of this runner ends (for tests and benchmarks)."""
        with self._lock:
            future = self._active.get(job_id)
        if future is not None:
            future.exception(timeout=timeout)

    def _done(self, job_id: str) -> None:
        with self._lock:
            self._active.pop(job_id, None)
            self._owners.pop(job_id, None)

    def _execute(self, work: Work) -> None:
        wait = {"patience": self.config.stale_seconds, "stop": self._stop}  # outlasts a store outage
        try:
            with self.store.write() as conn:
                now = self.clock.seconds()
                queries.update_running(conn, work.job_id, {"started_at": now, "heartbeat_at": now})
            progress = Progress(self.store, work, self.config.progress_interval, clock=self.clock)
            assert self.executor is not None
            result = run_engine(work, executor=self.executor, store=self.datastore, progress=progress)
            until_stored(lambda: self.complete(work, result, progress), **wait)
        except Exception as error:
            logger.info("backtest %s failed: %s", work.job_id, error)
            until_stored(functools.partial(self.fail, work.job_id, failure_message(error)), **wait)

    def complete(self, work: Work, result: Any, progress: Progress) -> None:
        """Store the result and mark the job completed, with its notification."""
        payload = result.to_dict()
        items = {result_key(work.svc_id, work.job_id): payload}
        if work.kind == "portfolio":
            for symbol, data in portfolio_coin_results(result).items():
                items[coin_key(work.svc_id, work.job_id, symbol)] = data
        keys = put_all(self.objects, items)
        coins = progress.final_coins()
        values = {
            "status": "completed",
            "progress_pct": 100.0,
            "finished_at": self.clock.seconds(),
            "result_key": keys[0],
            "coin_progress": json.dumps(coins) if coins is not None else None,
            **history_figures(work.kind, payload),
        }
        with self.store.write() as conn:
            done = queries.update_running(conn, work.job_id, values)
            if done:
                body = f"Your {work.kind} backtest {work.job_id} of {work.strategy_name} finished."
                notifications.notify(
                    conn, work.svc_id, "Backtest complete", body, "backtest_complete", now=self.clock.now()
                )
        if not done:  # deleted while it ran: keep no orphan objects
            for key in keys:
                self.objects.delete(key)
            return
        event = {
            "channel": "jobs",
            "event": "completed",
            "job_id": work.job_id,
            "status": "completed",
            "progress_pct": 100.0,
        }
        if coins is not None:
            event["coin_progress"] = coins
        pubsub.publish(self.store, pubsub.user_topic(work.svc_id), event)

    def fail(self, job_id: str, error: str) -> bool:
        """Mark a running job failed and refund its credits (once); False when it was not running."""
        with self.store.write() as conn:
            row = queries.running_charge(conn, job_id)
            if row is None:
                return False
            values = {"status": "failed", "error": error[:2000], "finished_at": self.clock.seconds()}
            queries.update_running(conn, job_id, values)
            if row.cost_credits > 0:
                credits.refund_credits(
                    conn,
                    row.svc_id,
                    credits.from_units(row.cost_credits),
                    action="backtest",
                    description=f"Refund of failed backtest {job_id}",
                    idempotency_key=f"refund:{job_id}",
                    now=int(values["finished_at"]),
                )
        event = {
            "channel": "jobs",
            "event": "failed",
            "job_id": job_id,
            "status": "failed",
            "error": error[:500],
        }
        pubsub.publish(self.store, pubsub.user_topic(row.svc_id), event)
        return True

    def recover(self, now: float | None = None) -> list[str]:
        """Fail and refund ``running`` jobs of no live runner: their process is known dead (this host),
        or their heartbeat is older than ``stale_seconds`` (another host, or a job from before)."""
        now = self.clock.seconds() if now is None else now
        with self.store.read() as conn:
            stale = queries.stale_running(conn, beat_before=now - self.config.stale_seconds)
            stale += [job_id for job_id, runner in queries.running_runners(conn) if is_dead(runner)]
        stale = list(dict.fromkeys(stale))
        with self._lock:
            mine = set(self._active)
        failed = [job_id for job_id in stale if job_id not in mine and self.fail(job_id, INTERRUPTED)]
        if failed:
            logger.warning("failed and refunded %d interrupted backtest(s): %s", len(failed), failed)
        return failed

    def _beat(self) -> None:
        while not self._stop.wait(self.config.heartbeat_seconds):
            try:
                with self._lock:
                    mine = list(self._active)
                if mine:
                    with self.store.write() as conn:
                        queries.beat(conn, mine, now=self.clock.seconds())
                self.recover()
            except Exception:
                logger.warning("backtest heartbeat failed", exc_info=True)


# -- the runner of an app


def runner_of(services: Any) -> JobRunner:
    """The app's runner, started on first use (the lifespan starts it at start-up).

    Example:
        >>> from types import SimpleNamespace
        >>> runner_of(SimpleNamespace(backtest_runner="the running one"))
        'the running one'
    """
    runner = getattr(services, "backtest_runner", None)
    if runner is not None:
        return runner
    with _START_LOCK:
        runner = getattr(services, "backtest_runner", None)
        if runner is None:
            settings = services.settings
            runner = JobRunner(
                services.store,
                config=RunnerConfig.from_settings(settings),
                data_dir=settings.data_dir,
                ray_address=settings.ray_address,
                secret=settings.secret_key,
                var_dir=settings.var_dir,
                clock=services.clock,
            )
            runner.start()
            services.backtest_runner = runner
    return runner


def start_runner(services: Any) -> None:
    """Start the app's runner (lifespan start-up); a store that is down defers it to first use.

    Example:
        >>> from types import SimpleNamespace
        >>> start_runner(SimpleNamespace(backtest_runner="already started"))
    """
    try:
        runner_of(services)
    except Exception:
        logger.warning("backtest runner not started at start-up", exc_info=True)


def stop_runner(services: Any) -> None:
    """Stop the app's runner if it was started (lifespan shutdown).

    Example:
        >>> class S: ...
        >>> stop_runner(S())
    """
    runner = getattr(services, "backtest_runner", None)
    if runner is not None:
        runner.stop()
        services.backtest_runner = None


_START_LOCK = threading.Lock()
_ACTIVE: list[ObjectStore] = []


def active_objects() -> ObjectStore | None:
    """The object store of the most recently started runner still running (None when none).

    Example:
        >>> active_objects() is None or isinstance(active_objects(), ObjectStore)
        True
    """
    return _ACTIVE[-1] if _ACTIVE else None
