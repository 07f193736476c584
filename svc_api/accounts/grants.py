"""Plan time: granting it (a purchase, an operator, a demo) and taking it back (a refunded purchase).

Every change is a ``plan_grants`` row beside the change of the account's expiry: a grant records its
positive days, a take-back its negative days.

Example:
    >>> from svc_api.accounts.identity import register
    >>> with store.write() as conn:
    ...     sid = register(conn, "g@example.com", "password1", ip="::1", ttl=60, now=0).svc_id
    ...     grant_plan(conn, sid, "plus", 30, now=0)["license_expires_at"]
    ...     take_back_plan(conn, sid, 30, source="refund", now=0)["license_expires_at"]
    2592000
    0
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from sqlalchemy.engine import Connection

from svc_api.accounts import queries
from svc_api.accounts.plans import PLANS
from svc_api.core.errors import Conflict, Invalid, NotFound

DAY = 86400


def grant_plan(
    conn: Connection,
    svc_id: str,
    plan: str,
    days: int,
    *,
    demo: bool = False,
    source: str = "admin",
    now: int,
    worth: Mapping[str, Decimal] | None = None,
) -> dict[str, Any]:
    """Extend ``plan`` by ``days`` (stacked on the time already held) and record the grant.

    A demo sets ``demo_expires_at`` instead of ``license_expires_at``, and is refused (409) while a
    paid licence runs. With ``worth`` (each plan's
    monthly price), licence time left on another plan is converted at the ratio of the two prices
    before the days are added: a year of starter does not become a year of pro by buying one month
    of pro, nor does a year of pro shrink to starter by buying one month of starter.

    Example:
        >>> from svc_api.accounts.identity import register
        >>> with store.write() as conn:
        ...     sid = register(conn, "b@example.com", "password1", ip="::1", ttl=60, now=0).svc_id
        ...     grant = grant_plan(conn, sid, "pro", 30, now=1_000)
        >>> grant["plan"], grant["license_expires_at"]
        ('pro', 2593000)
    """
    if plan not in PLANS or plan == "free":
        raise Invalid(f"plan must be one of {', '.join(PLANS[1:])}, got {plan!r}")
    if not isinstance(days, int) or days <= 0:
        raise Invalid("days must be a positive integer")
    row = queries.account_row(conn, svc_id)
    if row is None:
        raise NotFound(f"unknown account {svc_id}")
    if demo and int(row.license_expires_at) > now:
        # The plan is one column: a demo of another plan would replace the paid one until it ends.
        raise Conflict(
            f"a paid licence runs until {int(row.license_expires_at)}: a demo is for accounts without one"
        )
    column = "demo_expires_at" if demo else "license_expires_at"
    left = max(int(getattr(row, column)) - now, 0)
    if worth is not None and not demo and row.plan != plan and row.plan in worth:
        left = int(left * worth[row.plan] / worth[plan])
    expires_at = now + left + days * DAY
    queries.set_plan(conn, svc_id, plan, **{column: expires_at})
    queries.insert_plan_grant(
        conn,
        svc_id=svc_id,
        plan=plan,
        days=days,
        demo=demo,
        expires_at=expires_at,
        source=source,
        created_at=now,
    )
    return {"svc_id": svc_id, "plan": plan, column: expires_at}


def take_back_plan(conn: Connection, svc_id: str, days: int, *, source: str, now: int) -> dict[str, Any]:
    """Take ``days`` of licence back (a refunded purchase): ``license_expires_at`` moves back by that
    much, never below 0; once it is past, the account is on ``free``. Recorded as a grant of
    ``-days``. The plan name stays (the time left, if any, is of that plan).

    Example:
        >>> from svc_api.accounts.identity import register
        >>> with store.write() as conn:
        ...     sid = register(conn, "t@example.com", "password1", ip="::1", ttl=60, now=0).svc_id
        ...     _ = grant_plan(conn, sid, "pro", 365, now=0)
        ...     take_back_plan(conn, sid, 30, source="refund", now=0)["license_expires_at"] // DAY
        335
    """
    if not isinstance(days, int) or days <= 0:
        raise Invalid("days must be a positive integer")
    row = queries.account_row(conn, svc_id)
    if row is None:
        raise NotFound(f"unknown account {svc_id}")
    expires_at = max(int(row.license_expires_at) - days * DAY, 0)
    queries.set_plan(conn, svc_id, row.plan, license_expires_at=expires_at)
    queries.insert_plan_grant(
        conn,
        svc_id=svc_id,
        plan=row.plan,
        days=-days,
        demo=False,
        expires_at=expires_at,
        source=source,
        created_at=now,
    )
    return {"svc_id": svc_id, "plan": row.plan, "license_expires_at": expires_at}
