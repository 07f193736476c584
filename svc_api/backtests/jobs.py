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
(their process died) are failed and refunded.

Configuration (``svc_api.settings.Settings``, from ``BACKTEST_MAX_CONCURRENT``,
``BACKTEST_QUEUE_CAPACITY``, ``BACKTEST_THREADS``, ``BACKTEST_STALE_SECONDS``, ``OBJECT_STORE_URL``,
``S3_ENDPOINT_URL``, ``RAY_ADDRESS``; docs/api.md lists them): :meth:`RunnerConfig.from_settings`.

Example:
    >>> adaptive_limit(4, busy=0.0), adaptive_limit(4, busy=1.0), adaptive_limit(1, busy=1.0)
    (4, 2, 1)
"""

from __future__ import annotations

import json
import logging
import math
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import polars as pl
import sqlalchemy as sa

from svc_api.backtests.tables import backtest_jobs
from svc_api.core.objectstore import ObjectStore, open_object_store
from svc_api.credits import service as credits
from svc_api.notifications import service as notifications
from svc_api.settings import Settings, tunables_from_env
from svc_engine.data import Catalog, DataStore
from svc_engine.executors import Executor, LocalExecutor
from svc_engine.sim.stats import finite

logger = logging.getLogger("svc_api.backtests")

#: Share of a ``run``/``portfolio`` job's progress given to evaluating chunks; the simulation after
#: them is the rest.
EVALUATE_SHARE = 90.0
INTERRUPTED = "the service restarted while the job was running; credits refunded"


@dataclass(frozen=True)
class RunnerConfig:
    """Limits and locations of the runner (see the module docstring for the variables).

    Example:
        >>> RunnerConfig.from_env({"BACKTEST_MAX_CONCURRENT": "5"}).max_concurrent
        5
    """

    max_concurrent: int = 3
    queue_capacity: int = 16
    threads: int = 2
    stale_seconds: float = 60.0
    heartbeat_seconds: float = 10.0
    progress_interval: float = 0.2
    object_store_url: str | None = None
    s3_endpoint_url: str | None = None

    @classmethod
    def from_settings(cls, settings: Settings) -> RunnerConfig:
        """The runner's part of the service settings.

        Example:
            >>> s = Settings(database_url="sqlite://", secret_key=b"k" * 32, backtest_threads=4)
            >>> RunnerConfig.from_settings(s).threads
            4
        """
        return cls(
            max_concurrent=settings.backtest_max_concurrent,
            queue_capacity=settings.backtest_queue_capacity,
            threads=settings.backtest_threads,
            stale_seconds=settings.backtest_stale_seconds,
            object_store_url=settings.object_store_url,
            s3_endpoint_url=settings.s3_endpoint_url,
        )

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> RunnerConfig:
        """Parse the ``BACKTEST_*``, ``OBJECT_STORE_URL`` and ``S3_ENDPOINT_URL`` variables of ``env``
        (the parsers of :data:`svc_api.settings.TUNABLES`; unset ones keep the defaults).

        Example:
            >>> RunnerConfig.from_env({"BACKTEST_THREADS": "0"})
            Traceback (most recent call last):
            ...
            ValueError: BACKTEST_THREADS must be an integer >= 1, got '0'
        """
        tunables = tunables_from_env(env)
        return cls.from_settings(Settings(database_url="", secret_key=b"", **tunables))


def adaptive_limit(max_concurrent: int, *, busy: float) -> int:
    """Running jobs allowed per account under executor load ``busy`` (0..1): the full maximum when
    idle, down to half of it (at least 1) when every worker is taken.

    Example:
        >>> adaptive_limit(3, busy=0.5)
        3
    """
    return max(1, math.ceil(max_concurrent * (1.0 - 0.5 * min(1.0, max(0.0, busy)))))


@dataclass
class Work:
    """One job to execute: what the engine needs, resolved at launch.

    ``symbols`` are data symbols; ``settings`` go to the driver as keyword arguments.

    Example:
        >>> Work("j", "AB12CD", "run", object(), ["BTCUSDT"], "crypto", "1h").coins_total
        1
    """

    job_id: str
    svc_id: str
    kind: str
    strategy: Any
    symbols: list[str]
    market: str | None
    timeframe: str
    start_ts: float | None = None
    end_ts: float | None = None
    chunks: int | None = None
    settings: dict[str, Any] = field(default_factory=dict)
    divide: int | None = None
    initial_balance: float = 100.0
    strategy_name: str = ""

    @property
    def coins_total(self) -> int:
        """How many coins the job covers."""
        return len(self.symbols)


def run_engine(
    work: Work, *, executor: Executor, store: DataStore, progress: Callable[[dict[str, Any]], None] | None
) -> Any:
    """Call the engine driver of ``work.kind`` (the service computes nothing itself).

    Example:
        >>> run_engine(Work("j", "AB12CD", "walk", None, [], None, "1h"), executor=None, store=None,
        ...            progress=None)
        Traceback (most recent call last):
        ...
        ValueError: unknown job kind 'walk'
    """
    from svc_engine.sim import drivers

    common: dict[str, Any] = {
        "executor": executor,
        "progress": progress,
        "store": store,
        "market": work.market,
    }
    if work.kind == "run":
        return drivers.backtest(
            work.strategy, work.symbols[0], work.timeframe, work.start_ts, work.end_ts,
            chunks=work.chunks, **common, **work.settings,
        )  # fmt: skip
    if work.kind == "full_range":
        return drivers.full_range(work.strategy, work.symbols, work.timeframe, **common, **work.settings)
    if work.kind == "portfolio":
        return drivers.portfolio(
            work.strategy, work.symbols, work.timeframe, divide=work.divide,
            initial_balance=work.initial_balance, start_ts=work.start_ts, **common, **work.settings,
        )  # fmt: skip
    raise ValueError(f"unknown job kind {work.kind!r}")


def result_key(svc_id: str, job_id: str) -> str:
    """Object key of a job's result.

    Example:
        >>> result_key("AB12CD", "bt_1")
        'backtests/AB12CD/bt_1/result.json'
    """
    return f"backtests/{svc_id}/{job_id}/result.json"


def coin_key(svc_id: str, job_id: str, symbol: str) -> str:
    """Object key of one coin's result inside a portfolio job.

    Example:
        >>> coin_key("AB12CD", "bt_1", "BTCUSDT")
        'backtests/AB12CD/bt_1/coins/BTCUSDT.json'
    """
    return f"backtests/{svc_id}/{job_id}/coins/{symbol}.json"


def job_keys(svc_id: str, job_id: str, symbols: list[str], kind: str) -> list[str]:
    """Every object key a job may have written.

    Example:
        >>> len(job_keys("AB12CD", "bt_1", ["BTCUSDT", "ETHUSDT"], "portfolio"))
        3
    """
    keys = [result_key(svc_id, job_id)]
    if kind == "portfolio":
        keys += [coin_key(svc_id, job_id, s) for s in symbols]
    return keys


def dumps(value: Any) -> bytes:
    """Compact JSON bytes (NaN refused: the engine already turned them into null).

    Example:
        >>> dumps({"a": [1, 2.5]})
        b'{"a":[1,2.5]}'
    """
    return json.dumps(value, separators=(",", ":"), allow_nan=False).encode()


class Progress:
    """Turns the executor's progress events into ``progress_pct`` and ``coin_progress`` on the row,
    written at most every ``interval`` seconds (and always for the last event).

    Example:
        >>> p = Progress(None, Work("j", "AB12CD", "full_range", None, ["A", "B"], None, "1h"), 0.0)
        >>> p.apply({"done": 1, "total": 2, "item": "A", "status": "completed", "pct": 50.0})
        >>> p.pct, p.coins["A"], p.coins["B"]
        (50.0, {'status': 'completed', 'progress_pct': 100.0}, {'status': 'running', 'progress_pct': 0.0})
    """

    def __init__(self, store: Any, work: Work, interval: float) -> None:
        self.store = store
        self.work = work
        self.interval = interval
        self.pct = 0.0
        self.coins = initial_coin_progress(work.symbols) if work.coins_total > 1 else None
        self._written = 0.0

    def apply(self, event: Mapping[str, Any]) -> None:
        """Fold one event into the state."""
        share = 100.0 if self.work.kind == "full_range" else EVALUATE_SHARE
        self.pct = round(share * float(event["pct"]) / 100.0, 3)
        if self.coins is not None and event.get("item") in self.coins:
            self.coins[event["item"]] = {"status": event["status"], "progress_pct": 100.0}

    def __call__(self, event: dict[str, Any]) -> None:
        self.apply(event)
        now = time.monotonic()
        if now - self._written >= self.interval or event.get("done") == event.get("total"):
            self._written = now
            self.write()

    def write(self) -> None:
        """Store the current state on the row (a lost write is only a stale progress figure)."""
        values: dict[str, Any] = {"progress_pct": self.pct, "heartbeat_at": time.time()}
        if self.coins is not None:
            values["coin_progress"] = json.dumps(self.coins)
        try:
            with self.store.write() as conn:
                conn.execute(_running(self.work.job_id).values(**values))
        except Exception:
            logger.warning("progress of %s not written", self.work.job_id, exc_info=True)


def initial_coin_progress(symbols: list[str]) -> dict[str, dict[str, Any]]:
    """Every coin ``running`` at 0 %.

    Example:
        >>> initial_coin_progress(["BTCUSDT"])
        {'BTCUSDT': {'status': 'running', 'progress_pct': 0.0}}
    """
    return {s: {"status": "running", "progress_pct": 0.0} for s in symbols}


def _running(job_id: str) -> Any:
    return backtest_jobs.update().where(backtest_jobs.c.job_id == job_id, backtest_jobs.c.status == "running")


class CapacityExceeded(Exception):
    """The runner's queue is full."""


