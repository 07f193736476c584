"""Payments between accounts for the marketplace: a buyer pays a creator, less the platform's fee.

Example:
    >>> PLATFORM_ACCOUNT
    '_FEES_'
"""

from __future__ import annotations

from typing import Any

from sqlalchemy.engine import Connection

from svc_api.accounts import service as accounts
from svc_api.core.errors import Invalid
from svc_api.core.money import to_units  # noqa: F401 (used by the examples)
from svc_api.credits import queries
from svc_api.credits.ledger import _post

PLATFORM_ACCOUNT = "_FEES_"
"""The platform's own account (made on its first fee; no login): marketplace fees are credited to
it, so every credit a buyer pays is on some ledger, to the unit."""


def pay_with_fee(
    conn: Connection,
    payer: str,
    payee: str,
    units: int,
    fee_pct: float,
    action: str,
    description: str,
    idempotency_key: str,
    *,
    now: int,
) -> dict[str, Any]:
    """Move ``units`` (credit units, > 0) from ``payer``: ``payee`` gets them less the platform fee
    (``fee_pct`` percent, rounded down to the unit), :data:`PLATFORM_ACCOUNT` gets the fee; one ledger
    row per account moved, in the caller's transaction, each under ``idempotency_key`` (a repeat pays
    nothing again). Short of credits: :class:`InsufficientCredits`, nothing written.

    Returns ``{"charged", "payee_share", "fee", "replayed"}`` in units.

    Example:
        >>> from svc_api.accounts.service import register
        >>> from svc_api.credits.service import balance, deposit_credits
        >>> with store.write() as conn:
        ...     a = register(conn, "a@example.com", "password1", ip="::1", ttl=60, now=0).svc_id
        ...     b = register(conn, "b@example.com", "password1", ip="::1", ttl=60, now=0).svc_id
        ...     _ = deposit_credits(conn, a, 5, now=0)
        ...     paid = pay_with_fee(conn, a, b, to_units(2), 20, "marketplace_signal", "signal", "k1", now=1)
        ...     again = pay_with_fee(conn, a, b, to_units(2), 20, "marketplace_signal", "signal", "k1", now=2)
        ...     balance(conn, a), balance(conn, b), balance(conn, PLATFORM_ACCOUNT), again["replayed"]
        (3, 1.6, 0.4, True)
    """
    if units <= 0:
        raise Invalid("a payment must be positive")
    fee = int(units * fee_pct // 100)
    paid = _post(conn, payer, -units, "spend", action, description, idempotency_key=idempotency_key, now=now)
    if paid["replayed"]:
        return {"charged": units, "payee_share": units - fee, "fee": fee, "replayed": True}
    key = f"{idempotency_key}:{payer}"[:128]  # payee and platform are paid by many payers under one key
    _post(conn, payee, units - fee, "deposit", action, description, idempotency_key=key, now=now)
    if fee:
        accounts.ensure_system_account(conn, PLATFORM_ACCOUNT, "fees@platform.invalid", now=now)
        _post(
            conn,
            PLATFORM_ACCOUNT,
            fee,
            "deposit",
            action,
            f"fee: {description}",
            idempotency_key=key,
            now=now,
        )
    return {"charged": units, "payee_share": units - fee, "fee": fee, "replayed": False}


def pay_many_with_fee(
    conn: Connection,
    payers: list[str],
    payee: str,
    units: int,
    fee_pct: float,
    action: str,
    description: str,
    idempotency_key: str,
    *,
    now: int,
) -> list[str]:
    """:func:`pay_with_fee` for many payers of one price at once (a signal to every subscriber): each
    payer whose balance covers ``units`` is debited with a ledger row under ``idempotency_key``; the
    payee gets one row of the shares and the platform one row of the fees, so debits equal credits to
    the unit. Payers who paid under the key before count as paid and are not charged again. Returns
    who paid, in the order given.

    Example:
        >>> from svc_api.accounts.service import register
        >>> from svc_api.credits.service import balance, deposit_credits
        >>> with store.write() as conn:
        ...     a, b, c = (register(conn, f"{x}@example.com", "password1", ip="::1", ttl=60, now=0).svc_id
        ...                for x in "abc")
        ...     _ = deposit_credits(conn, a, 5, now=0)
        ...     paid = pay_many_with_fee(conn, [a, b], c, to_units(2), 20, "marketplace_signal", "s", "k",
        ...                              now=1)
        ...     paid == [a], balance(conn, a), balance(conn, c), balance(conn, PLATFORM_ACCOUNT)
        (True, 3, 1.6, 0.4)
    """
    if units <= 0:
        raise Invalid("a payment must be positive")
    before = queries.keyed(conn, payers, idempotency_key)
    rows = queries.take_from_many(conn, [p for p in payers if p not in before], units)
    entry = {"type": "spend", "amount": -units, "action": action, "description": description[:500]}
    queries.insert_entries(
        conn,
        [
            entry
            | {
                "transaction_id": f"{r.svc_id}-{int(r.ledger_seq):08d}",
                "svc_id": r.svc_id,
                "seq": int(r.ledger_seq),
                "balance_after": int(r.credits),
                "reason": None,
                "idempotency_key": idempotency_key,
                "created_at": now,
            }
            for r in rows
        ],
    )
    fee = int(units * fee_pct // 100)
    if rows:
        key, many = f"{idempotency_key}:payees"[:128], len(rows)
        _post(
            conn,
            payee,
            (units - fee) * many,
            "deposit",
            action,
            f"{description} x{many}",
            idempotency_key=key,
            now=now,
        )
        if fee:
            accounts.ensure_system_account(conn, PLATFORM_ACCOUNT, "fees@platform.invalid", now=now)
            note = f"fee: {description} x{many}"
            _post(conn, PLATFORM_ACCOUNT, fee * many, "deposit", action, note, idempotency_key=key, now=now)
    paid = before | {r.svc_id for r in rows}
    return [p for p in payers if p in paid]
