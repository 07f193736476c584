"""Placing an OCO exactly once, and settling what is left unknown.

An order is claimed under its ``(account, idempotency_key)`` before anything is sent (the claim is
committed first), so of any number of concurrent requests with one key only the first goes on; the
others replay the stored reply (``idempotent_replay: true``), say ``processing``, or, for another
order under the same key, get a 409. The OCO's client order ID derives from the key, so the exchange
itself refuses a second one. When the exchange gives no usable answer the outcome is unknown: the
order stays ``processing`` and the reconciler looks it up by its client ID: found, it is
``submitted``; still absent two minutes after it was claimed, ``failed`` (the exchange never
received it); only the exchange's answer that it has no such order counts, never no answer.
Nothing ever places an order twice. A balance that cannot be read (503), an order the exchange
turned down (:class:`Refused`, 400 with its reason), a request it refused otherwise (502) or a
linked key it no longer accepts (400) places nothing and frees the key. In the reconciler a look-up
the exchange refuses (a revoked key) leaves that order as it is, and the pass goes on with the
others.

Example:
    >>> len(client_order_id("AB12CD", "order-2026-11-25-0001"))
    35
"""

from __future__ import annotations

import hashlib
import json
import logging
from decimal import Decimal
from typing import Any

from svc_api.core.errors import ApiError, Invalid
from svc_api.exchange import orders, queries
from svc_api.exchange.interface import (
    Credentials,
    Exchange,
    ExchangeError,
    ExchangeRejected,
    ExchangeUnavailable,
    InvalidCredentials,
    OcoRequest,
    OcoResult,
    Refused,
)
from svc_api.exchange.linking import stored_credentials
from svc_api.exchange.vault import Keyring

logger = logging.getLogger(__name__)

UNSEEN_AFTER = 120
"""Seconds after its claim that an order the exchange does not know is declared ``failed``."""


def client_order_id(svc_id: str, key: str) -> str:
    """The exchange's client order ID of an idempotency key (``svc`` + 32 hex: Binance allows 36)."""
    return "svc" + hashlib.sha256(f"{svc_id}|{key}".encode()).hexdigest()[:32]


def unavailable(message: str, retry_after: float | None = None) -> ApiError:
    """The 503 of an exchange that gave no usable answer (``Retry-After``: its own wait, else 5 s)."""
    wait = max(5.0, retry_after or 0.0)
    detail = {"message": message}
    return ApiError(503, "service_unavailable", reason="exchange_unavailable", retry_after=wait, extra=detail)


def refused_key() -> ApiError:
    """The 400 of a linked key the exchange no longer accepts."""
    message = "the exchange refused the linked API key: link the exchange account again"
    return ApiError(400, "exchange_refused_key", extra={"message": message})


def rejected(exc: ExchangeRejected) -> ApiError | Invalid:
    """A refused order is the trader's to fix (400); any other refusal is ours or the exchange's (502)."""
    if isinstance(exc, Refused):
        return Invalid(f"the exchange refused the order: {exc}")
    message = f"the exchange rejected the request, nothing was placed: {exc}"
    return ApiError(502, "exchange_rejected", extra={"message": message})


def available(exchange: Exchange, creds: Credentials, asset: str) -> Decimal:
    """The free spot balance of ``asset`` (raises :class:`ExchangeUnavailable`)."""
    return exchange.balances(creds).get("spot", {}).get(asset, Decimal(0))


def reply_of(c: orders.Checked, result: OcoResult, key: str) -> dict[str, Any]:
    """The Exchange order result resource."""
    pp, qp = c.rules.price_precision, c.rules.quantity_precision
    return {
        "order_list_id": result.order_list_id,
        "client_order_id": result.client_order_id,
        "symbol": c.order.symbol,
        "side": c.order.order_side,
        "quantity": orders.fixed(c.quantity, qp),
        "take_profit_price": orders.fixed(c.take_profit, pp),
        "stop_loss_price": orders.fixed(c.stop, pp),
        "orders": [{"symbol": leg.symbol, "orderId": leg.order_id, "type": leg.type} for leg in result.legs],
        "signal_position_key": c.order.signal_position_key,
        "order_source": c.order.order_source,
        "idempotency_key": key,
        "status": "submitted",
    }


