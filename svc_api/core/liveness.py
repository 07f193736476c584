"""Who holds a piece of work, and whether that holder is still alive.

Every server or worker process has a :data:`HOLDER` id, ``<host>:<pid>:<process start time>``. Rows
of in-flight work (an idempotent request, a running backtest) record it. After a crash, a holder on
this host whose process is gone (or whose pid now belongs to a process started at another time) is
known dead at once, so its work is settled on start-up instead of after a timeout; a holder on
another host is judged by its lease, which the living holder renews.

Example:
    >>> is_dead(HOLDER)
    False
    >>> is_dead(f"{socket.gethostname()}:999999999:1")
    True
    >>> is_dead("elsewhere:1:1")
    False
"""

from __future__ import annotations

import os
import socket
from pathlib import Path

LEASE_SECONDS = 30
"""How long a claim holds without renewal: a holder on another host that stops renewing (dead or
cut off) loses its work after this."""
RENEW_EVERY = 10.0


def _start_time(pid: int) -> str | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # The command name (field 2) may hold spaces and parentheses: count from the last ')'.
    return stat.rsplit(")", 1)[1].split()[19]


def holder_id(pid: int | None = None) -> str:
    """The holder id of process ``pid`` (default: this one).

    Example:
        >>> holder_id().startswith(socket.gethostname() + ":")
        True
    """
    pid = os.getpid() if pid is None else pid
    return f"{socket.gethostname()}:{pid}:{_start_time(pid) or 0}"


HOLDER = holder_id()


def is_dead(holder: str | None) -> bool:
    """True when ``holder`` ran on this host and its process is gone; False when it lives, or runs
    elsewhere (then only its lease can tell)."""
    if not holder:
        return False
    host, _, rest = holder.partition(":")
    pid, _, started = rest.partition(":")
    if host != socket.gethostname() or not pid.isdigit():
        return False
    return _start_time(int(pid)) != started


__all__ = ["HOLDER", "LEASE_SECONDS", "RENEW_EVERY", "holder_id", "is_dead"]
