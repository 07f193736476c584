"""``svc admin rate-limit``: an account's own rate limits (per minute), for all its requests or one
endpoint group. A running server applies a change within a few seconds; the ``X-RateLimit-*``
headers of each response tell the limit that applied.

Example:
    >>> from click.testing import CliRunner
    >>> "set" in CliRunner().invoke(rate_limit, ["--help"]).output
    True
"""

from __future__ import annotations

from typing import Any

import click

from svc_api.cli.admin import _run
from svc_api.core.services import Services
from svc_api.limits import service as limits


@click.group("rate-limit")
def rate_limit() -> None:
    """Per-account rate limits (overrides of the plan's and of the endpoint groups')."""


_ENDPOINT = click.option(
    "--endpoint",
    type=click.Choice(limits.ENDPOINTS),
    help="The endpoint group (default: every request of the account).",
)


@rate_limit.command("set")
@click.argument("svc_id")
@click.argument("per_minute", type=click.IntRange(1, limits.MAX_PER_MINUTE))
@_ENDPOINT
@click.option("--reason", required=True, help="Why (kept with the override).")
def set_(svc_id: str, per_minute: int, endpoint: str | None, reason: str) -> None:
    """Give SVC_ID a limit of PER_MINUTE requests a minute (for --endpoint, or all its requests)."""

    def work(services: Services) -> dict[str, Any]:
        return limits.set_override(
            services.store,
            svc_id.upper(),
            per_minute,
            endpoint=endpoint or "default",
            reason=reason,
            now=services.clock.now(),
        )

    _run(work)


@rate_limit.command("clear")
@click.argument("svc_id")
@_ENDPOINT
def clear(svc_id: str, endpoint: str | None) -> None:
    """Remove SVC_ID's override for --endpoint (all of its overrides without it)."""
    _run(lambda services: limits.clear_override(services.store, svc_id.upper(), endpoint=endpoint))


@rate_limit.command("show")
@click.argument("svc_id")
def show(svc_id: str) -> None:
    """The overrides of SVC_ID."""
    _run(lambda services: limits.show(services.store, svc_id.upper()))
