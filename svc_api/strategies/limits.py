"""What a plan allows: active strategies, coins per public strategy, generations running at once.

Mutations lock the caller's account row first (``SELECT ... FOR UPDATE`` on PostgreSQL; SQLite
serialises writers anyway), so the counts below hold under concurrent requests.

Example:
    >>> MAX_ACTIVE["plus"], MAX_COINS["plus"]
    (2, 10)
"""

from __future__ import annotations

from sqlalchemy.engine import Connection

from svc_api.accounts import service as accounts
from svc_api.core.errors import Forbidden
from svc_api.settings import Settings
from svc_api.strategies import queries
from svc_api.strategies.errors import GenerationBusy

#: Default per-user cap on generations in progress (``Settings.max_concurrent_generations``; the
#: route passes the setting as ``max_generations``).
MAX_GENERATIONS: int = Settings.default("max_concurrent_generations")
MAX_ACTIVE = {"free": 0, "starter": 1, "plus": 2, "pro": 5, "investor": 10}
MAX_COINS = {"free": 0, "starter": 5, "plus": 10, "pro": 25, "investor": 50}
LIVE = ("generating", "active")
"""Statuses that count against the plan's active strategies."""


def lock_account(conn: Connection, svc_id: str) -> None:
    """Lock the caller's account row for the rest of the transaction; 404 for an unknown account
    (the accounts domain's :func:`~svc_api.accounts.service.lock_account`, the one place of the rule).

    Example:
        >>> with store.write() as conn:
        ...     lock_account(conn, "NOPE00")
        Traceback (most recent call last):
        ...
        svc_api.core.errors.NotFound: unknown account NOPE00
    """
    accounts.lock_account(conn, svc_id)


def check_plan_limit(conn: Connection, svc_id: str, *, exclude: str | None, now: int) -> None:
    """403 when one more live strategy would exceed the plan (``exclude`` is the one being changed).

    Example:
        >>> with store.read() as conn:
        ...     check_plan_limit(conn, "NOPE00", exclude=None, now=0)
        Traceback (most recent call last):
        ...
        svc_api.core.errors.NotFound: unknown account NOPE00
    """
    plan = accounts.current_plan(conn, svc_id, now=now)
    limit = MAX_ACTIVE[plan]
    if limit == 0:
        raise Forbidden(
            "the free plan includes no strategies; upgrade to starter (1 active strategy), "
            "plus (2), pro (5) or investor (10)"
        )
    active = queries.count_live(conn, svc_id, LIVE, exclude=exclude)
    if active >= limit:
        raise Forbidden(
            f"your {plan} plan allows {limit} active strategies and you have {active}; "
            "delete one or upgrade your plan"
        )


def live_count(conn: Connection, svc_id: str) -> int:
    """How many live (generating or active) strategies ``svc_id`` has.

    Example:
        >>> with store.read() as conn:
        ...     live_count(conn, "NOPE00")
        0
    """
    return int(queries.count_live(conn, svc_id, LIVE, exclude=None))


def check_generation_cap(conn: Connection, svc_id: str, cap: int) -> None:
    """:class:`GenerationBusy` (429) when ``cap`` generations of ``svc_id`` are already running.

    Example:
        >>> with store.read() as conn:
        ...     check_generation_cap(conn, "NOPE00", 0)
        Traceback (most recent call last):
        ...
        svc_api.strategies.errors.GenerationBusy: 0 strategy generation(s) already in progress \
(maximum 0); retry when one finishes
    """
    running = queries.count_generating(conn, svc_id)
    if running >= cap:
        raise GenerationBusy(running, cap)


def check_coin_count(conn: Connection, svc_id: str, coins: int, *, now: int) -> None:
    """403 when a public strategy lists more coins than the plan allows.

    Example:
        >>> from svc_api.accounts import service as accounts
        >>> from svc_api.accounts.identity import register
        >>> with store.write() as conn:
        ...     sid = register(conn, "a@example.com", "password1", ip="::1", ttl=60, now=0).svc_id
        ...     _ = accounts.grant_plan(conn, sid, "starter", 30, now=1_800_000_000)
        ...     check_coin_count(conn, sid, 6, now=1_800_000_000)
        Traceback (most recent call last):
        ...
        svc_api.core.errors.Forbidden: your plan allows at most 5 coins per strategy; 6 requested
    """
    limit = MAX_COINS[accounts.current_plan(conn, svc_id, now=now)]
    if coins > limit:
        raise Forbidden(f"your plan allows at most {limit} coins per strategy; {coins} requested")
