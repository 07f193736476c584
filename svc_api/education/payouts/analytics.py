"""Sales analytics of one instructor, read from the sales ledger (one ``sale`` entry per paid order,
one ``refund`` entry per refunded order, each dated when it happened).

The filter (ours): ``from`` and ``to`` (UTC dates ``YYYY-MM-DD``, both inclusive), at most one of
``product_id`` and ``bundle_id`` (orders of that item), ``currency`` (default the catalog's). The
summary: ``orders`` (sales in the span), ``refunded_orders`` (refunds in the span), ``gross`` (their
amounts), ``refunds`` (refunded amounts), ``net = gross - refunds`` (before the platform's deductions,
which payout statements show). ``group_by=product`` (per sold product or bundle) or ``group_by=day``
(per UTC day with activity) adds a paged ``breakdown`` of the same figures.

Example:
    >>> from types import SimpleNamespace as Query
    >>> query = Query(**{"from": "2026-10-01"}, to="2026-10-31", product_id=None, bundle_id=None,
    ...               currency=None, group_by=None)
    >>> spec_of(query, "USD")["span"]
    (1790812800, 1793491200)
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping
from typing import Any

from sqlalchemy.engine import Connection

from svc_api.core.errors import Invalid
from svc_api.education.catalog import service as catalog
from svc_api.education.commerce import service as commerce
from svc_api.education.money import money

GROUPS = ("product", "day")
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


def day_number(value: str, name: str) -> int:
    """Days since the epoch of a ``YYYY-MM-DD`` date (400 naming ``name`` otherwise).

    Example:
        >>> day_number("1970-01-02", "from")
        1
    """
    try:
        if not _DATE.fullmatch(value):
            raise ValueError
        return (dt.date.fromisoformat(value) - dt.date(1970, 1, 1)).days
    except ValueError:
        raise Invalid(f"{name} must be a date YYYY-MM-DD, got {value!r}") from None


def spec_of(query: Any, default_currency: str) -> dict[str, Any]:
    """The span ``[start, end)`` in seconds (None: open), the item (kind, id) or None, the currency
    and the grouping (None: summary only) of a query the route's model checked."""
    start, to = getattr(query, "from"), query.to
    item = None
    if query.product_id is not None:
        item = ("product", query.product_id)
    elif query.bundle_id is not None:
        item = ("bundle", query.bundle_id)
    return {
        "span": (
            None if start is None else day_number(start, "from") * 86_400,
            None if to is None else (day_number(to, "to") + 1) * 86_400,
        ),
        "item": item,
        "currency": query.currency or default_currency,
        "group_by": query.group_by,
    }


def fingerprint(spec: Mapping[str, Any]) -> str:
    """The list name of a breakdown: a cursor is valid for the same filter only."""
    item = spec["item"] or ("", "")
    start, end = spec["span"]
    return f"sales:{spec['group_by']}:{spec['currency']}:{start}:{end}:{item[0]}:{item[1]}"


def _figures(row: Any, currency: str) -> dict[str, Any]:
    gross, refunds = int(row.gross), int(row.refunds)
    return {
        "orders": int(row.orders),
        "refunded_orders": int(row.refunded_orders),
        "gross": money(gross, currency),
        "refunds": money(refunds, currency),
        "net": money(gross - refunds, currency),
    }


def summary(conn: Connection, leader_id: str, spec: Mapping[str, Any]) -> dict[str, Any]:
    """The summary of the seller's sales under the filter."""
    row = commerce.sales_totals(conn, leader_id, spec["currency"], spec["span"], spec["item"])
    return _figures(row, spec["currency"])


def breakdown(
    conn: Connection, leader_id: str, spec: Mapping[str, Any], after: dict[str, Any] | None, limit: int
) -> tuple[list[dict[str, Any]], bool]:
    """A page of the breakdown, whether more follow."""
    by, currency = spec["group_by"], spec["currency"]
    key: Any = None
    if after is not None:
        key = (str(after["k"]), str(after["id"])) if by == "product" else int(after["d"])
    rows = commerce.sales_breakdown(conn, leader_id, currency, spec["span"], spec["item"], by, key, limit + 1)
    rows, more = rows[:limit], len(rows) > limit
    if by == "day":
        epoch = dt.date(1970, 1, 1)
        days = [(epoch + dt.timedelta(days=int(r.day))).isoformat() for r in rows]
        return [{"date": day, **_figures(r, currency)} for day, r in zip(days, rows, strict=True)], more
    products = catalog.products_by_id(conn, [r.item_id for r in rows if r.item_kind == "product"])
    items = []
    for r in rows:
        if r.item_kind == "product":
            title = products[r.item_id].title if r.item_id in products else None
        else:
            bundle = catalog.bundle_row(conn, r.item_id)
            title = bundle.title if bundle is not None else None
        item = {"kind": r.item_kind, "id": r.item_id, "title": title}
        items.append({"item": item, **_figures(r, currency)})
    return items, more


def position(item: Mapping[str, Any]) -> dict[str, Any]:
    """The cursor position after a breakdown item."""
    if "date" in item:
        return {"d": day_number(item["date"], "date")}
    return {"k": item["item"]["kind"], "id": item["item"]["id"]}
