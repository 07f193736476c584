"""Instructor routes of sales and payouts: the sales analytics and the payout statements. Both need an
instructor role (403 otherwise) and read the caller's own sales only.

Example:
    >>> [r.path for r in ROUTES]
    ['/studio/analytics/sales', '/studio/payout-statements']
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from starlette.routing import Route

from svc_api.education.contract import Op
from svc_api.education.conventions import NO_STORE, Req, page, page_params, reply, route
from svc_api.education.payouts import analytics
from svc_api.education.payouts import contract as op
from svc_api.education.payouts import service as payouts


def _instructor_route(path: str, handler: Callable[[Req], Any], contract: Op) -> Route:
    """A ``GET`` route described by ``contract`` whose handler validates the query itself, after the
    instructor check: a learner hears 403 before any 400 of the query, which the endpoint would
    otherwise answer first (:func:`~svc_api.education.conventions.endpoint` validates before the
    handler)."""
    made = route(path, handler, "GET", access="identified")
    made.endpoint.op = contract  # type: ignore[attr-defined]
    return made


def _query(req: Req, contract: Op) -> Any:
    """The caller's instructor role (403), then the query by the route's model (400)."""
    payouts.require_instructor(req.store, req.svc_id)
    req.params = contract.query.from_query(req.query)
    return req.params


def sales(req: Req) -> Any:
    query = _query(req, op.SALES)
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
    _query(req, op.STATEMENTS)
    after, limit = page_params(req, "payout-statements")
    items, more, balances = payouts.statements_page(req.store, req.svc_id, after, limit)
    body = page(req, "payout-statements", items, more, lambda s: {"p": s["period"], "id": s["statement_id"]})
    return reply({**body, "balances": balances}, headers=NO_STORE)


ROUTES = [
    _instructor_route("/studio/analytics/sales", sales, op.SALES),
    _instructor_route("/studio/payout-statements", payout_statements, op.STATEMENTS),
]
