"""The backtest job runner as one of the app's registered workers."""

from __future__ import annotations

from typing import Any

from svc_api.backtests.jobs import runner_of, start_runner, stop_runner


class RunnerWorker:
    """The app's :class:`JobRunner` as a registered worker (its lifecycle, health and one recovery pass).

    Example:
        >>> RunnerWorker(object()).name
        'backtest_runner'
    """

    name = "backtest_runner"

    def __init__(self, services: Any) -> None:
        self.services = services

    def start(self) -> None:
        """Start the app's runner (a store that is down defers it to the first launch)."""
        start_runner(self.services)

    def stop(self) -> None:
        """Stop the app's runner."""
        stop_runner(self.services)

    def health(self) -> dict[str, Any]:
        """``running`` with the jobs in flight, or ``stopped``."""
        runner = getattr(self.services, "backtest_runner", None)
        if runner is None:
            return {"state": "stopped"}
        in_flight, workers = runner.in_flight(), runner.workers()
        return {"state": "running", "jobs_in_flight": in_flight, "executor_workers": workers}

    def run_once(self) -> list[str]:
        """Fail and refund the jobs of dead processes now; the ids failed."""
        return runner_of(self.services).recover()
