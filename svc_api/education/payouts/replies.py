"""The reply models of the instructor's sales and payouts: the sales report with its breakdown, and
the payout statements with the balances.

Example:
    >>> EduSignedMoney.model_validate({"amount_minor": -640, "currency": "USD"}).amount_minor
    -640
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from svc_api.education.contract import Page, Shape

_DATE = {"format": "date"}


class EduSignedMoney(Shape):
    """An amount in the currency's smallest unit (cents); negative where refunds outweigh sales (a
    net, a balance)."""

    amount_minor: int
    currency: Annotated[str, Field(pattern="^[A-Z]{3}$")]
    """ISO 4217 code."""


class EduSalesFilter(Shape):
    """The filter as sent (null: not sent)."""

    from_: Annotated[str | None, Field(alias="from")] = None
    to: str | None = None
    product_id: str | None = None
    bundle_id: str | None = None
    group_by: Literal["product", "day"] | None = None


class EduSalesFigures(Shape):
    """Sales (paid orders) and refunds counted in a span, and their amounts."""

    orders: Annotated[int, Field(ge=0)]
    refunded_orders: Annotated[int, Field(ge=0)]
    gross: EduSignedMoney
    refunds: EduSignedMoney
    net: EduSignedMoney


class EduSalesItem(Shape):
    """A sold product or bundle."""

    kind: Literal["product", "bundle"]
    id: str
    title: str | None


class EduSalesRow(EduSalesFigures):
    """The figures of one day (`group_by=day`) or one sold item (`group_by=product`)."""

    date: Annotated[str, Field(json_schema_extra=_DATE)] | None = None
    """`group_by=day`."""
    item: EduSalesItem | None = None
    """`group_by=product`."""


class EduSalesBreakdown(Page):
    """A page of the breakdown."""

    items: list[EduSalesRow]


class EduSalesReport(Shape):
    """The instructor's sales under the filter: the summary and, with `group_by`, the breakdown."""

    filter: EduSalesFilter
    currency: str
    summary: EduSalesFigures
    breakdown: EduSalesBreakdown | None


class EduStatementDeductions(Shape):
    """What the platform deducts from a month's gross."""

    refunds: EduSignedMoney
    commission: EduSignedMoney
    payment_fees: EduSignedMoney
    total: EduSignedMoney


class EduStatementPayout(Shape):
    """The payout that covers a statement."""

    payout_id: str
    state: Literal["issued"]
    amount: EduSignedMoney
    fx_rate: str | None
    """Units of the payout currency per unit of the statement's."""
    issued_at: int


class EduStatement(Shape):
    """One closed month (UTC) and currency of the instructor's sales."""

    statement_id: str
    period: Annotated[str, Field(pattern="^[0-9]{4}-[0-9]{2}$")]
    period_start: int
    period_end: int
    orders: Annotated[int, Field(ge=0)]
    refunded_orders: Annotated[int, Field(ge=0)]
    gross: EduSignedMoney
    deductions: EduStatementDeductions
    net: EduSignedMoney
    commission_pct: float
    payment_fee_pct: float
    status: Literal["accrued", "paid"]
    payout: EduStatementPayout | None
    created_at: int


class EduStatementPage(Page):
    """A page of statements, newest month first, and the unpaid balance per currency."""

    items: list[EduStatement]
    balances: list[EduSignedMoney]
