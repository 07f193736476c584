"""The community: chat, leaders (applications, profiles, follows) and their posts.

The rules live in :mod:`~svc_api.community.chat`, :mod:`~svc_api.community.leaders` and
:mod:`~svc_api.community.posts`; this module is what other domains, the routes and the operator
commands use. It also names the audience ``followers`` (of a leader) for the notification fan-out.

Example:
    >>> from svc_api.notifications.fanout import AUDIENCES
    >>> "followers" in AUDIENCES
    True
"""

from __future__ import annotations

from typing import Any

from sqlalchemy.engine import Connection

from svc_api.community import queries
from svc_api.community.chat import delete as delete_message
from svc_api.community.chat import read as read_chat
from svc_api.community.chat import send as send_message
from svc_api.community.leaders import (
    application,
    apply,
    decide,
    follow,
    is_leader,
    leaders_page,
    pending,
    unfollow,
    update_profile,
    withdraw,
)
from svc_api.community.posts import comment, create, delete, feed, like, purge, report, reports
from svc_api.core.store import Store
from svc_api.core.workers import Periodic
from svc_api.notifications import service as notifications


def leader_names(conn: Connection, svc_ids: list[str]) -> dict[str, str]:
    """The display names of the community leaders among ``svc_ids`` (others are absent).

    Example:
        >>> with store.read() as conn:
        ...     leader_names(conn, ["NOPE00"])
        {}
    """
    return queries.leader_names(conn, sorted(set(svc_ids)))


def _followers(conn: Connection, leader_id: str, after: str | None, limit: int) -> list[str]:
    return queries.followers_after(conn, leader_id, after, limit)


notifications.register_audience("followers", _followers)


def add_followers(store: Store, leader_id: str, follower_ids: list[str], *, now: int) -> int:
    """Make each of ``follower_ids`` follow ``leader_id`` (seeding an audience: operators,
    benchmarks); returns how many ids were given.

    Example:
        >>> add_followers(store, "AB12CD", [], now=1)
        0
    """
    with store.write() as conn:
        queries.add_followers(conn, leader_id, follower_ids, now)
    return len(follower_ids)


def purge_worker(services: Any) -> Periodic | None:
    """The periodic purge of hidden posts past their retention (off when ``COMMUNITY_PURGE_SECONDS`` is 0).

    Example:
        >>> from types import SimpleNamespace
        >>> purge_worker(SimpleNamespace(settings=SimpleNamespace(community_purge_seconds=0))) is None
        True
    """
    every = services.settings.community_purge_seconds
    if every <= 0:
        return None
    return Periodic("community_purge", every, lambda: purge(services.store, now=services.clock.now()))


__all__ = [
    "add_followers",
    "application",
    "apply",
    "comment",
    "create",
    "decide",
    "delete",
    "delete_message",
    "feed",
    "follow",
    "is_leader",
    "leaders_page",
    "like",
    "pending",
    "purge",
    "purge_worker",
    "read_chat",
    "report",
    "reports",
    "send_message",
    "unfollow",
    "update_profile",
    "withdraw",
]
