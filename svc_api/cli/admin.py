"""``svc admin``: operator commands on accounts (plans, credits, announcements, referral rates,
purchases and refunds).

Each change is recorded: a plan grant row for ``grant-plan``, a credits ledger ``adjustment`` for
``credits``, a purchase row (with its plan grant and the inviter's commission) for ``purchase``.
Settings come from the environment, as for the service.

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
from svc_api.billing import service as billing
from svc_api.core.errors import DomainError
from svc_api.core.services import Services
from svc_api.core.store import StoreUnavailable
from svc_api.credits import service as credits
from svc_api.migrations import migrate
from svc_api.notifications import service as notifications
from svc_api.referrals import service as referrals
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
            return accounts.grant_plan(
                conn, svc_id.upper(), plan, days, demo=demo, source="admin", now=services.clock.now()
            )

    _run(work)


# ignore_unknown_options lets a negative AMOUNT (-2.5) through as an argument instead of an option.
@command.command("credits", context_settings={"ignore_unknown_options": True})
@click.argument("svc_id")
@click.argument("amount")
@click.option("--reason", required=True, help="Why (kept in the ledger, never shown to the user).")
def credits_(svc_id: str, amount: str, reason: str) -> None:
    """Add (or, negative, remove) AMOUNT credits for SVC_ID as a ledger adjustment."""
    _run(
        lambda services: credits.adjust_credits(
            services.store, svc_id.upper(), amount, reason=reason, now=services.clock.now()
        )
    )


@command.command("announce")
@click.argument("title")
@click.argument("body")
def announce(title: str, body: str) -> None:
    """Publish a platform announcement (listed by platform_notifications)."""

    def work(services: Services) -> dict[str, int]:
        with services.store.write() as conn:
            return {"id": notifications.announce(conn, title, body, now=services.clock.now())}

    _run(work)


@command.command("referral-rate")
@click.argument("svc_id")
@click.argument("pct")
def referral_rate(svc_id: str, pct: str) -> None:
    """Set the referral commission rate of SVC_ID to PCT percent (0-100, at most 2 decimals; the
    default is 20). It applies to purchases applied from then on."""
    _run(lambda services: referrals.referral_rate(services.store, svc_id.upper(), pct))


@command.command("purchase")
@click.argument("svc_id")
@click.argument("plan", type=click.Choice(PLANS[1:]))
@click.argument("period", type=click.Choice(("monthly", "annual")))
@click.option("--purchase-id", required=True, help="The purchase's id in its channel (idempotency key).")
@click.option("--amount", default=None, help="USDT paid (default: the list price of PLAN and PERIOD).")
@click.option("--source", default="admin", show_default=True, help="The channel reporting the purchase.")
def purchase(svc_id: str, plan: str, period: str, purchase_id: str, amount: str | None, source: str) -> None:
    """Apply a purchase of PLAN for PERIOD by SVC_ID: plan time and the inviter's commission, once."""

    def work(services: Services) -> dict[str, Any]:
        now = services.clock.now()
        return billing.purchase(
            services.store, svc_id.upper(), plan, period, purchase_id, amount, source, now=now
        )

    _run(work)


@command.command("refund")
@click.argument("purchase_id")
@click.option("--source", default="admin", show_default=True, help="The channel that reported the purchase.")
def refund(purchase_id: str, source: str) -> None:
    """Refund a purchase: its plan time is taken back and the inviter's commission reversed."""
    _run(lambda services: billing.refund(services.store, source, purchase_id, now=services.clock.now()))
