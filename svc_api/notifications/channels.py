"""Which channels each kind of event goes out on, and which of them a user has switched on.

``app`` is a record (``notifications_list``), ``mail`` an e-mail, ``bot`` and ``messenger`` a message
through the bot API to the user's linked messenger chat: ``bot`` carries what the platform pushes
(posts, signals, announcements), ``messenger`` what concerns the account itself. A channel is used
when its switch is on and, for an event of a category (``announcement`` or ``account``), that
category's switch too. Event types not listed go to ``app`` only.

Example:
    >>> route_of("community_post").channels
    ('app', 'mail', 'bot')
    >>> switches = dict.fromkeys(("app", "announcement", "account", "bot", "messenger", "mail"), True)
    >>> wanted_channels(route_of("announcement"), {**switches, "announcement": False})
    ()
    >>> wanted_channels(route_of("leader_approved"), {**switches, "mail": False})
    ('app', 'messenger')
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

BOT_CHANNELS = ("bot", "messenger")


@dataclass(frozen=True)
class Route:
    """The channels of an event type and the category switch that must be on (None: no category)."""

    channels: tuple[str, ...]
    category: str | None = None


ROUTES: Mapping[str, Route] = {
    "community_post": Route(("app", "mail", "bot")),
    "announcement": Route(("app", "mail", "bot"), "announcement"),
    "leader_approved": Route(("app", "mail", "messenger"), "account"),
    "leader_rejected": Route(("app", "mail", "messenger"), "account"),
    "referral_commission": Route(("app", "messenger"), "account"),
    "signal_opened": Route(("app", "bot")),
    "signal_closed": Route(("app", "bot")),
    "signal_withheld": Route(("app", "bot")),
}
_APP_ONLY = Route(("app",))


def route_of(event_type: str) -> Route:
    """The :class:`Route` of ``event_type`` (``app`` only when it is not listed).

    Example:
        >>> route_of("backtest_complete")
        Route(channels=('app',), category=None)
    """
    return ROUTES.get(event_type, _APP_ONLY)


def wanted_channels(route: Route, switches: Mapping[str, bool]) -> tuple[str, ...]:
    """The channels of ``route`` the user's ``switches`` allow."""
    if route.category is not None and not switches.get(route.category, True):
        return ()
    return tuple(c for c in route.channels if switches.get(c, True))
