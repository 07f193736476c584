"""Helpers of the community tests: a leader made through the API and the operator command, and a
run of the notification workers."""

from __future__ import annotations

import json
from typing import Any

from click.testing import CliRunner

from svc_api.cli import main as svc
from svc_api.notifications import service as notifications

APPLICATION = {
    "display_name": "Crypto Lab",
    "reason": "I have published daily market notes for four years.",
    "experience": "Six years of spot trading; I teach risk management.",
    "has_500_followers": True,
    "twitter": "@cryptolab",
}


def admin(*args: str) -> Any:
    """``svc admin ...`` (or ``svc economic ...`` when the first argument is ``economic``) against the
    database in the environment; the parsed JSON output."""
    result = CliRunner().invoke(svc, list(args) if args[0] == "economic" else ["admin", *args])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def make_leader(api: Any, name: str = "Crypto Lab") -> tuple[str, str]:
    """A user who applied and was approved by the operator command: (svc_id, token)."""
    user = api.register()
    reply = api.user(
        "community_leader_apply", {**APPLICATION, "display_name": name}, token=user["session_token"]
    )
    assert reply.status_code == 200, reply.text
    admin("leader", "approve", user["svc_id"])
    return user["svc_id"], user["session_token"]


def run_notification_workers(api: Any) -> dict[str, int]:
    """One run of the fan-out and outbox workers at the app's clock."""
    services = api.app.state.services
    now = services.clock.now()
    notifications.run_fanouts(services.store, now=now)
    return notifications.deliver_due(services.store, notifications.transports_for(services.settings), now=now)
