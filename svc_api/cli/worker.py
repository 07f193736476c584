"""``svc worker``: run the registered background workers in a process of their own.

For deployments that keep HTTP processes light: start the servers with ``SVC_RUN_WORKERS=0`` and one
``svc worker`` beside them. It migrates the store, starts every worker of :mod:`svc_api.workers`
(or those named with ``--only``), logs their health every ``--report`` seconds, and stops them
cleanly on SIGTERM or Ctrl-C.

Example:
    >>> from click.testing import CliRunner
    >>> "--only" in CliRunner().invoke(command, ["--help"]).output
    True
"""

from __future__ import annotations

import logging
import signal
import threading
from typing import Any

import click

logger = logging.getLogger("svc_api.workers")


@click.command("worker")
@click.option("--only", multiple=True, help="Run only this worker (repeatable); default: all registered.")
@click.option(
    "--report",
    default=60.0,
    show_default=True,
    type=click.FloatRange(min=0.1),
    help="Seconds between health lines in the log.",
)
def command(only: tuple[str, ...], report: float) -> None:
    """Run the background workers (settings from the environment, as for ``svc serve``)."""
    from svc_api.core.services import Services
    from svc_api.migrations import migrate
    from svc_api.settings import Settings
    from svc_api.workers import REGISTRY

    unknown = sorted(set(only) - set(REGISTRY.names()))
    if unknown:
        raise click.UsageError(f"unknown worker(s) {unknown}; known: {REGISTRY.names()}")
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    services = Services(Settings.from_env(), migrate=migrate)
    services.open()
    running = REGISTRY.start(services, set(only) or None)
    stop = threading.Event()

    def finish(*_: Any) -> None:
        stop.set()

    signal.signal(signal.SIGTERM, finish)
    signal.signal(signal.SIGINT, finish)
    click.echo(f"workers running: {[w.name for w in running.workers]}")
    try:
        while not stop.wait(report):
            logger.info("health %s", running.health())
    finally:
        running.stop()
        services.close()
        click.echo("workers stopped")
