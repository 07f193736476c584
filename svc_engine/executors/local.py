"""An executor on a pool of threads: the numba kernels and polars release the GIL.

Example:
    >>> with LocalExecutor(max_workers=2) as ex:
    ...     ex.map(str.upper, ["a", "b"])
    ['A', 'B']
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from typing import Any

from svc_engine.executors.base import Executor, ProgressFn, Tracker, call


class LocalExecutor(Executor):
    """Threads in this process; ``max_workers`` defaults to the number of CPUs.

    Example:
        >>> LocalExecutor(max_workers=3).workers
        3
    """

    def __init__(self, max_workers: int | None = None) -> None:
        if max_workers is not None and max_workers < 1:
            raise ValueError(f"max_workers must be at least 1, got {max_workers}")
        self._workers = max_workers or os.cpu_count() or 1
        self._pool = ThreadPoolExecutor(self._workers, thread_name_prefix="svc-exec")
        self._lock = threading.Lock()
        self._in_flight = 0

    @property
    def workers(self) -> int:
        return self._workers

    def busy(self) -> float:
        with self._lock:
            return min(1.0, self._in_flight / self._workers)

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)

    def map(
        self,
        fn: Callable[..., Any],
        items: Sequence[Any],
        *,
        shared: Any = None,
        labels: Sequence[str] | None = None,
        progress: ProgressFn | None = None,
        failed: Callable[[Any], bool] | None = None,
    ) -> list[Any]:
        tracker = Tracker(len(items), labels, progress, failed)
        with_shared = shared is not None
        futures: dict[Future[Any], int] = {}
        for index, item in enumerate(items):
            self._enter()
            future = self._pool.submit(call, fn, shared, item, with_shared)
            future.add_done_callback(self._leave)
            futures[future] = index
        results: list[Any] = [None] * len(items)
        pending = set(futures)
        while pending:
            done, pending = wait(pending, return_when=FIRST_COMPLETED)
            for future in sorted(done, key=futures.__getitem__):
                index = futures[future]
                error = future.exception()
                if error is not None:
                    for other in pending:
                        other.cancel()
                    raise tracker.fail(index, error) from None
                results[index] = future.result()
                tracker.succeeded(index, results[index])
        return results

    def _enter(self) -> None:
        with self._lock:
            self._in_flight += 1

    def _leave(self, _future: Future[Any]) -> None:
        with self._lock:
            self._in_flight -= 1
