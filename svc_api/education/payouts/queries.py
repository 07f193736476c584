"""Every SQL statement of payouts: statements, payout instructions, the accounts-payable ledger and
FX rates."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Row

from svc_api.core.upsert import inserted
from svc_api.education.payouts.tables import fx_rates, payables, payout_statements, payouts

S = payout_statements.c
P = payouts.c
A = payables.c
F = fx_rates.c


def latest_statement_end(conn: Connection, leader_id: str) -> int | None:
    """The end of the seller's latest statement period (statements are written in order)."""
    return conn.execute(sa.select(sa.func.max(S.period_end)).where(S.leader_id == leader_id)).scalar()


def add_statement(conn: Connection, **values: Any) -> bool:
    """Insert a statement unless the seller has one for that period and currency. Its id is made of
    that key too, so the conflict may surface on either unique index: no conflict target."""
    return inserted(conn, payout_statements, values)


def add_payable(conn: Connection, **values: Any) -> bool:
    """One accounts-payable entry per statement (+) and per payout (-)."""
    return inserted(conn, payables, values, keys=["ref_id", "kind"])


def unpaid_statements(conn: Connection, leader_id: str, last_period: str) -> list[Row[Any]]:
    """The seller's statements up to ``last_period`` that no payout covers yet."""
    query = sa.select(S.statement_id, S.currency, S.net_minor).where(
        S.leader_id == leader_id, S.payout_id.is_(None), S.period <= last_period
    )
    return list(conn.execute(query.order_by(S.period, S.currency)))


def add_payout(conn: Connection, **values: Any) -> bool:
    """Insert a payout unless the seller was paid for that period and currency (the unique key; the
    id repeats it, hence no conflict target)."""
    return inserted(conn, payouts, values)


def claim_statements(conn: Connection, statement_ids: Sequence[str], payout_id: str) -> int:
    """Mark still-unpaid statements as covered by ``payout_id``; how many this call marked."""
    result = conn.execute(
        payout_statements.update()
        .where(S.statement_id.in_(list(statement_ids)), S.payout_id.is_(None))
        .values(payout_id=payout_id)
    )
    return int(result.rowcount)


_PAYOUT_COLUMNS = (
    P.payout_currency,
    P.payout_amount_minor,
    P.fx_rate_micros,
    P.state,
    P.created_at.label("paid_at"),
)


def statements_page(
    conn: Connection, leader_id: str, after: tuple[str, str] | None, limit: int
) -> list[Row[Any]]:
    """The seller's statements, newest period first, with their payout, keyset on (period, id)."""
    query = (
        sa.select(payout_statements, *_PAYOUT_COLUMNS)
        .select_from(payout_statements.outerjoin(payouts, P.payout_id == S.payout_id))
        .where(S.leader_id == leader_id)
    )
    if after is not None:
        query = query.where(sa.tuple_(S.period, S.statement_id) < after)
    return list(conn.execute(query.order_by(S.period.desc(), S.statement_id.desc()).limit(limit)))


def balances(conn: Connection, leader_id: str) -> list[Row[Any]]:
    """The seller's accounts-payable balance per currency (the ledger's sum)."""
    query = (
        sa.select(A.currency, sa.func.sum(A.amount_minor).label("amount"))
        .where(A.leader_id == leader_id)
        .group_by(A.currency)
        .order_by(A.currency)
    )
    return list(conn.execute(query))


def run_payouts(conn: Connection, run_id: str) -> list[Row[Any]]:
    """The payouts one run issued, in seller order."""
    return list(conn.execute(sa.select(payouts).where(P.run_id == run_id).order_by(P.leader_id, P.currency)))


def run_exports(conn: Connection) -> list[tuple[str, str]]:
    """Every run that issued payouts, with the export file its payouts name (oldest run first)."""
    query = sa.select(P.run_id, P.export_file, sa.func.min(P.created_at).label("at")).group_by(
        P.run_id, P.export_file
    )
    return [(row.run_id, row.export_file) for row in conn.execute(query.order_by("at", P.run_id))]


def add_rate(conn: Connection, base: str, quote: str, rate_micros: int, now: int) -> None:
    conn.execute(fx_rates.insert().values(base=base, quote=quote, rate_micros=rate_micros, set_at=now))


def rate(conn: Connection, base: str, quote: str) -> Row[Any] | None:
    """The latest rate of ``base`` in ``quote``: ``(rate_micros, set_at)``, or None (older ones stay
    as history)."""
    query = (
        sa.select(F.rate_micros, F.set_at)
        .where(F.base == base, F.quote == quote)
        .order_by(F.set_at.desc(), F.rate_id.desc())
        .limit(1)
    )
    return conn.execute(query).first()
