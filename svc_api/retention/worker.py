"""The retention worker: a pass of :func:`svc_api.retention.service.run_once` every
``RETENTION_SWEEP_SECONDS`` (default an hour; 0: off).

Example:
    >>> from types import SimpleNamespace
    >>> retention_worker(SimpleNamespace(settings=SimpleNamespace(retention_sweep_seconds=0))) is None
    True
"""

from __future__ import annotations

from typing import Any

from svc_api.core.objectstore import from_settings
from svc_api.core.workers import Periodic
from svc_api.retention.service import Policy, run_once


def retention_worker(services: Any) -> Periodic | None:
    """The periodic retention pass (None when ``RETENTION_SWEEP_SECONDS`` is 0)."""
    settings = services.settings
    every = settings.retention_sweep_seconds
    if every <= 0:
        return None
    policy = Policy.from_settings(settings)  # a bad policy stops the worker at start, loudly
    objects = from_settings(settings)
    return Periodic("retention", every, lambda: run_once(services, policy, objects))
