"""Instructor routes of sales and payouts: the sales analytics and the payout statements. Both need an
instructor role (403 otherwise) and read the caller's own sales only.

Example:
    >>> [r.path for r in ROUTES]
    ['/studio/analytics/sales', '/studio/payout-statements']
"""

from __future__ import annotations

from typing import Any

from svc_api.core.errors import Invalid
from svc_api.education.conventions import NO_STORE, Req, page, page_params, reply, route
from svc_api.education.payouts import analytics
from svc_api.education.payouts import service as payouts


def _query(req: Req, allowed: tuple[str, ...]) -> dict[str, str]:
    """The query parameters, each at most once; 400 for an unknown or repeated one."""
    unknown = sorted(set(req.query.keys()) - set(allowed))
    if unknown:
        raise Invalid(f"unknown query parameter {unknown[0]!r}; this route takes {', '.join(allowed)}")
    for name in req.query:
        if len(req.query.getlist(name)) > 1:
            raise Invalid(f"{name} may be given once")
    return dict(req.query)


def sales(req: Req) -> Any:
    svc_id = req.svc_id
    payouts.require_instructor(req.store, svc_id)
    spec = analytics.parse_filter(_query(req, analytics.PARAMS), str(req.services.settings.edu_currency))
    after, limit = None, 0
    name = analytics.fingerprint(spec)
    if spec["group_by"] is not None:
        after, limit = page_params(req, name)
    elif "cursor" in req.query or "limit" in req.query:
        raise Invalid("cursor and limit page the breakdown: send them with group_by")
    found = payouts.sales(req.store, svc_id, spec, after, limit)
    body = {
        "filter": {
            "from": req.query.get("from"),
            "to": req.query.get("to"),
            "product_id": req.query.get("product_id"),
            "bundle_id": req.query.get("bundle_id"),
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
    svc_id = req.svc_id
    payouts.require_instructor(req.store, svc_id)
    _query(req, ("cursor", "limit"))
    after, limit = page_params(req, "payout-statements")
    items, more, balances = payouts.statements_page(req.store, svc_id, after, limit)
    body = page(req, "payout-statements", items, more, lambda s: {"p": s["period"], "id": s["statement_id"]})
    return reply({**body, "balances": balances}, headers=NO_STORE)


ROUTES = [
    route("/studio/analytics/sales", sales, "GET", access="identified"),
    route("/studio/payout-statements", payout_statements, "GET", access="identified"),
]
