"""``svc admin``: operator commands on accounts (plans, credits, announcements).

Each change is recorded: a plan grant row for ``grant-plan``, a credits ledger ``adjustment`` for
``credits``. Settings come from the environment, as for the service.

Example:
    >>> from click.testing import CliRunner
    >>> "grant-plan" in CliRunner().invoke(command, ["--help"]).output
    True
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import click

from svc_api.accounts import service as accounts
from svc_api.accounts.plans import PLANS
from svc_api.core.errors import DomainError
from svc_api.core.services import Services
from svc_api.core.store import StoreUnavailable
from svc_api.credits import service as credits
from svc_api.migrations import migrate
from svc_api.notifications import service as notifications
from svc_api.settings import Settings


def _run(work: Callable[[Services], Any]) -> None:
    services = Services(Settings.from_env(), migrate=migrate)
    try:
        result = work(services)
    except (DomainError, StoreUnavailable, ValueError) as exc:
        raise click.ClickException(str(exc)) from None
    finally:
        services.close()
    click.echo(json.dumps(result, sort_keys=True))


@click.group("admin")
def command() -> None:
    """Operator commands on accounts."""


@command.command("grant-plan")
@click.argument("svc_id")
@click.argument("plan", type=click.Choice(PLANS[1:]))
@click.option("--days", required=True, type=click.IntRange(1, 36500), help="Days added to the time held.")
@click.option("--demo", is_flag=True, help="Grant a demo (sets demo_expires_at) instead of a licence.")
def grant_plan(svc_id: str, plan: str, days: int, demo: bool) -> None:
    """Extend PLAN for SVC_ID by --days, stacked on the time already held."""

    def work(services: Services) -> dict[str, Any]:
        with services.store.write() as conn:
            return accounts.grant_plan(conn, svc_id.upper(), plan, days, demo=demo, source="admin")

    _run(work)


# ignore_unknown_options lets a negative AMOUNT (-2.5) through as an argument instead of an option.
@command.command("credits", context_settings={"ignore_unknown_options": True})
@click.argument("svc_id")
@click.argument("amount")
@click.option("--reason", required=True, help="Why (kept in the ledger, never shown to the user).")
def credits_(svc_id: str, amount: str, reason: str) -> None:
    """Add (or, negative, remove) AMOUNT credits for SVC_ID as a ledger adjustment."""
    _run(lambda services: credits.adjust_credits(services.store, svc_id.upper(), amount, reason=reason))


@command.command("announce")
@click.argument("title")
@click.argument("body")
def announce(title: str, body: str) -> None:
    """Publish a platform announcement (listed by platform_notifications)."""

    def work(services: Services) -> dict[str, int]:
        with services.store.write() as conn:
            return {"id": notifications.announce(conn, title, body)}

    _run(work)
