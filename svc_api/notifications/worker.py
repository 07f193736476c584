"""The notification workers: fan-outs and the outbox delivery (the messenger bot's own worker, which
reads the chats' updates, is :mod:`svc_api.bot.worker`).

Both run every ``NOTIFY_POLL_SECONDS`` (off at 0: tests call ``run_once`` themselves).

Example:
    >>> from types import SimpleNamespace
    >>> off = SimpleNamespace(settings=SimpleNamespace(notify_poll_seconds=0, bot_api_url=None))
    >>> fanout_worker(off), outbox_worker(off)
    (None, None)
"""

from __future__ import annotations

from typing import Any

from svc_api.core.workers import Periodic
from svc_api.notifications import service as notifications


def fanout_worker(services: Any) -> Periodic | None:
    """Writes the records and outbox rows of open fan-outs, a batch per transaction."""
    every = services.settings.notify_poll_seconds
    if every <= 0:
        return None
    return Periodic(
        "notification_fanout",
        every,
        lambda: notifications.run_fanouts(services.store, now=services.clock.now()),
    )


def outbox_worker(services: Any) -> Periodic | None:
    """Sends the due outbox rows (mail, bot, messenger) and schedules retries."""
    every = services.settings.notify_poll_seconds
    if every <= 0:
        return None
    transports = notifications.transports_for(services.settings)

    def deliver() -> dict[str, int]:
        return notifications.deliver_due(services.store, transports, now=services.clock.now())

    return Periodic("notification_outbox", every, deliver)
