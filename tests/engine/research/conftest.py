"""Shared fixtures of the research tests: one local Ray runtime for every Ray test of the session."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from svc_engine.executors import RayExecutor


@pytest.fixture(scope="session")
def ray_executor() -> Iterator[RayExecutor]:
    pytest.importorskip("ray")
    try:
        executor = RayExecutor(num_cpus=2, object_store_memory=200 * 1024 * 1024)
    except Exception as error:  # a sandbox without shared memory or sockets
        pytest.skip(f"a local Ray runtime cannot start here: {error}")
    yield executor
    executor.close()
