"""What "now" is for the service: wall time in production, a clock tests move by hand.

Every new domain reads time through ``services.clock`` (handlers: ``call.now``) so that a test can
step through days (a 15-day purge, a monthly renewal, a refund window) without sleeping.

Example:
    >>> clock = ManualClock(1_700_000_000)
    >>> clock.now()
    1700000000
    >>> clock.advance(15 * 86400); clock.now()
    1701296000
    >>> WallClock().now() > 1_700_000_000
    True
"""

from __future__ import annotations

import threading
import time
from typing import Protocol


class Clock(Protocol):
    """A source of the current time in whole seconds since the epoch."""

    def now(self) -> int:
        """The current time, seconds since the epoch."""
        ...

    def seconds(self) -> float:
        """The current time with its fraction (rate-limit windows count in fractions of a second)."""
        ...


class WallClock:
    """The machine's clock.

    Example:
        >>> abs(WallClock().now() - int(time.time())) <= 1
        True
    """

    def now(self) -> int:
        """``int(time.time())``."""
        return int(time.time())

    def seconds(self) -> float:
        """``time.time()``."""
        return time.time()


class ManualClock:
    """A clock that only moves when told to (tests, replays); safe to share between threads.

    Example:
        >>> c = ManualClock(100); c.set(250); c.advance(5); c.now()
        255
    """

    def __init__(self, start: int) -> None:
        self._now = int(start)
        self._lock = threading.Lock()

    def now(self) -> int:
        """The time it was last set or advanced to."""
        with self._lock:
            return self._now

    def seconds(self) -> float:
        """:meth:`now` as a float (a manual clock moves in whole seconds)."""
        return float(self.now())

    def set(self, when: int) -> None:
        """Jump to ``when`` (seconds since the epoch)."""
        with self._lock:
            self._now = int(when)

    def advance(self, seconds: int) -> None:
        """Move forward by ``seconds`` (never backwards: a negative step is refused).

        Example:
            >>> ManualClock(0).advance(-1)
            Traceback (most recent call last):
            ...
            ValueError: a clock never moves backwards (-1 s)
        """
        if seconds < 0:
            raise ValueError(f"a clock never moves backwards ({seconds} s)")
        with self._lock:
            self._now += int(seconds)
