"""The monthly payout run: statements for every seller and closed period, then a payout instruction
for each seller whose profile is complete and whose unpaid balance meets the minimum.

For each seller with sales, in a write transaction of its own:

1. write the missing statements of closed periods up to the run's period (:mod:`.statements`);
2. sum the unpaid statements up to that period, per currency: the balance;
3. pay it, or leave it to accrue to the next run, with a reason:
   ``nothing_due`` (balance of 0 or less), ``profile_incomplete`` (a seller gate is missing),
   ``no_fx_rate`` (the payout currency needs a rate that was never set: the run refuses to pay),
   ``stale_fx_rate`` (the latest rate was set more than ``EDU_FX_MAX_AGE_HOURS`` before the run:
   refused too, until an operator sets today's),
   ``below_minimum`` (under ``EDU_PAYOUT_MIN_TR_USD`` in TRY for Turkey-based sellers, under
   ``EDU_PAYOUT_MIN_INTL_USD`` for international ones), ``already_paid`` (this seller, period and
   currency were paid by an earlier or concurrent run: the payout's unique key refused a second);
4. a payout is a row in ``edu_payouts`` (unique per seller, period and currency), its statements
   marked paid by a compare-and-set (a run racing another that claims fewer statements than it
   summed rolls back: ``concurrent_run``), and a ``payout`` entry of minus the balance in the
   accounts-payable ledger, all in that one transaction.

The instructions a run issued are exported after it as one CSV file,
``var/payouts/payouts-<period>-<run_id>.csv`` (:data:`CSV_COLUMNS`; each payout row keeps the name
relative to the var directory, so :func:`export_again` can write it again). Every run also writes
the missing file of any earlier run (one killed after committing payouts, before exporting them):
a payout issued is always in an export file once the next run has happened.

Example:
    >>> payout_id("AB12CD", "2026-10", "USD")
    'po_AB12CD_202610_USD'
"""

from __future__ import annotations

import csv
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy.engine import Connection

from svc_api.core.errors import Invalid, NotFound
from svc_api.core.store import Store
from svc_api.education.commerce import service as commerce
from svc_api.education.money import money
from svc_api.education.payouts import figures, queries, statements
from svc_api.education.studio import service as studio

CSV_COLUMNS = (
    "payout_id",
    "seller_id",
    "period",
    "amount_minor",
    "currency",
    "payout_amount_minor",
    "payout_currency",
    "fx_rate",
    "country",
    "legal_entity",
    "tax_id",
    "bank_account",
    "swift_bic",
    "e_document_type",
    "reference",
)
REFUSALS = ("no_fx_rate", "stale_fx_rate")
"""Reasons the run refuses to pay a balance (an operator must act), as opposed to letting it accrue."""
WINDOW_DAYS = (20, 30)
"""The days of the month (UTC, inclusive) on which the scheduler runs the payout run."""


@dataclass(frozen=True)
class Policy:
    """The run's rules, from the settings."""

    commission_bp: int = 2000
    fee_bp: int = 300
    min_tr_usd: int = 20
    min_intl_usd: int = 250
    fx_max_age_seconds: int = 72 * 3600

    @classmethod
    def from_settings(cls, settings: Any) -> Policy:
        """The policy of ``EDU_COMMISSION_PCT``, ``EDU_PAYMENT_FEE_PCT``, the two minimums and
        ``EDU_FX_MAX_AGE_HOURS``."""
        return cls(
            figures.basis_points(settings.edu_commission_pct),
            figures.basis_points(settings.edu_payment_fee_pct),
            int(settings.edu_payout_min_tr_usd),
            int(settings.edu_payout_min_intl_usd),
            int(settings.edu_fx_max_age_hours * 3600),
        )


class _Raced(Exception):
    """Another run claimed a statement this one summed: roll this seller back."""


def payout_id(leader_id: str, period: str, currency: str) -> str:
    """The one id a payout of this seller, period and currency can have."""
    return f"po_{leader_id}_{period.replace('-', '')}_{currency}"


