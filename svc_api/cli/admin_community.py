"""``svc admin leader ...``, ``svc admin reports``, ``svc admin moderator``: operator commands of
the community (attached to ``svc admin`` by :mod:`svc_api.cli`).

Example:
    >>> from click.testing import CliRunner
    >>> "approve" in CliRunner().invoke(leader, ["--help"]).output
    True
"""

from __future__ import annotations

from typing import Any

import click

from svc_api.accounts import service as accounts
from svc_api.cli.admin import _run
from svc_api.community import service as community
from svc_api.core.services import Services


@click.group("leader")
def leader() -> None:
    """Review leader applications."""


def _decide(svc_id: str, approve: bool) -> None:
    _run(lambda services: community.decide(services.store, svc_id.upper(), approve, now=services.clock.now()))


@leader.command("approve")
@click.argument("svc_id")
def approve(svc_id: str) -> None:
    """Approve the pending application of SVC_ID: they become a leader and are notified."""
    _decide(svc_id, True)


@leader.command("reject")
@click.argument("svc_id")
def reject(svc_id: str) -> None:
    """Reject the pending application of SVC_ID (their nickname is freed; they are notified)."""
    _decide(svc_id, False)


@leader.command("pending")
@click.option("--limit", default=100, type=click.IntRange(1, 1000))
def pending(limit: int) -> None:
    """List pending applications, oldest first."""
    _run(lambda services: community.pending(services.store, limit))


@click.command("reports")
@click.option("--limit", default=100, type=click.IntRange(1, 1000))
def reports(limit: int) -> None:
    """List the newest reports of posts and chat messages."""
    _run(lambda services: community.reports(services.store, limit))


@click.command("moderator")
@click.argument("svc_id")
@click.option("--remove", is_flag=True, help="Take the moderator role back (the account becomes a member).")
def moderator(svc_id: str, remove: bool) -> None:
    """Make SVC_ID a moderator of every chat channel (community_role admin)."""

    def work(services: Services) -> dict[str, Any]:
        role = "member" if remove else "admin"
        with services.store.write() as conn:
            if accounts.community_role(conn, svc_id.upper()) == "leader":
                raise click.ClickException(
                    f"{svc_id.upper()} is a leader; a leader moderates their own channel"
                )
            accounts.set_community_role(conn, svc_id.upper(), role)
        return {"svc_id": svc_id.upper(), "community_role": role}

    _run(work)