def fingerprint_of(order: orders.Order) -> str:
    """What identifies an order under its key: the digest of its fields."""
    return hashlib.sha256(json.dumps(order.fingerprint_fields(), sort_keys=True).encode()).hexdigest()


def replay(row: Any, order: orders.Order) -> dict[str, Any]:
    """The answer to a retry of a stored order (409 for another order under the same key)."""
    return _replay(row, fingerprint_of(order))


def _replay(row: Any, fingerprint: str) -> dict[str, Any]:
    if row.fingerprint != fingerprint:
        raise ApiError(409, "conflict", extra={"message": "this idempotency_key was used for another order"})
    if row.state == "submitted":
        return {**json.loads(row.result), "idempotent_replay": True}
    return {"status": row.state, "idempotency_key": row.idempotency_key, "message": row.message}


def _status(result: OcoResult) -> str:
    if result.status != "ALL_DONE":
        return "NEW"
    filled = [leg for leg in result.legs if leg.status == "FILLED"]
    return "FILLED" if filled else "CANCELED"


def place(
    store: Any,
    exchange: Exchange,
    creds: Credentials,
    c: orders.Checked,
    svc_id: str,
    *,
    strategy: str,
    execution: str,
    now: int,
) -> dict[str, Any]:
    """Claim, verify the balance, place, record: the reply of ``exchange_order``."""
    key = str(c.order.idempotency_key)
    fingerprint = hashlib.sha256(
        json.dumps(c.order.fingerprint_fields(), sort_keys=True).encode()
    ).hexdigest()
    cid = client_order_id(svc_id, key)
    claim = {
        "svc_id": svc_id,
        "idempotency_key": key,
        "fingerprint": fingerprint,
        "client_order_id": cid,
        "order_history_id": cid[3:],
        "exchange": execution,
        "symbol": c.order.symbol,
        "coin": c.order.symbol[:-4],
        "strategy_name": strategy,
        "order_source": c.order.order_source,
        "signal_position_key": c.order.signal_position_key,
        "state": "processing",
        "exchange_status": "PROCESSING",
        "message": "the order is being placed; poll order_history",
        "created_at": now,
        "updated_at": now,
        # the reply as far as it is known before the exchange answers, for the reconciler to complete
        "result": json.dumps(reply_of(c, OcoResult("", cid, "", ()), key)),
    }
    with store.write() as conn:
        if not queries.claim_order(conn, claim):
            return _replay(queries.order(conn, svc_id, key), fingerprint)
    try:
        held = available(exchange, creds, c.balance_asset)
    except ExchangeUnavailable as exc:
        _drop(store, svc_id, key)
        message = f"the balance could not be verified, nothing was placed: {exc}"
        raise unavailable(message, exc.retry_after) from None
    except InvalidCredentials:
        _drop(store, svc_id, key)
        raise refused_key() from None
    if held < c.required:
        _drop(store, svc_id, key)
        raise Invalid(
            f"insufficient {c.balance_asset}: {held.normalize()} available, {c.required.normalize()} needed"
        )
    request = OcoRequest(
        c.order.symbol, c.order.order_side, c.quantity, c.take_profit, c.stop, c.stop_limit, cid
    )
    try:
        result = exchange.place_oco(creds, request)
    except ExchangeRejected as exc:
        if not exc.duplicate:
            _drop(store, svc_id, key)
            raise rejected(exc) from None
        result = _lookup(exchange, creds, cid)
    except InvalidCredentials:
        _drop(store, svc_id, key)
        raise refused_key() from None
    except ExchangeUnavailable as exc:
        logger.warning(
            "order %s: no usable answer from the exchange (%s); the reconciler settles it", cid, exc
        )
        result = None
    if result is None:
        return {"status": "processing", "idempotency_key": key, "message": claim["message"]}
    reply = reply_of(c, result, key)
    _submitted(store, svc_id, key, result, reply, now)
    return reply


