"""The USDT channel of plan payments: transfers into the service's own exchange account.

A transfer pays for the plan whose list price it equals (``PRICES``: 10 USDT a starter month, 60 a
starter year, ...); its buyer is a ``svc_id`` in its note, else the account whose linked exchange
account sent it. Anything else waits for an operator (see :mod:`svc_api.billing.payments`). Each
transfer's ID makes it count once, however often it is read. An exchange that does not answer, or
refuses the payment account's key, skips this pass (logged): the reconciler's pass goes on with the
traders' orders.

Example:
    >>> product_for(Decimal("50")), product_for(Decimal("49.99"))
    ('svc_pro_monthly', '')
"""

from __future__ import annotations

import logging
from decimal import Decimal
from typing import Any

from svc_api.billing import service as billing
from svc_api.exchange import queries
from svc_api.exchange.interface import Credentials, Exchange, ExchangeError, ExchangeUnavailable

logger = logging.getLogger(__name__)

LOOKBACK = 7 * 86400


def product_for(amount: Decimal) -> str:
    """The product whose list price ``amount`` is ('' when none)."""
    for plan, periods in billing.PRICES.items():
        for period, price in periods.items():
            if amount == price:
                return f"svc_{plan}_{period}"
    return ""


def collect(services: Any, exchange: Exchange, *, now: int) -> dict[str, int]:
    """Read the service account's USDT deposits since the last pass and receive each as a payment."""
    settings = services.settings
    if not (settings.payment_exchange_key and settings.payment_exchange_secret):
        return {"applied": 0, "queued": 0}
    creds = Credentials(settings.payment_exchange_key, settings.payment_exchange_secret)
    mark = services.cached("exchange:usdt-mark", float("inf"), lambda: {"since": now - LOOKBACK})
    try:
        transfers = exchange.incoming_transfers(creds, mark["since"])
    except ExchangeUnavailable:
        return {"applied": 0, "queued": 0}
    except ExchangeError as exc:  # the payment key was refused: an operator must replace it
        logger.error(
            "USDT payments: the exchange refused to list the payment account's deposits "
            "(%s: %s); check PAYMENT_EXCHANGE_KEY",
            type(exc).__name__,
            exc,
        )
        return {"applied": 0, "queued": 0}
    counts = {"applied": 0, "queued": 0}
    for t in transfers:
        if t.asset != "USDT":
            continue
        with services.store.read() as conn:
            linked = None if t.payer is None else queries.link_of_account(conn, exchange.name, t.payer)
        svc_id = billing.buyer_of(services.store, t.note, None if linked is None else linked.svc_id)
        result = billing.receive_payment(
            services.store,
            source="usdt",
            external_id=t.tx_id,
            svc_id=svc_id,
            product=product_for(t.amount),
            amount=t.amount,
            currency="USDT",
            now=now,
            note=t.note,
        )
        counts[result["outcome"]] += 1
        mark["since"] = max(mark["since"], t.time)
    return counts
