"""Generating strategies: claim a ``generating`` version, compile it, finish it ``active`` or ``failed``.

Versions are claimed in the database (``claimed_by``, ``claimed_at``, ``attempts``), so several
worker threads and several processes share the work without doing a version twice. A claim not
finished within ``stale_after`` seconds was left by a crash: it is released for another attempt,
or, after :data:`MAX_ATTEMPTS` attempts, the version fails and its charge is refunded. That
recovery runs when a worker (:mod:`svc_api.strategies.worker`) starts and then periodically.

A failed generation keeps the compiler's message, phrase, position and suggestion, and refunds the
upfront charge in full (ledger action ``strategy_refund``, once: the refund is keyed by the version's
``generation_id``).

Example:
    >>> outcome = compile_version({"entry_condition": "close is above SMA(50)", "tp_condition": "3%",
    ...     "sl_condition": None, "market_type": "spot", "position_side": "long",
    ...     "signal_mode": "signal_orders"})
    >>> outcome.status, outcome.candle_count
    ('active', 50)
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sqlalchemy.engine import Connection

from svc_api.credits import service as credits
from svc_api.strategies import queries
from svc_engine.strategy import StrategyCompileError, compile_strategy

logger = logging.getLogger("svc_api.generation")

MAX_ATTEMPTS = 3
STALE_AFTER = 30
_INTERRUPTED = "generation was interrupted repeatedly; the credit was refunded, edit the strategy to retry"


@dataclass(frozen=True)
class Outcome:
    """The result of compiling one version: ``active`` with the program, or ``failed`` with the error.

    Example:
        >>> Outcome("failed", error={"message": "x"}).program_json is None
        True
    """

    status: str
    program_json: str | None = None
    candle_count: int | None = None
    error: dict[str, Any] | None = None


def compile_version(fields: Mapping[str, Any]) -> Outcome:
    """Compile the conditions and settings of a version with the engine.

    Example:
        >>> out = compile_version({"entry_condition": "clsoe is above SMA(50)", "tp_condition": None,
        ...     "sl_condition": None, "market_type": "spot", "position_side": "long",
        ...     "signal_mode": "signal_only"})
        >>> out.status, out.error["phrase"], out.error["suggestion"]
        ('failed', 'clsoe', 'close')
    """
    try:
        program = compile_strategy(
            fields["entry_condition"],
            fields["tp_condition"],
            fields["sl_condition"],
            market_type=fields["market_type"],
            position_side=fields["position_side"],
            signal_mode=fields["signal_mode"],
            exit_condition=fields.get("exit_condition"),
        )
        return Outcome("active", program.to_json(), int(program.candle_count))
    except StrategyCompileError as exc:
        error = {
            "message": str(exc),
            "phrase": exc.phrase,
            "position": exc.position,
            "suggestion": exc.suggestion,
            "field": f"{exc.field}_condition" if exc.field else "",
        }
        return Outcome("failed", error=error)
    except Exception:
        # A compiler defect must not leave the version generating forever nor keep the credit.
        logger.exception("strategy compiler failed unexpectedly")
        return Outcome("failed", error={"message": "the conditions could not be compiled", "phrase": ""})


@dataclass(frozen=True)
class Claim:
    """A version taken by one worker.

    Example:
        >>> Claim("AB12CD", "rsidip", 1, "g" * 32, "w1", {}).version
        1
    """

    svc_id: str
    name: str
    version: int
    generation_id: str
    worker: str
    fields: dict[str, Any]


def claim_next(conn: Connection, worker: str, *, now: int) -> Claim | None:
    """Take the oldest unclaimed ``generating`` version for ``worker`` (None when there is none).

    Example:
        >>> with store.write() as conn:
        ...     claim_next(conn, "w1", now=0) is None
        True
    """
    row = queries.oldest_unclaimed(conn)
    if row is None or not queries.take_claim(conn, row.generation_id, worker, now=now):
        return None
    names = (
        "entry_condition",
        "tp_condition",
        "sl_condition",
        "exit_condition",
        "market_type",
        "position_side",
        "signal_mode",
    )
    return Claim(
        row.svc_id, row.name, int(row.version), row.generation_id, worker, {n: getattr(row, n) for n in names}
    )


def finish(conn: Connection, claim: Claim, outcome: Outcome, *, now: int) -> bool:
    """Store the outcome of a claim; a failure refunds the charge. False when the claim was lost
    (the strategy was deleted, or the claim went stale and was taken over).

    Example:
        >>> from svc_api.core.store import Store
        >>> with store.write() as conn:
        ...     claim = Claim("AB12CD", "rsidip", 1, "g" * 32, "w1", {})
        ...     finish(conn, claim, Outcome("active", "{}", 1), now=0)
        False
    """
    values: dict[str, Any] = {
        "status": outcome.status,
        "program_json": outcome.program_json,
        "candle_count": outcome.candle_count,
        "error": None if outcome.error is None else json.dumps(outcome.error),
        "claimed_by": None,
        "updated_at": now,
    }
    if not queries.finish_claim(conn, claim.generation_id, claim.worker, values):
        return False
    if outcome.status == "failed":
        _refund(conn, claim.generation_id, now)
    return True


def recover(
    conn: Connection,
    *,
    now: int,
    stale_after: int = STALE_AFTER,
    max_attempts: int = MAX_ATTEMPTS,
) -> dict[str, int]:
    """Release claims older than ``stale_after`` seconds; fail and refund those out of attempts.

    Returns ``{"retried": n, "failed": m}``.

    Example:
        >>> with store.write() as conn:
        ...     recover(conn, now=0)
        {'retried': 0, 'failed': 0}
    """
    counts = {"retried": 0, "failed": 0}
    for generation_id, attempts in queries.stale_claims(conn, claimed_before=now - stale_after):
        if attempts >= max_attempts:
            error = json.dumps({"message": _INTERRUPTED, "phrase": ""})
            values: dict[str, Any] = {
                "status": "failed",
                "error": error,
                "claimed_by": None,
                "updated_at": now,
            }
        else:
            values = {"claimed_by": None, "claimed_at": None}
        if not queries.release_claim(conn, generation_id, values):
            continue
        if attempts >= max_attempts:
            _refund(conn, generation_id, now)
            counts["failed"] += 1
        else:
            counts["retried"] += 1
    return counts


def _refund(conn: Connection, generation_id: str, now: int) -> None:
    row = queries.version_of_generation(conn, generation_id)
    if row is None or row.refunded or row.cost_units <= 0:
        return
    credits.refund_credits(
        conn,
        row.svc_id,
        credits.from_units(row.cost_units),
        "strategy_refund",
        f"Refund: generation of {row.name} v{row.version} failed",
        idempotency_key=f"strategy-refund-{generation_id}",
        now=now,
    )
    queries.mark_refunded(conn, generation_id)
