"""Sales and payouts, as the routes, the operator commands and the scheduler see them: sales
analytics (:mod:`.analytics`), payout statements (:mod:`.statements`), the monthly payout run
(:mod:`.run`) and the FX rates it converts with.

Example:
    >>> from svc_api.core.store import Store
    >>> from svc_api.migrations import migrate
    >>> store = Store("sqlite://"); _ = migrate(store)
    >>> with store.write() as conn:
    ...     set_fx_rate(conn, "usd", "TRY", "41.25", now=1_790_812_800)
    {'base': 'USD', 'quote': 'TRY', 'rate': '41.25', 'set_at': 1790812800}
"""

from __future__ import annotations

import re
from typing import Any

from sqlalchemy.engine import Connection

from svc_api.core.errors import Invalid
from svc_api.core.store import Store
from svc_api.education.payouts import analytics, figures, queries, statements
from svc_api.education.payouts.run import WINDOW_DAYS, Policy, export_again, export_run, payout_run
from svc_api.education.studio import service as studio

__all__ = [
    "WINDOW_DAYS",
    "Policy",
    "export_again",
    "export_run",
    "payout_run",
    "require_instructor",
    "sales",
    "set_fx_rate",
    "statements_page",
]

_CURRENCY = re.compile(r"[A-Z]{3}")


def require_instructor(store: Store, svc_id: str) -> None:
    """403 unless the account holds an instructor role (checked before a request is parsed, so a
    learner hears that first)."""
    with store.read() as conn:
        studio.require_instructor(conn, svc_id)


def sales(
    store: Store, svc_id: str, spec: dict[str, Any], after: dict[str, Any] | None, limit: int
) -> dict[str, Any]:
    """The instructor's sales summary and, when grouped, a page of the breakdown (403 not an
    instructor): ``{currency, filter, summary, breakdown: [...] | None}`` plus whether more follow."""
    with store.read() as conn:
        studio.require_instructor(conn, svc_id)
        reply: dict[str, Any] = {
            "currency": spec["currency"],
            "summary": analytics.summary(conn, svc_id, spec),
            "breakdown": None,
            "more": False,
        }
        if spec["group_by"] is not None:
            reply["breakdown"], reply["more"] = analytics.breakdown(conn, svc_id, spec, after, limit)
    return reply


def statements_page(
    store: Store, svc_id: str, after: dict[str, Any] | None, limit: int
) -> tuple[list[dict[str, Any]], bool, list[dict[str, Any]]]:
    """The instructor's statements, newest first (403 not an instructor), and the balances."""
    with store.read() as conn:
        studio.require_instructor(conn, svc_id)
        return statements.page(conn, svc_id, after, limit)


def set_fx_rate(conn: Connection, base: str, quote: str, rate: str, *, now: int) -> dict[str, Any]:
    """Record the rate of ``base`` in ``quote`` (units of quote per unit of base) from ``now`` on;
    400 for a malformed currency or rate."""
    base, quote = base.strip().upper(), quote.strip().upper()
    if not (_CURRENCY.fullmatch(base) and _CURRENCY.fullmatch(quote)) or base == quote:
        raise Invalid("an FX rate needs two different ISO 4217 codes, such as USD TRY")
    try:
        micros = figures.parse_rate(rate)
    except ValueError as exc:
        raise Invalid(str(exc)) from None
    queries.add_rate(conn, base, quote, micros, now)
    return {"base": base, "quote": quote, "rate": statements.rate_text(micros), "set_at": now}
