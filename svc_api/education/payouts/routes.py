"""Instructor routes of sales and payouts: the sales analytics and the payout statements. Both need an
instructor role (403 otherwise) and read the caller's own sales only.

Example:
    >>> [r.path for r in ROUTES]
    ['/studio/analytics/sales', '/studio/payout-statements']
"""

from __future__ import annotations

from typing import Any

from svc_api.education.conventions import NO_STORE, Req, page, page_params, reply, route
from svc_api.education.payouts import analytics
from svc_api.education.payouts import contract as op
from svc_api.education.payouts import service as payouts


def _instructor(req: Req) -> None:
    payouts.require_instructor(req.store, req.svc_id)


def sales(req: Req) -> Any:
    query = req.params
    spec = analytics.spec_of(query, str(req.services.settings.edu_currency))
    after, limit = None, 0
    name = analytics.fingerprint(spec)
    if spec["group_by"] is not None:
        after, limit = page_params(req, name)
    found = payouts.sales(req.store, req.svc_id, spec, after, limit)
    body = {
        "filter": {
            "from": getattr(query, "from"),
            "to": query.to,
            "product_id": query.product_id,
            "bundle_id": query.bundle_id,
            "group_by": spec["group_by"],
        },
        "currency": found["currency"],
        "summary": found["summary"],
        "breakdown": None,
    }
    if found["breakdown"] is not None:
        body["breakdown"] = page(req, name, found["breakdown"], found["more"], analytics.position)
    return reply(body, headers=NO_STORE)


def payout_statements(req: Req) -> Any:
    after, limit = page_params(req, "payout-statements")
    items, more, balances = payouts.statements_page(req.store, req.svc_id, after, limit)
    body = page(req, "payout-statements", items, more, lambda s: {"p": s["period"], "id": s["statement_id"]})
    return reply({**body, "balances": balances}, headers=NO_STORE)


ROUTES = [
    route("/studio/analytics/sales", sales, "GET", access="identified", op=op.SALES, gate=_instructor),
    route(
        "/studio/payout-statements",
        payout_statements,
        "GET",
        access="identified",
        op=op.STATEMENTS,
        gate=_instructor,
    ),
]
