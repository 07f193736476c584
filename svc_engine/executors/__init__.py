"""Executors: run a function over many items on threads, on Ray, or in process (the fake).

All share one interface, :class:`Executor`; the simulation drivers take any of them.

Example:
    >>> from svc_engine.executors import LocalExecutor
    >>> with LocalExecutor(max_workers=2) as ex:
    ...     ex.map(len, ["abc", "de"])
    [3, 2]
"""

from svc_engine.executors.base import Executor, ProgressEvent, ProgressFn
from svc_engine.executors.local import LocalExecutor
from svc_engine.executors.ray_executor import RayExecutor
from svc_engine.executors.serial import SerialExecutor

__all__ = ["Executor", "LocalExecutor", "ProgressEvent", "ProgressFn", "RayExecutor", "SerialExecutor"]
