"""The executor contract, checked on every executor: order, shared data, progress, errors, load."""

from __future__ import annotations

import math
import operator
import threading
import time
from collections.abc import Iterator

import pytest

from svc_engine.executors import Executor, LocalExecutor, RayExecutor, SerialExecutor


@pytest.fixture(scope="session")
def ray_executor() -> Iterator[RayExecutor]:
    pytest.importorskip("ray")
    try:
        executor = RayExecutor(num_cpus=2, object_store_memory=200 * 1024 * 1024)
    except Exception as error:  # a sandbox without shared memory or sockets
        pytest.skip(f"a local Ray runtime cannot start here: {error}")
    yield executor
    executor.close()


def _executors(request: pytest.FixtureRequest) -> Executor:
    if request.param == "ray":
        return request.getfixturevalue("ray_executor")
    return {"serial": SerialExecutor, "local": lambda: LocalExecutor(max_workers=2)}[request.param]()


@pytest.fixture(params=["serial", "local", pytest.param("ray", marks=pytest.mark.ray)])
def executor(request: pytest.FixtureRequest) -> Executor:
    return _executors(request)


def test_map_keeps_the_order_of_items(executor: Executor) -> None:
    assert executor.map(operator.neg, list(range(7))) == [0, -1, -2, -3, -4, -5, -6]


def test_map_of_nothing_is_empty(executor: Executor) -> None:
    assert executor.map(operator.neg, []) == []


def test_shared_is_passed_first_to_every_call(executor: Executor) -> None:
    assert executor.map(operator.mul, [1, 2, 3], shared=(5,)) == [(5,), (5, 5), (5, 5, 5)]


def test_progress_reports_each_item_then_100(executor: Executor) -> None:
    events: list[dict] = []
    executor.map(operator.neg, [1, 2, 3, 4], labels=["a", "b", "c", "d"], progress=events.append)
    assert [e["done"] for e in events] == [1, 2, 3, 4]
    assert {e["total"] for e in events} == {4}
    assert [e["pct"] for e in events] == [25.0, 50.0, 75.0, 100.0]
    assert sorted(e["item"] for e in events) == ["a", "b", "c", "d"]
    assert {e["status"] for e in events} == {"completed"}


def test_an_error_propagates_unchanged_with_the_item_named(executor: Executor) -> None:
    events: list[dict] = []
    with pytest.raises(ValueError, match="math domain error") as info:
        executor.map(math.sqrt, [4.0, -1.0], labels=["ok", "bad"], progress=events.append)
    assert "while computing item 'bad' (2 of 2)" in info.value.__notes__
    assert events[-1]["status"] == "failed"
    assert events[-1]["item"] == "bad"


def test_a_handled_failure_is_reported_as_failed_and_the_map_goes_on(executor: Executor) -> None:
    events: list[dict] = []
    out = executor.map(operator.neg, [1, -2, 3], progress=events.append, failed=lambda v: v > 0)
    assert out == [-1, 2, -3]
    assert sorted((e["item"], e["status"]) for e in events) == [
        ("0", "completed"),
        ("1", "failed"),
        ("2", "completed"),
    ]


def test_labels_must_match_items(executor: Executor) -> None:
    with pytest.raises(ValueError, match="labels has 1 entries for 2 items"):
        executor.map(operator.neg, [1, 2], labels=["x"])


def test_idle_executor_is_not_busy(executor: Executor) -> None:
    # Ray reports freed CPUs asynchronously after earlier tasks: give it a moment, boundedly
    deadline = time.monotonic() + 10
    while executor.busy() != 0.0 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert executor.busy() == 0.0
    assert executor.workers >= 1


def test_local_busy_counts_running_items() -> None:
    gate, started = threading.Event(), threading.Barrier(3)

    def hold(_: int) -> int:
        started.wait()
        gate.wait(5)
        return 1

    with LocalExecutor(max_workers=4) as executor:
        worker = threading.Thread(target=executor.map, args=(hold, [0, 1]))
        worker.start()
        started.wait(5)
        assert executor.busy() == 0.5
        gate.set()
        worker.join(5)
        assert executor.busy() == 0.0


def test_local_runs_items_at_the_same_time() -> None:
    barrier = threading.Barrier(2, timeout=5)
    with LocalExecutor(max_workers=2) as executor:
        assert executor.map(lambda x: barrier.wait() * 0 + x, [1, 2]) == [1, 2]


def test_local_serves_maps_from_several_threads_at_once() -> None:
    results: dict[int, list[int]] = {}
    with LocalExecutor(max_workers=2) as executor:

        def job(k: int) -> None:
            results[k] = executor.map(operator.mul, list(range(50)), shared=k)

        threads = [threading.Thread(target=job, args=(k,)) for k in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(10)
    assert results == {k: [k * i for i in range(50)] for k in range(4)}
    assert executor.busy() == 0.0


def test_local_refuses_zero_workers() -> None:
    with pytest.raises(ValueError, match="max_workers must be at least 1, got 0"):
        LocalExecutor(max_workers=0)


def test_serial_and_local_are_executors() -> None:
    assert isinstance(SerialExecutor(), Executor)
    assert SerialExecutor().workers == 1
    assert LocalExecutor(max_workers=2).workers == 2


@pytest.mark.ray
def test_ray_reports_two_workers(ray_executor: RayExecutor) -> None:
    assert ray_executor.workers == 2