def _lookup(exchange: Exchange, creds: Credentials, cid: str) -> OcoResult | None:
    try:
        return exchange.find_order_list(creds, cid)
    except ExchangeUnavailable:
        return None
    except ExchangeError as exc:  # settled later: by the reconciler, or the key's owner linking again
        logger.warning("order %s: the exchange refused the look-up (%s: %s)", cid, type(exc).__name__, exc)
        return None


def _drop(store: Any, svc_id: str, key: str) -> None:
    with store.write() as conn:
        queries.drop_order(conn, svc_id, key)


def _submitted(store: Any, svc_id: str, key: str, result: OcoResult, reply: dict[str, Any], now: int) -> None:
    with store.write() as conn:
        queries.settle_order(
            conn,
            svc_id,
            key,
            from_state="processing",
            state="submitted",
            exchange_status=_status(result),
            order_list_id=result.order_list_id,
            result=json.dumps(reply),
            message="",
            updated_at=now,
        )


def reconcile(
    store: Any, exchange: Exchange, keyring: Keyring, *, now: int, min_age: int = 10, limit: int = 200
) -> int:
    """Settle orders of unknown outcome and follow placed ones to their end; how many changed."""
    with store.read() as conn:
        rows = queries.orders_to_reconcile(conn, before=now - min_age, limit=limit)
    by_account: dict[str, list[Any]] = {}
    for row in rows:
        by_account.setdefault(row.svc_id, []).append(row)
    changed = 0
    for svc_id, mine in by_account.items():
        with store.read() as conn:
            linked = stored_credentials(conn, keyring, svc_id)
        creds = None if linked is None else linked[1]
        working = _working(exchange, creds) if creds is not None and len(mine) > 1 else {}
        for row in mine:
            changed += _reconcile_one(store, exchange, creds, row, now, working.get(row.client_order_id))
    return changed


def _working(exchange: Exchange, creds: Credentials) -> dict[str, OcoResult]:
    """The account's working OCOs read at once (request weight: one call for all of them); empty
    when the exchange has no such view or gives no answer (each order is then looked up)."""
    try:
        return exchange.open_order_lists(creds) or {}
    except ExchangeError:
        return {}


def _reconcile_one(
    store: Any, exchange: Exchange, creds: Credentials | None, row: Any, now: int, seen: OcoResult | None
) -> int:
    try:
        if seen is not None:
            result: OcoResult | None = seen
        else:
            result = None if creds is None else exchange.find_order_list(creds, row.client_order_id)
    except ExchangeUnavailable:
        return 0  # no answer is not "the exchange has no such order": never fail an order on it
    except ExchangeError as exc:  # this account's key is refused: its order waits, the others go on
        logger.warning(
            "order %s: the exchange refused the look-up (%s: %s); left as it is",
            row.client_order_id,
            type(exc).__name__,
            exc,
        )
        with store.write() as conn:  # to the back of the queue
            queries.update_order(
                conn, row.svc_id, row.idempotency_key, exchange_status=row.exchange_status, updated_at=now
            )
        return 0
    with store.write() as conn:
        if row.state == "processing" and result is not None:
            legs = [{"symbol": g.symbol, "orderId": g.order_id, "type": g.type} for g in result.legs]
            reply = {**json.loads(row.result), "order_list_id": result.order_list_id, "orders": legs}
            done = queries.settle_order(
                conn,
                row.svc_id,
                row.idempotency_key,
                from_state="processing",
                state="submitted",
                exchange_status=_status(result),
                order_list_id=result.order_list_id,
                result=json.dumps(reply),
                message="",
                updated_at=now,
            )
            return int(done)
        if row.state == "processing" and now - row.created_at >= UNSEEN_AFTER:
            message = "the exchange never received this order; nothing was placed"
            failed = queries.settle_order(
                conn,
                row.svc_id,
                row.idempotency_key,
                from_state="processing",
                state="failed",
                exchange_status="FAILED",
                message=message,
                updated_at=now,
            )
            return int(failed)
        status = row.exchange_status if result is None else _status(result)
        queries.update_order(conn, row.svc_id, row.idempotency_key, exchange_status=status, updated_at=now)
        return int(status != row.exchange_status)
