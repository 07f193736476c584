"""An executor on Ray tasks: a local Ray runtime by default, or a cluster at ``address``.

Each call runs as one Ray task that returns its value or its exception (so a failure comes back
as the very exception the function raised, not Ray's wrapper). ``shared`` and the function are put
in the object store once per ``map``; every task receives them by reference.

Example:
    >>> import operator
    >>> with RayExecutor(num_cpus=1) as ex:  # doctest: +SKIP
    ...     ex.map(operator.neg, [1, 2])
    [-1, -2]
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from svc_engine.executors.base import Executor, ProgressFn, Tracker, call


def _run(fn: Callable[..., Any], shared: Any, item: Any, with_shared: bool) -> tuple[bool, Any]:
    try:
        return True, call(fn, shared, item, with_shared)
    except Exception as error:
        return False, error


class RayExecutor(Executor):
    """Ray tasks; ``address=None`` starts (or joins) a local runtime with ``num_cpus`` CPUs.

    ``init_kwargs`` go to ``ray.init`` (for example ``object_store_memory``). ``close()`` shuts Ray
    down only when this executor started it.

    Example:
        >>> RayExecutor.__mro__[1].__name__
        'Executor'
    """

    def __init__(
        self, address: str | None = None, *, num_cpus: int | None = None, **init_kwargs: Any
    ) -> None:
        import ray

        self._ray = ray
        self._owns_runtime = not ray.is_initialized()
        options: dict[str, Any] = {"include_dashboard": False, "ignore_reinit_error": True, **init_kwargs}
        if address is None:
            options.setdefault("log_to_driver", False)
            if num_cpus is not None:
                options["num_cpus"] = num_cpus
        ray.init(address=address, **options)
        self._remote = ray.remote(num_cpus=1, max_retries=0)(_run)

    @property
    def workers(self) -> int:
        return max(1, int(self._ray.cluster_resources().get("CPU", 1)))

    def busy(self) -> float:
        total = self._ray.cluster_resources().get("CPU", 0.0)
        if total <= 0:
            return 1.0
        free = self._ray.available_resources().get("CPU", 0.0)
        return min(1.0, max(0.0, 1.0 - free / total))

    def close(self) -> None:
        if self._owns_runtime and self._ray.is_initialized():
            self._ray.shutdown()

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
        ray = self._ray
        tracker = Tracker(len(items), labels, progress, failed)
        if not items:
            return []
        fn_ref, shared_ref = ray.put(fn), ray.put(shared)
        with_shared = shared is not None
        refs = [self._remote.remote(fn_ref, shared_ref, item, with_shared) for item in items]
        index_of = {ref: index for index, ref in enumerate(refs)}
        results: list[Any] = [None] * len(items)
        pending = list(refs)
        while pending:
            done, pending = ray.wait(pending, num_returns=1)
            index = index_of[done[0]]
            try:
                ok, value = ray.get(done[0])
            except ray.exceptions.RayError as error:
                ok, value = False, error
            if not ok:
                for ref in pending:
                    ray.cancel(ref, force=True)
                raise tracker.fail(index, value) from None
            results[index] = value
            tracker.succeeded(index, value)
        return results
