"""The executor interface: map a function over items on some pool of workers, in order.

Every executor (threads, Ray tasks, the in-process fake) keeps the same promises, so a driver
written against one runs unchanged on the others:

- ``map(fn, items, *, shared=None, labels=None, progress=None, failed=None) -> list``: in the order of
  ``items``. With ``shared``, each call is ``fn(shared, item)`` and ``shared`` travels to the workers
  once (Ray puts it in the object store once); without it, ``fn(item)``.
- The first failing item stops the map: pending items are cancelled and its exception is raised
  unchanged, with a note naming the item.
- ``progress(event)`` is called in the caller's thread after each item with
  ``{"done", "total", "item", "index", "status", "pct"}`` (``status`` is ``completed`` or ``failed``;
  ``pct`` is the overall percentage, 100 after the last item). ``failed(result) -> bool`` marks
  results that stand for a handled failure (say, a coin without data) as ``failed`` in the events.
- ``workers`` (how many items run at once), ``busy()`` (load in 0..1, for adaptive concurrency),
  ``close()`` and use as a context manager.

Example:
    >>> from svc_engine.executors import SerialExecutor
    >>> events = []
    >>> with SerialExecutor() as ex:
    ...     ex.map(abs, [-1, 2, -3], progress=events.append)
    [1, 2, 3]
    >>> events[-1]["pct"], events[-1]["done"], events[-1]["total"]
    (100.0, 3, 3)
"""

from __future__ import annotations

import abc
from collections.abc import Callable, Sequence
from types import TracebackType
from typing import Any, Self

ProgressEvent = dict[str, Any]
ProgressFn = Callable[[ProgressEvent], None]


class Executor(abc.ABC):
    """Runs one function over many items on a pool of workers; see the module docstring.

    Example:
        >>> from svc_engine.executors import LocalExecutor
        >>> isinstance(LocalExecutor(max_workers=1), Executor)
        True
    """

    @property
    @abc.abstractmethod
    def workers(self) -> int:
        """How many items can run at the same time."""

    @abc.abstractmethod
    def busy(self) -> float:
        """The current load, 0 (idle) to 1 (every worker taken)."""

    @abc.abstractmethod
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
        """``[fn(item) for item in items]`` (or ``fn(shared, item)``), computed on the workers."""

    def close(self) -> None:  # noqa: B027 - executors without resources need no cleanup
        """Release the workers; the executor cannot be used afterwards."""

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


class Tracker:
    """Counts finished items and turns each into a progress event.

    Example:
        >>> seen = []
        >>> t = Tracker(2, None, seen.append)
        >>> t.finished(1, ok=True)
        >>> seen[0]["item"], seen[0]["pct"]
        ('1', 50.0)
    """

    def __init__(
        self,
        total: int,
        labels: Sequence[str] | None,
        progress: ProgressFn | None,
        failed: Callable[[Any], bool] | None = None,
    ) -> None:
        if labels is not None and len(labels) != total:
            raise ValueError(f"labels has {len(labels)} entries for {total} items")
        self.total = total
        self.done = 0
        self._labels = labels
        self._progress = progress
        self._failed = failed

    def label(self, index: int) -> str:
        """The item's name in events and error notes: its label, else its position."""
        return str(self._labels[index]) if self._labels is not None else str(index)

    def finished(self, index: int, *, ok: bool) -> None:
        """Record that item ``index`` ended, and report it."""
        self.done += 1
        if self._progress is None:
            return
        self._progress(
            {
                "done": self.done,
                "total": self.total,
                "item": self.label(index),
                "index": index,
                "status": "completed" if ok else "failed",
                "pct": round(100.0 * self.done / self.total, 6),
            }
        )

    def succeeded(self, index: int, result: Any) -> None:
        """Record that item ``index`` returned ``result`` (a handled failure if ``failed`` says so)."""
        self.finished(index, ok=self._failed is None or not self._failed(result))

    def fail(self, index: int, error: BaseException) -> BaseException:
        """Report item ``index`` as failed and name it on its exception, ready to raise."""
        self.finished(index, ok=False)
        error.add_note(f"while computing item {self.label(index)!r} ({index + 1} of {self.total})")
        return error


def call(fn: Callable[..., Any], shared: Any, item: Any, with_shared: bool) -> Any:
    """Call ``fn`` the way ``map`` promises: with ``shared`` first when one was given."""
    return fn(shared, item) if with_shared else fn(item)