class JobRunner:
    """The thread pool that executes jobs; one per app (see the module docstring).

    Example:
        >>> JobRunner.__name__
        'JobRunner'
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
    ) -> None:
        self.store = store
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

    def limit_now(self) -> int:
        """Running jobs allowed per account now (lower when the executor is busy)."""
        busy = self.executor.busy() if self.executor is not None else 0.0
        return adaptive_limit(self.config.max_concurrent, busy=busy)

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

    def _execute(self, work: Work) -> None:
        try:
            with self.store.write() as conn:
                now = time.time()
                conn.execute(_running(work.job_id).values(started_at=now, heartbeat_at=now))
            progress = Progress(self.store, work, self.config.progress_interval)
            assert self.executor is not None
            result = run_engine(work, executor=self.executor, store=self.datastore, progress=progress)
            self.complete(work, result, progress)
        except Exception as error:
            logger.info("backtest %s failed: %s", work.job_id, error)
            self.fail(work.job_id, _message(error))

    def complete(self, work: Work, result: Any, progress: Progress) -> None:
        """Store the result and mark the job completed, with its notification."""
        payload = result.to_dict()
        keys = [result_key(work.svc_id, work.job_id)]
        self.objects.put(keys[0], dumps(payload))
        if work.kind == "portfolio":
            for symbol, data in portfolio_coin_results(result).items():
                keys.append(coin_key(work.svc_id, work.job_id, symbol))
                self.objects.put(keys[-1], dumps(data))
        figures = history_figures(work.kind, payload)
        coins = progress.coins
        if coins is not None:
            coins = {
                c: v if v["status"] != "running" else {**v, "status": "completed"} for c, v in coins.items()
            }
        with self.store.write() as conn:
            done = conn.execute(
                _running(work.job_id).values(
                    status="completed", progress_pct=100.0, finished_at=time.time(), result_key=keys[0],
                    coin_progress=json.dumps(coins) if coins is not None else None, **figures,
                )
            )  # fmt: skip
            if done.rowcount == 1:
                body = f"Your {work.kind} backtest {work.job_id} of {work.strategy_name} finished."
                notifications.notify(conn, work.svc_id, "Backtest complete", body, "backtest_complete")
        if done.rowcount != 1:  # deleted while it ran: keep no orphan objects
            for key in keys:
                self.objects.delete(key)

    def fail(self, job_id: str, error: str) -> bool:
        """Mark a running job failed and refund its credits (once); False when it was not running."""
        with self.store.write() as conn:
            row = conn.execute(
                sa.select(backtest_jobs.c.svc_id, backtest_jobs.c.cost_credits).where(
                    backtest_jobs.c.job_id == job_id, backtest_jobs.c.status == "running"
                )
            ).first()
            if row is None:
                return False
            conn.execute(
                _running(job_id).values(status="failed", error=error[:2000], finished_at=time.time())
            )
            if row.cost_credits > 0:
                credits.refund_credits(
                    conn, row.svc_id, credits.from_units(row.cost_credits), action="backtest",
                    description=f"Refund of failed backtest {job_id}", idempotency_key=f"refund:{job_id}",
                )  # fmt: skip
        return True

    def recover(self, now: float | None = None) -> list[str]:
        """Fail and refund ``running`` jobs of no live runner (heartbeat older than ``stale_seconds``)."""
        now = time.time() if now is None else now
        cutoff = now - self.config.stale_seconds
        b = backtest_jobs.c
        beat = sa.func.coalesce(b.heartbeat_at, b.created_at)
        with self.store.read() as conn:
            stale = list(
                conn.execute(sa.select(b.job_id).where(b.status == "running", beat < cutoff)).scalars()
            )
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
                        conn.execute(
                            backtest_jobs.update()
                            .where(backtest_jobs.c.job_id.in_(mine), backtest_jobs.c.status == "running")
                            .values(heartbeat_at=time.time())
                        )
                self.recover()
            except Exception:
                logger.warning("backtest heartbeat failed", exc_info=True)


def _message(error: BaseException) -> str:
    text = f"{type(error).__name__}: {error}" if str(error) else type(error).__name__
    notes = getattr(error, "__notes__", None)
    return f"{text} ({'; '.join(notes)})" if notes else text


def history_figures(kind: str, payload: Mapping[str, Any]) -> dict[str, Any]:
    """The figures a history entry shows, read from the engine's result: ``total_trades``,
    ``win_rate``, ``total_return_pct`` (for ``full_range``: the average return over coins and the
    overall win rate is absent), and ``returns_by_coin`` of ``full_range`` jobs.

    Example:
        >>> history_figures("run", {"summary": {"total_trades": 3, "win_rate": 66.7,
        ...                                     "total_return_pct": 1.5}})
        {'total_trades': 3, 'win_rate': 66.7, 'total_return_pct': 1.5}
    """
    summary = payload.get("summary", {})
    if kind != "full_range":
        return {k: summary.get(k) for k in ("total_trades", "win_rate", "total_return_pct")}
    returns = {c: r["summary"]["total_return_pct"] for c, r in payload.get("results", {}).items()}
    return {
        "total_trades": summary.get("total_trades"),
        "win_rate": None,
        "total_return_pct": summary.get("avg_return_pct"),
        "returns_by_coin": json.dumps(returns),
    }


def portfolio_coin_results(result: Any) -> dict[str, dict[str, Any]]:
    """Each coin's part of a portfolio result: ``{coin, timeframe, summary, trades, total_trades}``
    with every trade of that coin (the engine's ``coin_results`` summary and trades frame).

    Example:
        >>> portfolio_coin_results.__name__
        'portfolio_coin_results'
    """
    out: dict[str, dict[str, Any]] = {}
    for coin in result.coins:
        trades = result.trades.filter(pl.col("coin") == coin)
        out[coin] = finite({
            "coin": coin, "timeframe": result.timeframe, "summary": result.coin_results.get(coin, {}),
            "trades": trades.to_dicts(), "total_trades": trades.height,
        })  # fmt: skip
    return out


# -- the runner of an app


def runner_of(services: Any) -> JobRunner:
    """The app's runner, started on first use (the lifespan starts it at start-up).

    Example:
        >>> runner_of.__name__
        'runner_of'
    """
    runner = getattr(services, "backtest_runner", None)
    if runner is not None:
        return runner
    with _START_LOCK:
        runner = getattr(services, "backtest_runner", None)
        if runner is None:
            settings = services.settings
            runner = JobRunner(
                services.store, config=RunnerConfig.from_settings(settings), data_dir=settings.data_dir,
                ray_address=settings.ray_address, secret=settings.secret_key, var_dir=settings.var_dir,
            )  # fmt: skip
            runner.start()
            services.backtest_runner = runner
    return runner


def start_runner(services: Any) -> None:
    """Start the app's runner (lifespan start-up); a store that is down defers it to first use.

    Example:
        >>> start_runner.__name__
        'start_runner'
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


class RunnerWorker:
    """The app's :class:`JobRunner` as a registered worker (its lifecycle, health and one recovery pass).

    Example:
        >>> RunnerWorker(object()).name
        'backtest_runner'
    """

    name = "backtest_runner"

    def __init__(self, services: Any) -> None:
        self.services = services

    def start(self) -> None:
        """Start the app's runner (a store that is down defers it to the first launch)."""
        start_runner(self.services)

    def stop(self) -> None:
        """Stop the app's runner."""
        stop_runner(self.services)

    def health(self) -> dict[str, Any]:
        """``running`` with the jobs in flight, or ``stopped``."""
        runner = getattr(self.services, "backtest_runner", None)
        if runner is None:
            return {"state": "stopped"}
        in_flight, workers = runner.in_flight(), runner.workers()
        return {"state": "running", "jobs_in_flight": in_flight, "executor_workers": workers}

    def run_once(self) -> list[str]:
        """Fail and refund the jobs of dead processes now; the ids failed."""
        return runner_of(self.services).recover()


_START_LOCK = threading.Lock()
_ACTIVE: list[ObjectStore] = []


def active_objects() -> ObjectStore | None:
    """The object store of the most recently started runner still running (None when none).

    Example:
        >>> active_objects() is None or isinstance(active_objects(), ObjectStore)
        True
    """
    return _ACTIVE[-1] if _ACTIVE else None