def _converted(
    conn: Connection, amount: int, base: str, quote: str, *, fresh_since: int
) -> tuple[int, int] | str:
    """``amount`` of ``base`` in ``quote`` and the rate used (millionths of quote per base; 1 for the
    same currency); the inverse rate serves when only that was set. Without a rate ``no_fx_rate``,
    with one set before ``fresh_since`` ``stale_fx_rate``."""
    if base == quote:
        return amount, figures.MICROS
    found, inverse = queries.rate(conn, base, quote), False
    if found is None:
        found, inverse = queries.rate(conn, quote, base), True
    if found is None:
        return "no_fx_rate"
    if int(found.set_at) < fresh_since:
        return "stale_fx_rate"
    rate = int(found.rate_micros)
    if not inverse:
        return figures.convert(amount, base, quote, rate), rate
    direct = (figures.MICROS * figures.MICROS * 2 + rate) // (2 * rate)
    return figures.convert(amount, base, quote, rate, inverse=True), direct


def _decide(
    conn: Connection, details: dict[str, Any], balance: int, currency: str, policy: Policy, now: int
) -> tuple[str, dict[str, Any]]:
    """(reason or ``pay``, the payout's amounts) for a complete profile's positive balance."""
    local = details["country"] == "TR"
    target = details["payout_currency"] or ("TRY" if local else currency)
    fresh_since = now - policy.fx_max_age_seconds
    paid = _converted(conn, balance, currency, target, fresh_since=fresh_since)
    if isinstance(paid, str):
        return paid, {"payout_currency": target}
    minimum_usd = 100 * (policy.min_tr_usd if local else policy.min_intl_usd)
    if local:  # the minimum in the local currency at today's rate
        minimum = _converted(conn, minimum_usd, "USD", target, fresh_since=fresh_since)
        if isinstance(minimum, str):
            return minimum, {"payout_currency": target}
        meets = paid[0] >= minimum[0]
    else:
        in_usd = _converted(conn, balance, currency, "USD", fresh_since=fresh_since)
        if isinstance(in_usd, str):
            return in_usd, {"payout_currency": "USD"}
        meets = in_usd[0] >= minimum_usd
    amounts = {
        "payout_currency": target,
        "payout_amount_minor": paid[0],
        "fx_rate_micros": None if target == currency else paid[1],
    }
    return ("pay" if meets else "below_minimum"), amounts


def settle(
    conn: Connection, leader_id: str, period: str, policy: Policy, *, run_id: str, export: str, now: int
) -> list[dict[str, Any]]:
    """Steps 1-4 of the module docstring for one seller; one outcome per currency of balance."""
    statements.write_closed(
        conn, leader_id, period, commission_bp=policy.commission_bp, fee_bp=policy.fee_bp, now=now
    )
    unpaid: dict[str, list[Any]] = {}
    for row in queries.unpaid_statements(conn, leader_id, period):
        unpaid.setdefault(row.currency, []).append(row)
    ready = studio.ready_for_payouts(conn, leader_id)
    details = studio.payout_details(conn, leader_id) if ready else None
    outcomes = []
    for currency, rows in sorted(unpaid.items()):
        balance = sum(int(row.net_minor) for row in rows)
        out = {"seller_id": leader_id, "balance": money(balance, currency), "payout_id": None}
        reason, amounts = "nothing_due", {}
        if balance > 0:
            reason = "profile_incomplete"
            if details is not None:
                reason, amounts = _decide(conn, details, balance, currency, policy, now)
        if reason == "pay":
            payout = {
                "payout_id": payout_id(leader_id, period, currency),
                "leader_id": leader_id,
                "period": period,
                "currency": currency,
                "amount_minor": balance,
                "state": "issued",
                "run_id": run_id,
                "export_file": export,
                "details": details,
                "created_at": now,
                **amounts,
            }
            reason = _pay(conn, payout, [row.statement_id for row in rows])
        state = "paid" if reason is None else "refused" if reason in REFUSALS else "accrued"
        out |= {"state": state, "reason": reason}
        if state == "paid":
            pay_amount = money(amounts["payout_amount_minor"], amounts["payout_currency"])
            out |= {"payout_id": payout_id(leader_id, period, currency), "amount": pay_amount}
        outcomes.append(out)
    return outcomes


def _pay(conn: Connection, payout: dict[str, Any], statement_ids: list[str]) -> str | None:
    """Issue the payout (None) or say why not (``already_paid``); :class:`_Raced` on a lost claim."""
    if not queries.add_payout(conn, **payout):
        return "already_paid"
    if queries.claim_statements(conn, statement_ids, payout["payout_id"]) != len(statement_ids):
        raise _Raced(payout["payout_id"])
    queries.add_payable(
        conn,
        leader_id=payout["leader_id"],
        kind="payout",
        ref_id=payout["payout_id"],
        amount_minor=-payout["amount_minor"],
        currency=payout["currency"],
        at=payout["created_at"],
    )
    return None


