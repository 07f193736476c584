"""``svc admin payments ...``: the payments that wait for an operator (no account found, a short
amount, an unknown product).

Example:
    >>> from click.testing import CliRunner
    >>> "assign" in CliRunner().invoke(payments, ["--help"]).output
    True
"""

from __future__ import annotations

from typing import Any

import click

from svc_api.billing import service as billing
from svc_api.billing.purchases import PERIOD_DAYS, PRICES
from svc_api.cli.admin import _run
from svc_api.core.services import Services


@click.group("payments")
def payments() -> None:
    """Payments waiting for an operator."""


@payments.command("pending")
@click.option("--limit", default=100, type=click.IntRange(1, 1000))
def pending(limit: int) -> None:
    """List the waiting payments, oldest first."""
    _run(lambda services: billing.pending_payments(services.store, limit))


@payments.command("assign")
@click.argument("payment_id")
@click.argument("svc_id")
@click.option(
    "--plan", default=None, type=click.Choice(list(PRICES)), help="Default: the payment's product's."
)
@click.option(
    "--period", default=None, type=click.Choice(list(PERIOD_DAYS)), help="Default: the payment's product's."
)
def assign(payment_id: str, svc_id: str, plan: str | None, period: str | None) -> None:
    """Apply a waiting payment to SVC_ID as --plan for --period (by default the plan and period of
    the payment's own product, when it names one)."""

    def work(services: Services) -> dict[str, Any]:
        now = services.clock.now()
        return billing.assign_payment(services.store, payment_id, svc_id.upper(), plan, period, now=now)

    _run(work)


@payments.command("dismiss")
@click.argument("payment_id")
def dismiss(payment_id: str) -> None:
    """Close a waiting payment without applying it."""
    _run(lambda services: billing.dismiss_payment(services.store, payment_id, now=services.clock.now()))
