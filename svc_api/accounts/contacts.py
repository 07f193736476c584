"""How the other domains reach an account: delivery profiles (e-mail and channel switches), the
list of every account, the community role and the messenger connection. Re-exported by
:mod:`svc_api.accounts.service`.

Example:
    >>> COMMUNITY_ROLES
    ('member', 'leader', 'admin')
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sqlalchemy.engine import Connection

from svc_api.accounts import queries
from svc_api.accounts.tables import NOTIFICATION_CHANNELS
from svc_api.core.errors import Invalid, NotFound


def notification_preferences(conn: Connection, svc_id: str) -> dict[str, bool]:
    """The six delivery-channel switches of ``svc_id`` (all on for a new account).

    Example:
        >>> NOTIFICATION_CHANNELS[:2]
        ('app', 'announcement')
    """
    row = queries.switches(conn, svc_id)
    if row is None:
        return dict.fromkeys(NOTIFICATION_CHANNELS, True)
    return {name: bool(getattr(row, name)) for name in NOTIFICATION_CHANNELS}


def check_switches(changes: Mapping[str, Any]) -> None:
    """Every name a channel switch and every value a boolean; else 400.

    Example:
        >>> check_switches({"mail": "yes"})
        Traceback (most recent call last):
        ...
        svc_api.core.errors.Invalid: notification channel values must be booleans: mail
    """
    unknown = sorted(set(changes) - set(NOTIFICATION_CHANNELS))
    if unknown:
        raise Invalid(f"unknown notification channel(s): {', '.join(unknown)}")
    bad = sorted(name for name, value in changes.items() if not isinstance(value, bool))
    if bad:
        raise Invalid(f"notification channel values must be booleans: {', '.join(bad)}")


def set_notification_preferences(conn: Connection, svc_id: str, changes: dict[str, Any]) -> dict[str, bool]:
    """Switch delivery channels on or off; unknown names or non-booleans are a 400.

    Example:
        >>> with store.write() as conn:
        ...     set_notification_preferences(conn, "X", {"fax": True})
        Traceback (most recent call last):
        ...
        svc_api.core.errors.Invalid: unknown notification channel(s): fax
    """
    check_switches(changes)
    if changes:
        queries.set_switches(conn, svc_id, changes)
    return notification_preferences(conn, svc_id)


@dataclass(frozen=True)
class DeliveryProfile:
    """Where a user can be reached and which channels they allow: ``switches`` holds the six
    notification settings."""

    email: str
    switches: dict[str, bool]


def delivery_profiles(conn: Connection, svc_ids: list[str]) -> dict[str, DeliveryProfile]:
    """The :class:`DeliveryProfile` of each existing account of ``svc_ids``.

    Example:
        >>> from svc_api.accounts.service import register, set_notification_preferences
        >>> with store.write() as conn:
        ...     sid = register(conn, "d@example.com", "password1", ip="::1", ttl=60, now=0).svc_id
        ...     _ = set_notification_preferences(conn, sid, {"mail": False})
        ...     profile = delivery_profiles(conn, [sid, "NOPE00"])[sid]
        >>> profile.email, profile.switches["mail"], profile.switches["app"]
        ('d@example.com', False, True)
    """
    out: dict[str, DeliveryProfile] = {}
    for row in queries.delivery_rows(conn, svc_ids):
        switches = {
            name: True if (value := getattr(row, f"switch_{name}")) is None else bool(value)
            for name in NOTIFICATION_CHANNELS
        }
        out[row.svc_id] = DeliveryProfile(row.email, switches)
    return out


def account_ids_after(conn: Connection, after: str | None, limit: int) -> list[str]:
    """Every user account in id order, ``limit`` at a time after ``after`` (platform accounts left out).

    Example:
        >>> from svc_api.accounts.service import register, ensure_system_account
        >>> with store.write() as conn:
        ...     ensure_system_account(conn, "_FEES_", "fees@platform.invalid", now=0)
        ...     sid = register(conn, "e@example.com", "password1", ip="::1", ttl=60, now=0).svc_id
        ...     account_ids_after(conn, None, 10) == [sid], account_ids_after(conn, sid, 10)
        (True, [])
    """
    return queries.account_ids_after(conn, after, limit)


COMMUNITY_ROLES = ("member", "leader", "admin")
"""``community_role`` values: ``leader`` marks an approved leader, ``admin`` a moderator of every channel."""


def set_community_role(conn: Connection, svc_id: str, role: str) -> None:
    """Set the ``community_role`` of ``svc_id`` (404 unknown account, 400 unknown role).

    Example:
        >>> with store.write() as conn:
        ...     set_community_role(conn, "NOPE00", "leader")
        Traceback (most recent call last):
        ...
        svc_api.core.errors.NotFound: unknown account NOPE00
    """
    if role not in COMMUNITY_ROLES:
        raise Invalid(f"community role must be one of {', '.join(COMMUNITY_ROLES)}, got {role!r}")
    if not queries.set_account_columns(conn, svc_id, community_role=role):
        raise NotFound(f"unknown account {svc_id}")


def community_role(conn: Connection, svc_id: str) -> str:
    """The ``community_role`` of ``svc_id`` (404 unknown account).

    Example:
        >>> from svc_api.accounts.service import register
        >>> with store.write() as conn:
        ...     sid = register(conn, "r@example.com", "password1", ip="::1", ttl=60, now=0).svc_id
        ...     community_role(conn, sid)
        'member'
    """
    row = queries.account_row(conn, svc_id)
    if row is None:
        raise NotFound(f"unknown account {svc_id}")
    return str(row.community_role)


def set_messenger_linked(conn: Connection, svc_id: str, linked: bool) -> None:
    """Record whether a messenger chat is linked (``connections.messenger`` of the Account).

    Example:
        >>> from svc_api.accounts.service import register, account_info
        >>> with store.write() as conn:
        ...     sid = register(conn, "m@example.com", "password1", ip="::1", ttl=60, now=0).svc_id
        ...     set_messenger_linked(conn, sid, True)
        ...     account_info(conn, sid, now=0)["connections"]["messenger"]
        True
    """
    if not queries.set_account_columns(conn, svc_id, messenger_linked=linked):
        raise NotFound(f"unknown account {svc_id}")


CONNECTIONS = {
    "exchange": "exchange_linked",
    "messenger": "messenger_linked",
    "identity_provider": "identity_linked",
}


def set_connection(conn: Connection, svc_id: str, name: str, linked: bool) -> None:
    """Record whether a connection of the Account (``exchange``, ``messenger``,
    ``identity_provider``) is linked.

    Example:
        >>> from svc_api.accounts.service import register, account_info
        >>> with store.write() as conn:
        ...     sid = register(conn, "x@example.com", "password1", ip="::1", ttl=60, now=0).svc_id
        ...     set_connection(conn, sid, "exchange", True)
        ...     account_info(conn, sid, now=0)["connections"]["exchange"]
        True
    """
    if not queries.set_account_columns(conn, svc_id, **{CONNECTIONS[name]: linked}):
        raise NotFound(f"unknown account {svc_id}")


def account_of_email(conn: Connection, email: str) -> str | None:
    """The account registered with ``email`` (case-insensitive), or None.

    Example:
        >>> from svc_api.accounts.service import register
        >>> with store.write() as conn:
        ...     sid = register(conn, "pay@example.com", "password1", ip="::1", ttl=60, now=0).svc_id
        ...     account_of_email(conn, "PAY@example.com") == sid, account_of_email(conn, "no@example.com")
        (True, None)
    """
    return queries.svc_id_of_email(conn, email.strip().lower())
