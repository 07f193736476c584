"""Issue 28, on SQLite and PostgreSQL through HTTP: a priced signal (``credits_per_signal`` 5) that
fires is charged to the subscriber exactly, the creator receives it less the platform fee (20 %: 4)
and the platform the fee (1), each a ``marketplace_signal`` ledger row; ``total_credits_earned`` of
the creator's listing equals the creator's ledger rows of it."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from svc_api.accounts import service as accounts
from svc_api.credits import service as credits
from svc_api.signals import service as signals
from tests.api.test_signals import HOUR, creator

if TYPE_CHECKING:
    from tests.api.conftest import Api

RSI = {"entry_condition": "RSI(7) crosses above 30"}
DAY = 24 * HOUR


def _ok(reply: Any) -> Any:
    assert reply.status_code == 200, reply.text
    body = reply.json()
    return body.get("data", body)


def _balance(api: Api, svc_id: str) -> float:
    with api.app.state.services.store.read() as conn:
        return credits.balance(conn, svc_id)


def _signal_rows(api: Api, token: str) -> list[float]:
    ledger = _ok(api.user("credits_history", {"limit": 100}, token=token))["transactions"]
    return [t["amount"] for t in ledger if t["action"] == "marketplace_signal"]


def test_a_priced_signal_charges_its_price_and_pays_the_creator_less_the_fee(sig_api: Api) -> None:
    api = sig_api
    a_id, a = creator(api, ["BTC"], name="priced", strategy=RSI)
    public = {
        "strategy_name": "priced",
        "visibility": "public",
        "credits_per_signal": 5,
        "timeframe": "1h",
        "coins": ["BTC"],
    }
    _ok(api.user("strategy_visibility", public, token=a))
    listing = _ok(
        api.user(
            "marketplace_publish",
            {
                "strategy_key": "priced",
                "monthly_price_credits": 5,
                "signal_mode": "signal_only",
                "requested_coins": ["BTC"],
            },
            token=a,
        )
    )
    a_before = _balance(api, a_id)
    b = api.register()
    b_id, b_token = b["svc_id"], b["session_token"]
    with api.app.state.services.store.write() as conn:
        accounts.grant_plan(conn, b_id, "pro", 365, now=api.clock.now())
        credits.deposit_credits(conn, b_id, 100, now=int(time.time()))
    sub = _ok(
        api.user(
            "marketplace_subscribe",
            {"listing_id": listing["listing_id"], "selected_coins": ["BTC"]},
            token=b_token,
        )
    )
    assert sub["credits_charged"] == 5

    services = api.app.state.services
    signals.run_once(services)  # the watch starts at the next close
    for _ in range(5 * 24):
        api.clock.advance(HOUR)
        signals.run_once(services)

    delivered = _ok(api.user("active_signals", {}, token=b_token))["signals"]
    delivered += _ok(api.user("signal_history", {"page_size": 50}, token=b_token))["signals"]
    n = len({s["position_key"] for s in delivered})
    assert n == SIGNALS_IN_FIVE_DAYS
    # the subscriber: the month (5) and 5 per signal, each one ledger row of exactly the price
    assert _balance(api, b_id) == 100 - 5 - 5 * n
    assert sorted(_signal_rows(api, b_token)) == [-5] * (n + 1)
    # the creator: 4 of each 5 (20 % fee), one row for the month and one per signal
    assert _balance(api, a_id) == a_before + 4 + 4 * n
    assert sorted(_signal_rows(api, a)) == [4] * (n + 1)
    assert _balance(api, credits.PLATFORM_ACCOUNT) == 1 + n
    [mine] = _ok(api.user("marketplace_my_listings", {}, token=a))["listings"]
    assert mine["total_credits_earned"] == 4 + 4 * n == sum(_signal_rows(api, a))
    detail = _ok(api.user("marketplace_listing_detail", {"listing_id": listing["listing_id"]}, token=a))
    assert detail["total_credits_earned"] == 4 + 4 * n
    [theirs] = _ok(api.user("marketplace_my_subscriptions", {}, token=b_token))["subscriptions"]
    assert (theirs["signals_received"], theirs["credits_spent"]) == (n, 5 + 5 * n)


SIGNALS_IN_FIVE_DAYS = 3
"""Signals RSI(7) crossing above 30 places on BTC in the five days after the clock starts (the small
synthetic market is seeded: the same every run)."""