def payout_run(
    store: Store, policy: Policy, var_dir: Path, *, period: str | None, now: int
) -> dict[str, Any]:
    """Run the payouts of ``period`` (default: the last closed month); 400 for a malformed period or
    one that has not closed. The run's report: what each seller got, and the export file."""
    period = period or figures.previous_period(now)
    try:
        end = figures.period_bounds(period)[1]
    except ValueError as exc:
        raise Invalid(str(exc)) from None
    if end > now:
        raise Invalid(f"period {period} has not closed yet: a run pays closed months only")
    run_id = "run_" + secrets.token_hex(8)
    name = f"payouts/payouts-{period}-{run_id}.csv"
    with store.read() as conn:
        sellers = commerce.sellers_with_sales(conn, end)
    outcomes: list[dict[str, Any]] = []
    for leader_id in sellers:
        try:
            with store.write() as conn:
                outcomes += settle(conn, leader_id, period, policy, run_id=run_id, export=name, now=now)
        except _Raced:
            outcomes.append({"seller_id": leader_id, "state": "accrued", "reason": "concurrent_run"})
    paid = [out for out in outcomes if out["state"] == "paid"]
    export = Path(var_dir) / name
    if paid:
        export_run(store, run_id, export)
    return {
        "run_id": run_id,
        "period": period,
        "sellers": outcomes,
        "payouts": len(paid),
        "export": str(export) if paid else None,
        "exported_again": export_missing(store, Path(var_dir)),
    }


def export_missing(store: Store, var_dir: Path) -> list[str]:
    """Write the export file of every earlier run whose payouts were committed but whose file is
    not there (the run was killed between its sellers and its export, or the file was lost), so no
    issued payout is left out of the instructions; the files written.

    Example:
        >>> export_missing(store, Path("var"))
        []
    """
    with store.read() as conn:
        runs = queries.run_exports(conn)
    written = []
    for run_id, name in runs:
        path = var_dir / name
        if not path.exists():
            export_run(store, run_id, path)
            written.append(str(path))
    return written


def export_again(store: Store, var_dir: Path, run_id: str) -> dict[str, Any]:
    """Write a run's CSV again at the name its payouts keep (the run committed its payouts, then
    failed to write the file, or the file was lost); 404 for a run that issued no payouts.

    Example:
        >>> export_again(store, Path("var"), "run_0")
        Traceback (most recent call last):
        ...
        svc_api.core.errors.NotFound: run 'run_0' issued no payouts
    """
    with store.read() as conn:
        rows = queries.run_payouts(conn, run_id)
    if not rows:
        raise NotFound(f"run {run_id!r} issued no payouts")
    path = Path(var_dir) / rows[0].export_file
    return {"run_id": run_id, "export": str(path), "payouts": export_run(store, run_id, path)}


def export_run(store: Store, run_id: str, path: Path) -> int:
    """Write the payout instructions of a run as CSV (:data:`CSV_COLUMNS`); how many rows."""
    with store.read() as conn:
        rows = queries.run_payouts(conn, run_id)
    path.parent.mkdir(parents=True, exist_ok=True)
    # a name of this writer's own: two runs of one period may export the same file at once, and
    # each replaces it whole with the same rows
    temporary = path.with_suffix(f".{secrets.token_hex(4)}.tmp")
    with temporary.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(CSV_COLUMNS)
        for row in rows:
            d = dict(row.details or {})
            rate = None if row.fx_rate_micros is None else statements.rate_text(int(row.fx_rate_micros))
            writer.writerow(
                [
                    row.payout_id,
                    row.leader_id,
                    row.period,
                    row.amount_minor,
                    row.currency,
                    row.payout_amount_minor,
                    row.payout_currency,
                    rate or "",
                    d.get("country") or "",
                    d.get("legal_entity") or "",
                    d.get("tax_id") or "",
                    d.get("bank_account") or "",
                    d.get("swift_bic") or "",
                    d.get("e_document_type") or "",
                    f"{row.payout_id} {row.period}",
                ]
            )
    temporary.replace(path)
    return len(rows)
