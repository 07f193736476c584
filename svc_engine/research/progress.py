"""Progress of a sweep: a live bar on a terminal, plain lines in a notebook, a log or a pipe."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from svc_engine.executors import ProgressFn


@contextmanager
def progress_of(progress: ProgressFn | bool | None, total: int) -> Iterator[ProgressFn | None]:
    """The callback a sweep reports to: ``progress`` itself, or for ``True`` a live bar on a terminal
    and :func:`log_progress` lines elsewhere (a notebook, a log, a pipe); None for none.

    Example:
        >>> with progress_of(None, 3) as report:
        ...     report is None
        True
    """
    if progress is True:
        from rich.console import Console
        from rich.progress import Progress

        console = Console(stderr=True)
        if console.is_terminal and not console.is_jupyter:  # a live bar where it can be redrawn
            with Progress(console=console) as bar:
                task = bar.add_task("sweep", total=total)
                yield lambda event: bar.update(task, completed=event["done"], description=event["item"])
            return
        # a notebook (whose live bar needs a widget front end that a kernel run headless, a viewer
        # or an export lacks), a log or a pipe: plain lines, shown by every one of them
        yield log_progress("sweep", total)
        return
    yield progress or None


def log_progress(what: str, total: int, stream: Any = None) -> ProgressFn:
    """A progress callback that writes plain lines (``sweep: 3/10 chunks (30%), BTCUSDT 1h #0-9``)
    to ``stream`` (default ``sys.stderr``): the first event, then one per tenth of the work, and
    the last; for a log file or a pipe, where a redrawn bar is noise.

    Example:
        >>> import io
        >>> out = io.StringIO()
        >>> say = log_progress("sweep", 2, out)
        >>> say({"done": 1, "item": "A 1h #0-0"}); say({"done": 2, "item": "B 1h #0-0"})
        >>> out.getvalue().splitlines()
        ['sweep: 1/2 chunks (50%), A 1h #0-0', 'sweep: 2/2 chunks (100%), B 1h #0-0']
    """
    import sys

    shown = [-1]

    def say(event: dict[str, Any]) -> None:
        done = int(event["done"])
        tenth = done * 10 // max(total, 1)
        if tenth == shown[0] and done != total:
            return
        shown[0] = tenth
        pct = 100 * done // max(total, 1)
        print(
            f"{what}: {done}/{total} chunks ({pct}%), {event.get('item', '')}",
            file=stream or sys.stderr,
            flush=True,
        )

    return say
