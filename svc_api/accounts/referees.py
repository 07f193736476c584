"""Who invited an account and whom it invited: the ``inviter_id`` link, for the referrals domain.

The rules of setting an inviter (once, within a window, not oneself) are the referrals domain's;
these functions read the link and set it race-safely.

Example:
    >>> from svc_api.accounts.identity import register
    >>> with store.write() as conn:
    ...     a = register(conn, "a@example.com", "password1", ip="::1", ttl=60, now=100).svc_id
    ...     b = register(conn, "b@example.com", "password1", ip="::1", ttl=60, now=200).svc_id
    ...     link_inviter(conn, b, a), link_inviter(conn, b, a), inviter_link(conn, b) == (a, 200)
    ...     [r["joined_at"] for r in referees(conn, a, now=300)]
    (True, False, True)
    [200]
"""

from __future__ import annotations

from typing import Any

from sqlalchemy.engine import Connection

from svc_api.accounts import queries
from svc_api.accounts.plans import effective_plan
from svc_api.core.errors import NotFound


def account_exists(conn: Connection, svc_id: str) -> bool:
    """Whether an account ``svc_id`` exists.

    Example:
        >>> with store.read() as conn:
        ...     account_exists(conn, "NOPE00")
        False
    """
    return queries.code_taken(conn, "svc_id", svc_id)


def inviter_link(conn: Connection, svc_id: str) -> tuple[str | None, int]:
    """``(inviter_id or None, created_at)`` of ``svc_id``; 404 for an unknown account.

    Example:
        >>> with store.read() as conn:
        ...     inviter_link(conn, "NOPE00")
        Traceback (most recent call last):
        ...
        svc_api.core.errors.NotFound: unknown account NOPE00
    """
    row = queries.inviter_link(conn, svc_id)
    if row is None:
        raise NotFound(f"unknown account {svc_id}")
    return row.inviter_id, int(row.created_at)


def link_inviter(conn: Connection, svc_id: str, inviter_id: str) -> bool:
    """Set ``inviter_id`` as the inviter of ``svc_id`` unless one is set already (one conditional
    ``UPDATE``: of racing callers exactly one gets True); the inviter is never changed.

    Example:
        >>> with store.write() as conn:
        ...     link_inviter(conn, "NOPE00", "AB12CD")
        False
    """
    return queries.set_inviter_if_unset(conn, svc_id, inviter_id)


def referees(conn: Connection, svc_id: str, *, now: int) -> list[dict[str, Any]]:
    """The accounts ``svc_id`` invited, newest first: ``{svc_id, joined_at, plan}`` with the plan in
    force at ``now`` (``free`` when none), in one query.

    Example:
        >>> with store.read() as conn:
        ...     referees(conn, "NOPE00", now=0)
        []
    """
    return [
        {
            "svc_id": r.svc_id,
            "joined_at": int(r.created_at),
            "plan": effective_plan(
                r.plan, license_expires_at=r.license_expires_at, demo_expires_at=r.demo_expires_at, now=now
            ),
        }
        for r in queries.referees(conn, svc_id)
    ]
