"""``svc admin edu ...``: the education marketplace's operator commands: instructor roles, identity
confirmation, and the review of submitted products.

Example:
    >>> from click.testing import CliRunner
    >>> "review" in CliRunner().invoke(edu, ["--help"]).output
    True
"""

from __future__ import annotations

from typing import Any

import click

from svc_api.cli.admin import _run
from svc_api.core.services import Services
from svc_api.education.studio import service as studio


@click.group("edu")
def edu() -> None:
    """The education marketplace's operator commands."""


def _write(work: Any) -> None:
    def run(services: Services) -> Any:
        with services.store.write() as conn:
            return work(conn, services.clock.now())

    _run(run)


@edu.command("role")
@click.argument("svc_id")
@click.argument("role", type=click.Choice([*studio.ROLES, "none"]))
def role(svc_id: str, role: str) -> None:
    """Grant SVC_ID an instructor ROLE (``none`` takes a granted one back)."""
    _write(
        lambda conn, now: studio.grant_role(conn, svc_id.upper(), None if role == "none" else role, now=now)
    )


@edu.command("confirm-identity")
@click.argument("svc_id")
def confirm_identity(svc_id: str) -> None:
    """Record that an operator confirmed the seller's identity (the ``identity`` gate)."""
    _write(lambda conn, now: studio.confirm_identity(conn, svc_id.upper(), now=now))


@edu.command("pending")
@click.option("--limit", default=100, type=click.IntRange(1, 1000))
def pending(limit: int) -> None:
    """Submissions waiting for review, oldest first."""
    _write(lambda conn, now: studio.pending_submissions(conn, limit))


@edu.command("review")
@click.argument("submission_id")
@click.argument("decision", type=click.Choice(["approve", "reject"]))
@click.option("--reason", default=None, help="why (shown to the instructor); for rejections")
def review(submission_id: str, decision: str, reason: str | None) -> None:
    """Approve (publish the snapshot as the product's next revision) or reject a submission."""
    _write(lambda conn, now: studio.decide(conn, submission_id, decision == "approve", reason, now=now))
