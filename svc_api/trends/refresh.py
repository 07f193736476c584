"""The background job keeping the stored trend signals fresh as the data store gains candles.

Configured by the service settings (``svc_api.settings.Settings``; docs/api.md lists the variables).
Shortly after start-up (``TREND_REFRESH_DELAY_SECONDS``, default 2, so that it does not compete with
the start itself and an app that lives a moment scans nothing) and then every
``TREND_REFRESH_SECONDS`` (default 300; ``0`` turns the job off) it runs
the engine's ``scan_trends`` over every crypto coin of the data store on ``TREND_TIMEFRAMES``
(default ``1h,4h``) with the engine's ``LocalExecutor``, keeps the signals of the last
``SIGNAL_TTL`` of market time, inserts the new ones and deletes the expired untracked ones, in one
write transaction. A store without crypto candles is not scanned and the database is not touched.

Example:
    >>> refresh_settings({"TREND_REFRESH_SECONDS": "60", "TREND_TIMEFRAMES": "1h, 1d"})
    (60.0, ('1h', '1d'))
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

from svc_api.core.store import StoreUnavailable
from svc_api.market import service as market
from svc_api.market.service import crypto_series
from svc_api.settings import tunables_from_env
from svc_api.trends.service import SIGNAL_TTL, market_now, signal_rows, store_scan

logger = logging.getLogger("svc_api.trends")
DEFAULT_INTERVAL = 300.0
DEFAULT_DELAY = 2.0
DEFAULT_TIMEFRAMES = ("1h", "4h")


def refresh_delay(environ: Mapping[str, str]) -> float:
    """Seconds between start-up and the first refresh from ``TREND_REFRESH_DELAY_SECONDS`` of
    ``environ`` (default 2; the service reads it once, into its settings).

    Example:
        >>> refresh_delay({}), refresh_delay({"TREND_REFRESH_DELAY_SECONDS": "0"})
        (2.0, 0.0)
    """
    return float(tunables_from_env(environ).get("trend_refresh_delay_seconds", DEFAULT_DELAY))


def refresh_settings(environ: Mapping[str, str]) -> tuple[float, tuple[str, ...]]:
    """``(interval seconds, timeframes)`` from ``TREND_REFRESH_SECONDS`` and ``TREND_TIMEFRAMES`` of
    ``environ`` (the parsers of ``Settings.from_env``).

    Example:
        >>> refresh_settings({})
        (300.0, ('1h', '4h'))
    """
    tunables = tunables_from_env(environ)
    return (
        float(tunables.get("trend_refresh_seconds", DEFAULT_INTERVAL)),
        tuple(tunables.get("trend_timeframes", DEFAULT_TIMEFRAMES)),
    )


def refresh_once(
    store: Any,
    catalog: Any,
    *,
    timeframes: tuple[str, ...] = DEFAULT_TIMEFRAMES,
    wall_now: int,
    ttl: int = SIGNAL_TTL,
    workers: int = 2,
) -> dict[str, int]:
    """Scan, store the new signals, delete the expired ones; returns counts.

    ``store`` is the service's database, ``catalog`` a fresh ``Catalog`` of the data store.

    Example:
        >>> import tempfile
        >>> from svc_engine.data import Catalog, DataStore
        >>> refresh_once(None, Catalog(DataStore(tempfile.mkdtemp())), wall_now=1_700_000_000)
        {'series': 0, 'found': 0, 'added': 0, 'removed': 0}
    """
    from svc_engine.executors import LocalExecutor
    from svc_engine.trend import scan_trends

    series = crypto_series(catalog)
    if not series:
        return {"series": 0, "found": 0, "added": 0, "removed": 0}
    now = market_now(catalog, wall_now)
    rows = []
    with LocalExecutor(max_workers=workers) as executor:
        for market in sorted({m for m, _ in series}):
            coins = [s for m, s in series if m == market]
            scan = scan_trends(
                coins, timeframes, since=now - ttl, executor=executor, store=catalog.store, market=market
            )
            rows += signal_rows(scan)
    added, removed = store_scan(store, rows, now=now, ttl=ttl)
    return {"series": len(series) * len(timeframes), "found": len(rows), "added": added, "removed": removed}


class TrendRefresher:
    """A daemon thread calling :func:`refresh_once` ``delay`` seconds after start, then every ``interval``.

    ``catalog_factory()`` returns a fresh ``Catalog`` each time, so new candles are seen; ``clock``
    gives the wall time (injectable for tests). :meth:`stop` wakes the thread and waits for it.

    Example:
        >>> import tempfile
        >>> from svc_engine.data import Catalog, DataStore
        >>> job = TrendRefresher(lambda: None, lambda: Catalog(DataStore(tempfile.mkdtemp())), interval=60)
        >>> job.start(); job.wait_first(5.0); job.stop()
        True
        >>> job.last
        {'series': 0, 'found': 0, 'added': 0, 'removed': 0}
    """

    def __init__(
        self,
        store_factory: Callable[[], Any],
        catalog_factory: Callable[[], Any],
        *,
        interval: float = DEFAULT_INTERVAL,
        timeframes: tuple[str, ...] = DEFAULT_TIMEFRAMES,
        clock: Callable[[], float] = time.time,
        delay: float = 0.0,
    ) -> None:
        self.store_factory = store_factory
        self.catalog_factory = catalog_factory
        self.interval = interval
        self.timeframes = timeframes
        self.clock = clock
        self.delay = delay
        self.last: dict[str, int] | None = None
        self._stop = threading.Event()
        self._first = threading.Event()
        self._thread: threading.Thread | None = None

    name = "trend_refresh"

    def health(self) -> dict[str, Any]:
        """``running`` with the last refresh's counts, or ``stopped``."""
        alive = self._thread is not None and self._thread.is_alive()
        return {"state": "running" if alive else "stopped", "last": self.last}

    def start(self) -> None:
        """Start the thread (once)."""
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="trend-refresh", daemon=True)
            self._thread.start()

    def stop(self, timeout: float = 30.0) -> None:
        """Ask the thread to finish and wait for it (a scan under way completes first)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)

    def wait_first(self, timeout: float) -> bool:
        """Wait until the first refresh has finished (or failed, or the job was stopped before it)."""
        return self._first.wait(timeout)

    def run_once(self) -> dict[str, int] | None:
        """One refresh; failures are logged, never raised (the job must outlive a database outage)."""
        try:
            catalog = self.catalog_factory()
            if not crypto_series(catalog):
                self.last = {"series": 0, "found": 0, "added": 0, "removed": 0}
                return self.last
            self.last = refresh_once(
                self.store_factory(), catalog, timeframes=self.timeframes, wall_now=int(self.clock())
            )
            logger.info("trend refresh: %s", self.last)
        except StoreUnavailable as exc:
            logger.warning("trend refresh skipped, store unavailable: %s", exc)
        except Exception:
            logger.exception("trend refresh failed")
        return self.last

    def _run(self) -> None:
        if self._stop.wait(self.delay):
            self._first.set()
            return
        while not self._stop.is_set():
            self.run_once()
            self._first.set()
            if self._stop.wait(self.interval):
                break


def start_for(services: Any) -> TrendRefresher | None:
    """The refresher of an app (started), or None when ``settings.trend_refresh_seconds`` is 0.

    Example:
        >>> from pathlib import Path
        >>> from svc_api.core.services import Services
        >>> from svc_api.migrations import migrate
        >>> from svc_api.settings import Settings
        >>> def services(**tunables):
        ...     return Services(Settings(database_url="sqlite:///:memory:", secret_key=b"k" * 32,
        ...                              data_dir=Path("/nonexistent"), **tunables), migrate=migrate)
        >>> start_for(services(trend_refresh_seconds=0)) is None
        True
        >>> job = start_for(services(trend_refresh_seconds=60, trend_refresh_delay_seconds=0))
        >>> job.wait_first(5.0), job.last
        (True, {'series': 0, 'found': 0, 'added': 0, 'removed': 0})
        >>> job.stop()
    """
    settings = services.settings
    interval, timeframes = settings.trend_refresh_seconds, settings.trend_timeframes
    if interval == 0:
        return None
    from svc_engine.data import Catalog, DataStore

    data_dir = settings.data_dir

    def catalog() -> Any:
        return Catalog(DataStore(data_dir) if data_dir is not None else None)

    def clock() -> int:  # in a replay, trends follow market time past the wall clock
        return market.horizon(services, services.clock.now())

    job = TrendRefresher(
        lambda: services.store,
        catalog,
        interval=interval,
        timeframes=timeframes,
        delay=settings.trend_refresh_delay_seconds,
        clock=clock,
    )
    job.start()
    return job
