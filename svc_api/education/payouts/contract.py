"""The contracts of the instructor's sales and payout routes: their query models (each parameter's
format rule, in the order they are checked) and the routes'
:class:`~svc_api.education.contract.Op`; the reply models are in
:mod:`~svc_api.education.payouts.replies`. The instructor role needs the store and is checked by the
handler before the query (a learner hears 403 first).

Example:
    >>> from starlette.datastructures import QueryParams
    >>> getattr(SalesQuery.from_query(QueryParams("from=2026-10-01&group_by=day")), "from")
    '2026-10-01'
    >>> SalesQuery.from_query(QueryParams("from=2026-10-05&to=2026-10-04"))
    Traceback (most recent call last):
    ...
    svc_api.core.errors.Invalid: from must be on or before to
"""

from __future__ import annotations

import re
from typing import Any, ClassVar, cast

from pydantic import create_model

from svc_api.core.contract import Sent
from svc_api.core.cursors import page_size
from svc_api.core.errors import Invalid
from svc_api.education.contract import (
    DEFAULT_LIMIT,
    MAX_LIMIT,
    Annotated,
    Answer,
    Check,
    Cursor,
    EduQuery,
    Limit,
    Op,
)
from svc_api.education.payouts import analytics, replies

_ID = re.compile(r"[A-Za-z0-9_-]{1,24}")
_CURRENCY = re.compile(r"[A-Z]{3}")
_UNGROUPED = "cursor and limit page the breakdown: send them with group_by"


def _from(value: str | None, name: str) -> str | None:
    if value is not None:
        analytics.day_number(value, name)
    return value


def _to(sent: Sent, name: str) -> str | None:
    value, start = sent.value, sent.request.get("from")
    if value is not None:
        end = analytics.day_number(value, name)
        if start is not None and analytics.day_number(start, "from") > end:
            raise Invalid("from must be on or before to")
    return value


def _item_id(sent: Sent, name: str) -> str | None:
    value, request = sent.value, sent.request
    if (
        name == "product_id"
        and request.get("product_id") is not None
        and request.get("bundle_id") is not None
    ):
        raise Invalid("send at most one of product_id and bundle_id")
    if value is not None and not _ID.fullmatch(value):
        raise Invalid(f"{name} must be an id, got {value!r}")
    return value


def _currency(value: str | None, name: str) -> str | None:
    if value is not None and not _CURRENCY.fullmatch(value):
        raise Invalid(f"currency must be an ISO 4217 code such as USD, got {value!r}")
    return value


def _group(value: str | None, name: str) -> str | None:
    if value is not None and value not in analytics.GROUPS:
        raise Invalid(f"group_by must be one of {', '.join(analytics.GROUPS)}, got {value!r}")
    return value


def _breakdown_cursor(sent: Sent, name: str) -> str | None:
    if sent.value is not None and sent.request.get("group_by") is None:
        raise Invalid(_UNGROUPED)
    return sent.value


def _breakdown_limit(sent: Sent, name: str) -> int:
    if sent.value is not None and sent.request.get("group_by") is None:
        raise Invalid(_UNGROUPED)
    return page_size(sent.value, DEFAULT_LIMIT, 1, MAX_LIMIT)


def _text(rule: Any, description: str, **schema: Any) -> Any:
    return Annotated[str | None, Check(rule, {"type": "string", **schema, "description": description})]


class _Sales(EduQuery):
    """The sales filter, the grouping and the breakdown's page; ``from`` (a Python keyword) is read
    with ``getattr``. The rules of ``to``, the ids and the page see the whole query."""

    sees: ClassVar[tuple[str, ...]] = ("to", "product_id", "bundle_id", "cursor", "limit")

    @classmethod
    def prepare(cls, data: Any) -> Any:
        return super().prepare(data) | {n: Sent(data.get(n), data) for n in cls.sees}


