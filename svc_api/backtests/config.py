"""The job runner's configuration and load limits.

Configuration (``svc_api.settings.Settings``, from ``BACKTEST_MAX_CONCURRENT``,
``BACKTEST_QUEUE_CAPACITY``, ``BACKTEST_THREADS``, ``BACKTEST_STALE_SECONDS``, ``OBJECT_STORE_URL``,
``S3_ENDPOINT_URL``, ``RAY_ADDRESS``; docs/api.md lists them): :meth:`RunnerConfig.from_settings`.

Example:
    >>> adaptive_limit(4, busy=0.0), adaptive_limit(4, busy=1.0), adaptive_limit(1, busy=1.0)
    (4, 2, 1)
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from svc_api.settings import Settings, tunables_from_env


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


def others_load(busy: float, owners: Sequence[str], svc_id: str | None) -> float:
    """The executor's measured load ``busy`` (0..1) that ``svc_id``'s limit follows: only the share of
    the runner's jobs in flight (``owners``, one account per job) that belong to other accounts.

    The caller's own jobs are already counted against the limit one by one, and one job alone fills
    every worker (its chunks fan out to all of them): counting them again as load held a user alone
    on an idle server to 2 of the documented 3. With none of the runner's jobs in flight, the load is
    someone else's (a shared Ray cluster) and counts in full.

    Example:
        >>> others_load(1.0, ["A", "A"], "A"), others_load(1.0, ["A", "B"], "A"), others_load(0.5, [], "A")
        (0.0, 0.5, 0.5)
    """
    if not owners:
        return busy
    return busy * sum(1 for owner in owners if owner != svc_id) / len(owners)


class CapacityExceeded(Exception):
    """The runner's queue is full."""
