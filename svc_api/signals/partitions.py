"""Several signal workers sharing the passes: the coins split between the live worker processes.

Every coin belongs to one of ``PARTITIONS`` partitions (a hash of its market and symbol), and a
worker process, at each pass, renews its lease in ``signal_workers`` (``SIGNAL_LEASE_SECONDS``,
default 30) and takes the partitions ``k`` with ``live[k % len(live)] == itself`` among the live
workers sorted by name. A coin's watches are therefore advanced by one process (its indicators are
computed once per coin), the work spreads evenly over the processes, and a worker that dies stops
renewing: within one lease period the others see it gone and take its coins, starting from the
candle each watch was evaluated at. Two workers whose views differ for a moment may both advance
one watch; the compare-and-set of each watch's move lets only one write it.

Example:
    >>> mine(["a", "b"], "a")[:4], partition_of("crypto", "BTCUSDT") < PARTITIONS
    ([0, 2, 4, 6], True)
"""

from __future__ import annotations

import functools
import zlib
from collections.abc import Sequence
from typing import Any

from svc_api.core.liveness import HOLDER
from svc_api.signals import queries

PARTITIONS = 64


@functools.lru_cache(maxsize=65536)
def partition_of(market: str, symbol: str) -> int:
    """The partition of a coin (stable across processes and hosts)."""
    return zlib.crc32(f"{market}/{symbol}".encode()) % PARTITIONS


def mine(live: Sequence[str], holder: str) -> list[int]:
    """The partitions ``holder`` takes among the ``live`` workers."""
    order = sorted(set(live) | {holder})
    return [k for k in range(PARTITIONS) if order[k % len(order)] == holder]


def holder_of(services: Any) -> str:
    """This process's name among the workers (tests give several apps of one process names)."""
    return str(getattr(services, "worker_holder", None) or HOLDER)


def my_partitions(services: Any) -> set[int]:
    """Renew this worker's lease and return the partitions it advances in this pass."""
    now = services.clock.now()
    holder = holder_of(services)
    with services.store.write() as conn:
        queries.renew_worker(conn, holder, alive_until=now + services.settings.signal_lease_seconds, now=now)
        live = queries.live_workers(conn, now=now)
    return set(mine(live, holder))


def release(services: Any) -> None:
    """Give this worker's coins back (a clean stop)."""
    with services.store.write() as conn:
        queries.drop_worker(conn, holder_of(services))
