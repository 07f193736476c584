"""Payout statements: one per seller, closed period (calendar month, UTC) and currency with sales
or refunds in it, written by the payout run and never changed afterwards except for the payout that
covers it. Each statement credits the seller's accounts-payable ledger with its net (a negative net,
a month of refunds, debits it) in the same transaction; a payout debits it.

Example:
    >>> statement_id("AB12CD", "2026-10", "USD")
    'st_AB12CD_202610_USD'
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from sqlalchemy.engine import Connection, Row

from svc_api.education.commerce import service as commerce
from svc_api.education.money import money
from svc_api.education.payouts import figures, queries


def statement_id(leader_id: str, period: str, currency: str) -> str:
    """The one id a statement of this seller, period and currency can have (readable, and equal in
    two runs racing each other)."""
    return f"st_{leader_id}_{period.replace('-', '')}_{currency}"


def write_closed(
    conn: Connection, leader_id: str, last_period: str, *, commission_bp: int, fee_bp: int, now: int
) -> int:
    """Write the seller's missing statements up to ``last_period`` (closed periods after the latest
    statement); how many this call wrote."""
    end = figures.period_bounds(last_period)[1]
    start = queries.latest_statement_end(conn, leader_id)
    if start is not None and start >= end:
        return 0
    grouped: dict[tuple[str, str], list[Row[Any]]] = defaultdict(list)
    for entry in commerce.seller_entries(conn, leader_id, start, end):
        grouped[(figures.period_of(entry.at), entry.currency)].append(entry)
    written = 0
    for (period, currency), entries in sorted(grouped.items()):
        sums = figures.statement_figures(entries, commission_bp, fee_bp)
        period_start, period_end = figures.period_bounds(period)
        sid = statement_id(leader_id, period, currency)
        if not queries.add_statement(
            conn,
            statement_id=sid,
            leader_id=leader_id,
            period=period,
            currency=currency,
            period_start=period_start,
            period_end=period_end,
            orders=sums.orders,
            refunded_orders=sums.refunded_orders,
            gross_minor=sums.gross,
            refunds_minor=sums.refunds,
            commission_minor=sums.commission,
            fees_minor=sums.fees,
            net_minor=sums.net,
            commission_bp=commission_bp,
            fee_bp=fee_bp,
            created_at=now,
        ):
            continue
        queries.add_payable(
            conn,
            leader_id=leader_id,
            kind="statement",
            ref_id=sid,
            amount_minor=sums.net,
            currency=currency,
            at=now,
        )
        written += 1
    return written


def view(row: Row[Any]) -> dict[str, Any]:
    """A statement as its seller reads it."""
    cur = row.currency
    deductions = int(row.refunds_minor) + int(row.commission_minor) + int(row.fees_minor)
    payout = None
    if row.payout_id is not None:
        payout = {
            "payout_id": row.payout_id,
            "state": row.state,
            "amount": money(row.payout_amount_minor, row.payout_currency),
            "fx_rate": None if row.fx_rate_micros is None else rate_text(int(row.fx_rate_micros)),
            "issued_at": row.paid_at,
        }
    return {
        "statement_id": row.statement_id,
        "period": row.period,
        "period_start": row.period_start,
        "period_end": row.period_end,
        "orders": row.orders,
        "refunded_orders": row.refunded_orders,
        "gross": money(row.gross_minor, cur),
        "deductions": {
            "refunds": money(row.refunds_minor, cur),
            "commission": money(row.commission_minor, cur),
            "payment_fees": money(row.fees_minor, cur),
            "total": money(deductions, cur),
        },
        "net": money(row.net_minor, cur),
        "commission_pct": row.commission_bp / 100,
        "payment_fee_pct": row.fee_bp / 100,
        "status": "paid" if payout is not None else "accrued",
        "payout": payout,
        "created_at": row.created_at,
    }


def rate_text(micros: int) -> str:
    """Millionths as a decimal string without trailing zeros.

    Example:
        >>> rate_text(41_250_000), rate_text(1_000_000)
        ('41.25', '1')
    """
    whole, frac = divmod(micros, figures.MICROS)
    return f"{whole}.{frac:06d}".rstrip("0").rstrip(".")


def page(
    conn: Connection, leader_id: str, after: dict[str, Any] | None, limit: int
) -> tuple[list[dict[str, Any]], bool, list[dict[str, Any]]]:
    """A page of the seller's statements (newest first), whether more follow, and the seller's
    accounts-payable balances (money per currency)."""
    key = None if after is None else (str(after["p"]), str(after["id"]))
    rows = queries.statements_page(conn, leader_id, key, limit + 1)
    balances = [money(int(row.amount), row.currency) for row in queries.balances(conn, leader_id)]
    return [view(row) for row in rows[:limit]], len(rows) > limit, balances
