"""``svc admin edu payout-run``, ``payout-export`` and ``fx-rate``: the education marketplace's
monthly payout run, its CSV written again, and the FX rates it converts with (attached to
``svc admin edu`` in :mod:`svc_api.cli`).

Example:
    >>> from click.testing import CliRunner
    >>> "--period" in CliRunner().invoke(payout_run, ["--help"]).output
    True
    >>> parse_now("2026-11-25"), parse_now("1795600000")
    (1795564800, 1795600000)
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import click

from svc_api.cli.admin import _run
from svc_api.core.services import Services
from svc_api.education.payouts import service as payouts


def parse_now(text: str) -> int:
    """Unix seconds, or an ISO 8601 date or date-time (UTC unless it names a zone)."""
    if text.isdigit():
        return int(text)
    try:
        when = dt.datetime.fromisoformat(text)
    except ValueError:
        raise click.BadParameter(
            f"give Unix seconds or an ISO date such as 2026-11-25, got {text!r}"
        ) from None
    return int((when if when.tzinfo else when.replace(tzinfo=dt.UTC)).timestamp())


@click.command("payout-run")
@click.option("--period", default=None, help="The month to pay, YYYY-MM (default: the last closed month).")
@click.option("--now", "now_text", default=None, help="Run as of this time (Unix seconds or ISO date).")
def payout_run(period: str | None, now_text: str | None) -> None:
    """Write the statements of closed months and issue the payouts that are due (see
    docs/education-api.md, "Sales and payouts"); prints the run's report as JSON."""

    def work(services: Services) -> dict[str, Any]:
        now = parse_now(now_text) if now_text else services.clock.now()
        policy = payouts.Policy.from_settings(services.settings)
        return payouts.payout_run(services.store, policy, services.settings.var_dir, period=period, now=now)

    _run(work)


@click.command("payout-export")
@click.argument("run_id")
def payout_export(run_id: str) -> None:
    """Write the CSV of run RUN_ID again (its payouts were committed but the file was not written,
    or was lost); prints the file and the number of payouts."""

    def work(services: Services) -> dict[str, Any]:
        return payouts.export_again(services.store, services.settings.var_dir, run_id)

    _run(work)


@click.command("fx-rate")
@click.argument("base")
@click.argument("quote")
@click.argument("rate")
def fx_rate(base: str, quote: str, rate: str) -> None:
    """Set the rate of BASE in QUOTE (units of QUOTE per BASE), e.g. ``USD TRY 41.25``."""

    def work(services: Services) -> dict[str, Any]:
        with services.store.write() as conn:
            return payouts.set_fx_rate(conn, base, quote, rate, now=services.clock.now())

    _run(work)
