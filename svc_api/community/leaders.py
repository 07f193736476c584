"""Leaders: applications (the spec's state table), the operator's decision, profiles, follows.

A nickname is the display name in lower case without spaces. It is held (table
``community_nicknames``) from the moment an application uses it until the application is withdrawn
or rejected, and for as long as its owner leads: whoever inserts it first holds it, so of two users
racing for one nickname exactly one gets it and the other a 409.

Example:
    >>> nickname_of_name("Crypto Lab 7")
    'cryptolab7'
    >>> display_name("  x")
    Traceback (most recent call last):
    ...
    svc_api.core.errors.Invalid: display_name must be 3-30 Latin letters, digits or inner spaces
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from sqlalchemy.engine import Connection

from svc_api.accounts import service as accounts
from svc_api.community import queries
from svc_api.core.errors import Conflict, Forbidden, Invalid, NotFound
from svc_api.core.store import Store
from svc_api.notifications import service as notifications

_DISPLAY = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9 ]{1,28})[A-Za-z0-9]$")
_SVC_ID = re.compile(r"^[A-Z0-9]{6}$")
SOCIALS = ("twitter", "instagram", "youtube", "telegram")


def display_name(value: object) -> str:
    """A valid display name (3-30 Latin letters, digits and spaces); else 400."""
    if not isinstance(value, str) or not _DISPLAY.match(value) or len(nickname_of_name(value)) < 3:
        raise Invalid("display_name must be 3-30 Latin letters, digits or inner spaces")
    return value


def nickname_of_name(name: str) -> str:
    """The nickname of a display name: lower case, spaces removed."""
    return name.replace(" ", "").lower()


def leader_id(value: object, field: str = "leader_id") -> str:
    """A 6-character account id (upper-cased); else 400.

    Example:
        >>> leader_id("ab12cd")
        'AB12CD'
    """
    if not isinstance(value, str) or not _SVC_ID.match(value.upper()):
        raise Invalid(f"{field} must be a 6-character account id such as AB12CD")
    return value.upper()


def _claim(conn: Connection, svc_id: str, nickname: str) -> None:
    if queries.nickname_of(conn, svc_id) == nickname:
        return
    queries.release_nickname(conn, svc_id)
    if queries.claim_nickname(conn, nickname, svc_id) != svc_id:
        raise Conflict(f"the nickname {nickname!r} is taken by another user")


def apply(
    store: Store,
    svc_id: str,
    *,
    display_name: str,
    reason: str,
    experience: str,
    socials: Mapping[str, str],
    now: int,
) -> dict[str, Any]:
    """Apply to lead, or edit the pending application in place (``updated: true``); the fields are
    checked by the request model, the nickname (409 taken) and the role (409 a leader) here.

    Example:
        >>> apply(store, "AB12CD", display_name="Crypto Lab", reason="r", experience="e", socials={}, now=1)
        Traceback (most recent call last):
        ...
        svc_api.core.errors.NotFound: unknown account AB12CD
    """
    fields: dict[str, Any] = {
        "display_name": display_name,
        "nickname": nickname_of_name(display_name),
        "reason": reason,
        "experience": experience,
        **{social: socials.get(social, "") for social in SOCIALS},
    }
    with store.write() as conn:
        if accounts.community_role(conn, svc_id) == "leader":
            raise Conflict("you are an approved leader already; update your profile instead")
        _claim(conn, svc_id, fields["nickname"])
        latest = queries.latest_application(conn, svc_id)
        updated = latest is not None and latest.status == "pending"
        if updated:
            queries.update_application(conn, latest.application_id, updated_at=now, **fields)
        else:
            queries.insert_application(
                conn, svc_id=svc_id, status="pending", applied_at=now, updated_at=now, **fields
            )
    message = (
        "Your application was updated."
        if updated
        else "Your application was received; an operator reviews it."
    )
    return {
        "status": "pending",
        "display_name": fields["display_name"],
        "nickname": fields["nickname"],
        "updated": updated,
        "message": message,
    }


def application(store: Store, svc_id: str) -> dict[str, Any]:
    """The caller's Leader application (``{status: none, is_leader: false}`` if they never applied).

    Example:
        >>> application(store, "AB12CD")
        {'status': 'none', 'is_leader': False}
    """
    with store.read() as conn:
        latest = queries.latest_application(conn, svc_id)
        leads = queries.leader(conn, svc_id) is not None and accounts.community_role(conn, svc_id) == "leader"
    if latest is None:
        return {"status": "approved", "is_leader": True} if leads else {"status": "none", "is_leader": False}
    return {
        "status": "approved" if leads else latest.status,
        "is_leader": leads,
        "display_name": latest.display_name,
        "reason": latest.reason,
        "experience": latest.experience,
        "applied_at": int(latest.applied_at),
        **{social: getattr(latest, social) for social in SOCIALS},
    }


def withdraw(store: Store, svc_id: str, *, now: int) -> dict[str, str]:
    """Withdraw the pending application (404 none, 409 not pending); history is kept.

    Example:
        >>> withdraw(store, "AB12CD", now=1)
        Traceback (most recent call last):
        ...
        svc_api.core.errors.NotFound: you have no leader application
    """
    with store.write() as conn:
        latest = queries.latest_application(conn, svc_id)
        if latest is None:
            raise NotFound("you have no leader application")
        if latest.status != "pending" or not queries.decide_application(
            conn, latest.application_id, "withdrawn", now
        ):
            raise Conflict(f"your latest application is {latest.status}, not pending")
        queries.release_nickname(conn, svc_id)
    return {"status": "withdrawn"}


def decide(store: Store, svc_id: str, approve: bool, *, now: int) -> dict[str, Any]:
    """The operator's decision on the pending application of ``svc_id``: approval makes them a
    leader (``community_role: leader``, a profile); rejection frees the nickname. Either notifies.

    Example:
        >>> decide(store, "AB12CD", True, now=1)
        Traceback (most recent call last):
        ...
        svc_api.core.errors.Conflict: AB12CD has no pending application
    """
    status = "approved" if approve else "rejected"
    with store.write() as conn:
        latest = queries.latest_application(conn, svc_id)
        if latest is None or not queries.decide_application(conn, latest.application_id, status, now):
            raise Conflict(f"{svc_id} has no pending application")
        if approve:
            accounts.set_community_role(conn, svc_id, "leader")
            queries.insert_leader(
                conn,
                svc_id=svc_id,
                display_name=latest.display_name,
                nickname=latest.nickname,
                approved_at=now,
            )
            queries.update_leader(conn, svc_id, display_name=latest.display_name, nickname=latest.nickname)
            title, body = (
                "You are a community leader",
                "Your leader application was approved: you can post now.",
            )
        else:
            queries.release_nickname(conn, svc_id)
            title, body = "Leader application declined", "Your leader application was not approved this time."
        notifications.notify(conn, svc_id, title, body, f"leader_{status}", now=now)
    return {"svc_id": svc_id, "status": status, "nickname": latest.nickname}


def pending(store: Store, limit: int = 100) -> list[dict[str, Any]]:
    """Pending applications, oldest first (for operators).

    Example:
        >>> pending(store)
        []
    """
    with store.read() as conn:
        rows = queries.applications_with_status(conn, "pending", limit)
    return [
        {"svc_id": r.svc_id, "display_name": r.display_name, "applied_at": int(r.applied_at)} for r in rows
    ]


def update_profile(
    store: Store, svc_id: str, name: str, *, bio: str | None = None, avatar_url: str | None = None
) -> dict[str, Any]:
    """A leader's profile change (checked by the request model): display name ``name`` (and so
    nickname), ``bio`` and ``avatar_url`` (None: unchanged; an empty avatar removes it). 403 for
    anyone but an approved leader."""
    changes: dict[str, Any] = {"display_name": name, "nickname": nickname_of_name(name)}
    if bio is not None:
        changes["bio"] = bio
    if avatar_url is not None:
        changes["avatar_url"] = avatar_url
    with store.write() as conn:
        if accounts.community_role(conn, svc_id) != "leader" or queries.leader(conn, svc_id) is None:
            raise Forbidden("only approved community leaders have a leader profile")
        _claim(conn, svc_id, changes["nickname"])
        queries.update_leader(conn, svc_id, **changes)
        row = queries.leader(conn, svc_id)
    return {
        "display_name": row.display_name,
        "nickname": row.nickname,
        "community_bio": row.bio,
        "avatar_url": row.avatar_url,
    }


def is_leader(conn: Connection, svc_id: str) -> bool:
    """Whether ``svc_id`` is an approved leader (their role says so and they have a profile)."""
    return queries.leader(conn, svc_id) is not None and accounts.community_role(conn, svc_id) == "leader"


def follow(store: Store, svc_id: str, target: str, *, now: int) -> dict[str, str]:
    """Follow the leader ``target`` (an id checked by the request model): 400 oneself, 404 not a
    leader, 409 already following."""
    if target == svc_id:
        raise Invalid("you cannot follow yourself")
    with store.write() as conn:
        if not is_leader(conn, target):
            raise NotFound(f"{target} is not a community leader")
        if not queries.follow(conn, target, svc_id, now):
            raise Conflict(f"you follow {target} already")
    return {"leader_id": target, "action": "followed"}


def unfollow(store: Store, svc_id: str, target: str) -> dict[str, str]:
    """Stop following the leader ``target``: 409 when not following."""
    with store.write() as conn:
        if not queries.unfollow(conn, target, svc_id):
            raise Conflict(f"you do not follow {target}")
    return {"leader_id": target, "action": "unfollowed"}


def leaders_page(
    store: Store, viewer: str | None, *, limit: int, after: tuple[int, str] | None
) -> tuple[list[dict[str, Any]], tuple[int, str] | None]:
    """Leaders newest-approved first with ``is_following`` for ``viewer`` (false for guests);
    returns the page and the position after it (None on the last page)."""
    with store.read() as conn:
        rows = queries.leaders_after(conn, limit=limit + 1, after=after)
        page = rows[:limit]
        following = queries.followed_among(conn, viewer, [r.svc_id for r in page]) if viewer else set()
    items = [
        {
            "svc_id": r.svc_id,
            "name": r.display_name,
            "nickname": r.nickname,
            "bio": r.bio,
            "avatar_url": r.avatar_url,
            "is_following": r.svc_id in following,
        }
        for r in page
    ]
    last = (int(page[-1].approved_at), page[-1].svc_id) if len(rows) > limit else None
    return items, last
