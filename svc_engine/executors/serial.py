"""An executor that runs every item in the calling thread: the fake for tests and tiny jobs.

Example:
    >>> SerialExecutor().map(len, ["ab", "c"])
    [2, 1]
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from svc_engine.executors.base import Executor, ProgressFn, Tracker, call


class SerialExecutor(Executor):
    """One item after the other, in process; same contract as the parallel executors.

    Example:
        >>> SerialExecutor().map(lambda k, x: k * x, [1, 2], shared=10)
        [10, 20]
    """

    def __init__(self) -> None:
        self._running = 0

    @property
    def workers(self) -> int:
        return 1

    def busy(self) -> float:
        return float(self._running > 0)

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
        results = []
        for index, item in enumerate(items):
            self._running += 1
            try:
                results.append(call(fn, shared, item, shared is not None))
            except Exception as error:
                raise tracker.fail(index, error) from None
            finally:
                self._running -= 1
            tracker.succeeded(index, results[-1])
        return results