_ID_SCHEMA = {"pattern": "^[A-Za-z0-9_-]{1,24}$"}
SalesQuery = cast(
    type[_Sales],
    create_model(  # type: ignore[call-overload]
        "SalesQuery",
        __base__=_Sales,
        __doc__=_Sales.__doc__,
        **{
            "from": (_text(_from, "First UTC day, `YYYY-MM-DD` (inclusive).", format="date"), ...),
            "to": (_text(_to, "Last UTC day, `YYYY-MM-DD` (inclusive).", format="date"), ...),
            "product_id": (
                _text(_item_id, "Orders of this product only (not with `bundle_id`).", **_ID_SCHEMA),
                ...,
            ),
            "bundle_id": (
                _text(_item_id, "Orders of this bundle only (not with `product_id`).", **_ID_SCHEMA),
                ...,
            ),
            "currency": (
                _text(_currency, "ISO 4217; default the catalog's (`EDU_CURRENCY`).", pattern="^[A-Z]{3}$"),
                ...,
            ),
            "group_by": (
                Annotated[
                    str | None,
                    Check(
                        _group,
                        {
                            "enum": list(analytics.GROUPS),
                            "description": "Add a breakdown: `product` (per sold product or bundle) or"
                            " `day` (per UTC day).",
                        },
                    ),
                ],
                ...,
            ),
            "cursor": (_text(_breakdown_cursor, "Opaque cursor of the breakdown (with `group_by`)."), ...),
            "limit": (
                Annotated[
                    int,
                    Check(
                        _breakdown_limit,
                        {
                            "type": "integer",
                            "minimum": 1,
                            "maximum": MAX_LIMIT,
                            "description": "Breakdown page size 1-100 (default 20; with `group_by`).",
                        },
                    ),
                ],
                ...,
            ),
        },
    ),
)
"""The query of ``GET /studio/analytics/sales``, in the order its parameters are checked."""


class StatementQuery(EduQuery):
    """One page of the payout statements."""

    cursor: Cursor
    limit: Limit


_AUTH = Answer(401, "`unauthenticated` (no session token) or `session_expired` (a token that is not valid).")
_ROLE = Answer(
    403,
    "`not_instructor`: the caller holds none of the roles community_leader, admin, moderator, leader, owner.",
)

SALES = Op(
    "edu_studio_sales",
    "The instructor's own sales, summed, with an optional paged breakdown by product or by day.",
    replies.EduSalesReport,
    description="Read from the sales ledger: one `sale` entry per paid order and one `refund` entry per"
    " refunded order, each counted on the UTC day it happened. `net = gross - refunds`, before the"
    " platform's deductions (payout statements show those). `cursor` and `limit` page the breakdown and"
    " need `group_by`; a cursor is bound to its filter. Each parameter at most once.",
    query=SalesQuery,
    done="The summary and, with `group_by`, a page of the breakdown.",
    errors=(
        Answer(
            400,
            "`invalid_request`: an unknown or repeated parameter, a `from`/`to` that is not a date or a"
            " `from` after `to`, both `product_id` and `bundle_id`, a malformed id or currency, a"
            " `group_by` outside its values, `cursor` or `limit` without `group_by`; `invalid_cursor`"
            " (malformed, tampered, or of another filter); `invalid_page_size`.",
        ),
        _AUTH,
        _ROLE,
    ),
)
STATEMENTS = Op(
    "edu_studio_payout_statements",
    "The instructor's payout statements (accounts payable), newest month first, and the unpaid balance.",
    replies.EduStatementPage,
    description="One statement per closed month (UTC) and currency with sales or refunds, written by the"
    " monthly payout run: `gross`, `deductions` (the month's refunds; the platform's commission,"
    " `EDU_COMMISSION_PCT` of each sale rounded half up per sale and given back on refund; payment"
    " fees, `EDU_PAYMENT_FEE_PCT` of each paid sale, kept on refund) and `net = gross -"
    " deductions.total`, equal to the orders and refunds behind them to the minor unit. `status: paid`"
    " once a payout covers it (`payout.amount` in the payout currency, `fx_rate` when converted).",
    query=StatementQuery,
    done="A page of statements and the balances per currency.",
    errors=(
        Answer(
            400,
            "`invalid_request` (an unknown or repeated parameter), `invalid_cursor` (malformed, tampered,"
            " or of another list), `invalid_page_size`.",
        ),
        _AUTH,
        _ROLE,
    ),
)
