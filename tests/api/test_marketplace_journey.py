"""Issue 14's journey through HTTP, on SQLite and PostgreSQL: a creator generates a strategy, runs
full_range and publishes; a guest browses; a subscriber buys a plan and credits and subscribes to two
coins; the clock advances and both see the signals, then their history; the ledgers show each charge,
the creator's share and the fee; a renewal; a review; a price change cancels; unpublish and delete."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa

from svc_api.accounts import service as accounts
from svc_api.credits import service as credits
from svc_api.marketplace import service as marketplace
from svc_api.signals import service as signals
from svc_api.signals.tables import signal_deliveries
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


def _advance(api: Api, seconds: int, step: int = 6 * HOUR) -> None:
    services = api.app.state.services
    for _ in range(seconds // step):
        api.clock.advance(step)
        signals.run_once(services)
        marketplace.renew_due(
            services.store, now=api.clock.now(), fee_pct=services.settings.marketplace_fee_pct
        )


def test_creator_publishes_subscriber_receives_pays_reviews_and_the_creator_withdraws(sig_api: Api) -> None:
    api = sig_api
    a_id, a = creator(api, ["BTC", "ETH", "SOL"], name="rsiseven", strategy=RSI)
    _ok(
        api.user(
            "strategy_visibility",
            {
                "strategy_name": "rsiseven",
                "visibility": "public",
                "credits_per_signal": 1,
                "timeframe": "1h",
                "coins": ["BTC", "SOL"],
            },
            token=a,
        )
    )
    published = _ok(
        api.user(
            "marketplace_publish",
            {
                "strategy_key": "rsiseven",
                "description": "RSI(7) dips on majors",
                "monthly_price_credits": 5,
                "signal_mode": "full",
                "requested_coins": ["BTC", "ETH", "SOL", "XRP"],
            },
            token=a,
        )
    )
    listing_id = published["listing_id"]
    assert published["listed_coins"] == ["BTC", "SOL"]
    assert published["rejected_coins"] == {"ETH": "negative_pnl", "XRP": "no_data"}
    assert published["strategy_name"] == f"rsiseven_{a_id}" and published["status"] == "active"
    assert (
        published["backtest_summary"]["BTC"]["trades"] >= 10
        and published["backtest_summary"]["SOL"]["pnl_pct"] > 0
    )

    browse = api.get("/tradingdata", params={"request_type": "marketplace_browse"})
    assert browse.status_code == 200, browse.text
    [summary] = browse.json()["listings"]
    assert summary["listing_id"] == listing_id and summary["owner"] == a_id[:2] + "**" + a_id[-2:]
    assert (summary["subscriber_count"], summary["monthly_price_credits"]) == (0, 5)

    b = api.register()
    b_id, b_token = b["svc_id"], b["session_token"]
    with api.app.state.services.store.write() as conn:
        accounts.grant_plan(conn, b_id, "pro", 365, now=api.clock.now())
        credits.deposit_credits(conn, b_id, 60, now=int(time.time()))
    sub = _ok(
        api.user(
            "marketplace_subscribe",
            {"listing_id": listing_id, "selected_coins": ["BTC", "SOL"]},
            token=b_token,
        )
    )
    assert (sub["credits_charged"], sub["bindings_created"], sub["active_coins"]) == (5, 2, ["BTC", "SOL"])
    again = api.user(
        "marketplace_subscribe", {"listing_id": listing_id, "selected_coins": ["BTC"]}, token=b_token
    )
    assert again.status_code == 409
    assert (_balance(api, b_id), _balance(api, credits.PLATFORM_ACCOUNT)) == (55, 1)  # 20 % fee

    signals.run_once(api.app.state.services)  # watches start at the next close
    _advance(api, 10 * DAY)
    mine = _ok(api.user("active_signals", {}, token=a))["signals"]
    theirs = _ok(api.user("active_signals", {}, token=b_token))["signals"]
    closed_a = _ok(api.user("signal_history", {"page_size": 50}, token=a))["signals"]
    closed_b = _ok(api.user("signal_history", {"page_size": 50}, token=b_token))["signals"]
    delivered = {s["position_key"] for s in theirs} | {s["position_key"] for s in closed_b}
    assert delivered and delivered <= {s["position_key"] for s in mine} | {
        s["position_key"] for s in closed_a
    }
    assert {s["coin"] for s in theirs + closed_b} <= {"BTC", "SOL"}
    assert all(s["result"] in ("GAIN", "LOSS", "EVEN", "EXPIRED") for s in closed_b)
    paid = len(delivered)
    notes = _ok(api.user("notifications_list", {"limit": 100}, token=b_token))["notifications"]
    opened = [n for n in notes if n["event_type"] == "signal_opened"]
    assert len(opened) == paid  # each delivered signal announced once to the subscriber
    closed_notes = [n for n in notes if n["event_type"] == "signal_closed"]
    assert len(closed_notes) == len(closed_b)
    assert _balance(api, b_id) == 55 - paid  # one credit per delivered signal
    ledger = _ok(api.user("credits_history", {"limit": 100}, token=b_token))["transactions"]
    assert sorted(t["amount"] for t in ledger if t["action"] == "marketplace_signal") == sorted(
        [-5] + [-1] * paid
    )

    _advance(api, 21 * DAY, step=DAY)  # past next_charge_at: the second month
    mine_subs = _ok(api.user("marketplace_my_subscriptions", {}, token=b_token))["subscriptions"]
    with api.app.state.services.store.read() as conn:
        rows = conn.execute(sa.select(sa.func.count()).where(signal_deliveries.c.svc_id == b_id)).scalar()
    assert mine_subs[0]["status"] == "active" and mine_subs[0]["signals_received"] == rows >= paid
    spent = 55 - _balance(api, b_id) + 5
    assert mine_subs[0]["credits_spent"] == spent  # every charge is on the subscription's counter
    a_gets = _balance(api, a_id) - (50 - 1 - 4)  # A paid 1 for the generation and 4 for the full range
    assert a_gets + _balance(api, credits.PLATFORM_ACCOUNT) == spent  # debits equal credits

    review = _ok(
        api.user(
            "marketplace_review",
            {"listing_id": listing_id, "rating": 5, "comment": "Clean entries, honest stops"},
            token=b_token,
        )
    )
    assert review == {"listing_id": listing_id, "rating": 5, "avg_rating": 5.0, "review_count": 1}
    twice = api.user("marketplace_review", {"listing_id": listing_id, "rating": 4}, token=b_token)
    assert twice.status_code == 409
    reviews = api.get(
        "/tradingdata", params={"request_type": "marketplace_reviews", "listing_id": listing_id}
    )
    assert [r["rating"] for r in reviews.json()["reviews"]] == [5] and b_id not in reviews.text

    changed = _ok(
        api.user(
            "marketplace_update_listing", {"listing_id": listing_id, "monthly_price_credits": 7}, token=a
        )
    )
    assert (changed["subscriptions_cancelled"], changed["updated_fields"]) == (1, ["monthly_price_credits"])
    detail = _ok(api.user("marketplace_listing_detail", {"listing_id": listing_id}, token=b_token))
    assert (detail["subscription_status"], detail["selected_coins"], detail["is_owner"]) == (
        "cancelled",
        [],
        False,
    )

    blocked = api.user("strategy_delete", {"strategy_name": "rsiseven", "confirm_name": "rsiseven"}, token=a)
    assert blocked.status_code == 409
    gone = _ok(api.user("marketplace_unpublish", {"listing_id": listing_id}, token=a))
    assert gone == {"status": "removed", "subscriptions_cancelled": 0, "bindings_removed": 0}
    hidden = api.get("/tradingdata", params={"request_type": "marketplace_listing", "listing_id": listing_id})
    assert hidden.status_code == 404
    _ok(api.user("strategy_delete", {"strategy_name": "rsiseven", "confirm_name": "rsiseven"}, token=a))
