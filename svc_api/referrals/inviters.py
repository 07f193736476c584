"""Who invited whom: ``set_inviter`` and ``referral_list``.

An account names its inviter once, by the inviter's ``svc_id``, within :data:`INVITER_WINDOW_DAYS`
days of its registration; registering with an inviter's referral code sets it too. It never changes.
Violations, checked in this order (our statuses; the specification leaves them open):

- 400: the ID is not 6 letters or digits (lowercase is accepted and upper-cased), or is the caller's own;
- 404: no account has that ID;
- 409: an inviter is set already (also when set at registration, also by a racing call: the
  conditional ``UPDATE ... WHERE inviter_id IS NULL`` decides which one wins);
- 403: more than 30 days passed since the caller registered.

Example:
    >>> mask("AB12CD")
    'AB**CD'
"""

from __future__ import annotations

import re
from typing import Any

from sqlalchemy.engine import Connection

from svc_api.accounts import service as accounts
from svc_api.core.errors import Conflict, Forbidden, Invalid, NotFound

INVITER_WINDOW_DAYS = 30
"""Days after registration during which an account may name its inviter."""
_SVC_ID = re.compile(r"^[A-Z0-9]{6}$")


def mask(svc_id: str) -> str:
    """An account id with all but its first two and last two characters masked.

    Example:
        >>> mask("XY9876"), mask("ABCDEFGH")
        ('XY**76', 'AB****GH')
    """
    return svc_id[:2] + "*" * max(len(svc_id) - 4, 0) + svc_id[-2:]


def inviter_id_of(value: object) -> str:
    """The inviter ID of a request: 6 letters or digits, upper-cased; else 400.

    Example:
        >>> inviter_id_of(" ab12cd ")
        'AB12CD'
        >>> inviter_id_of("AB-12")
        Traceback (most recent call last):
        ...
        svc_api.core.errors.Invalid: inviter_id must be 6 letters or digits (an account ID), got 'AB-12'
    """
    found = value.strip().upper() if isinstance(value, str) else None
    if found is None or not _SVC_ID.match(found):
        shown = value[:20] if isinstance(value, str) else value
        raise Invalid(f"inviter_id must be 6 letters or digits (an account ID), got {shown!r}")
    return found


def set_inviter(conn: Connection, svc_id: str, inviter_id: str, *, now: int) -> dict[str, Any]:
    """Name the inviter of ``svc_id`` (an ID checked by :func:`inviter_id_of`; see the module
    docstring for the rules and statuses).

    Example:
        >>> with store.write() as conn:
        ...     a = accounts.register(conn, "a@example.com", "password1", ip="::1", ttl=60, now=0).svc_id
        ...     b = accounts.register(conn, "b@example.com", "password1", ip="::1", ttl=60, now=0).svc_id
        ...     set_inviter(conn, b, a, now=86400)["inviter_id"] == a
        ...     set_inviter(conn, b, a, now=86400)
        Traceback (most recent call last):
        ...
        svc_api.core.errors.Conflict: an inviter is already set for this account; it cannot be changed
    """
    if inviter_id == svc_id:
        raise Invalid("inviter_id is your own ID; name the account that invited you")
    if not accounts.account_exists(conn, inviter_id):
        raise NotFound(f"no account has the ID {inviter_id}")
    current, registered_at = accounts.inviter_link(conn, svc_id)
    if current is not None:
        raise _already_set()
    if now > registered_at + INVITER_WINDOW_DAYS * 86400:
        raise Forbidden(f"an inviter can only be set within {INVITER_WINDOW_DAYS} days of registration")
    if not accounts.link_inviter(conn, svc_id, inviter_id):
        raise _already_set()
    return {"inviter_id": inviter_id, "message": f"{inviter_id} is now your inviter"}


def _already_set() -> Conflict:
    return Conflict("an inviter is already set for this account; it cannot be changed")


def referral_list(conn: Connection, svc_id: str, *, now: int) -> dict[str, Any]:
    """The accounts ``svc_id`` invited, newest first: ``{referrals: [{svc_id_masked, joined_at, plan}],
    count}``, each with the plan in force (``free`` when none).

    Example:
        >>> with store.read() as conn:
        ...     referral_list(conn, "NOPE00", now=0)
        {'referrals': [], 'count': 0}
    """
    found = [
        {"svc_id_masked": mask(r["svc_id"]), "joined_at": r["joined_at"], "plan": r["plan"]}
        for r in accounts.referees(conn, svc_id, now=now)
    ]
    return {"referrals": found, "count": len(found)}
