"""Marketplace rules of the spec that touch what a user pays or sees, through HTTP on SQLite and
PostgreSQL: ``marketplace_publish`` lists a coin only with at least 10 trades (fewer:
``insufficient_trades``), and a ``subscription_id`` is the same after unsubscribing and subscribing
again (deterministic per user and listing)."""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING, Any

from svc_api.accounts import service as accounts
from svc_api.backtests import jobs
from svc_api.backtests.artifacts import dumps
from svc_api.backtests.tables import backtest_jobs
from svc_api.credits import service as credits
from tests.api.test_signals import creator

if TYPE_CHECKING:
    from tests.api.conftest import Api

RSI = {"entry_condition": "RSI(7) crosses above 30"}


def _ok(reply: Any) -> Any:
    assert reply.status_code == 200, reply.text
    body = reply.json()
    return body.get("data", body)


def _set_trades(api: Api, svc_id: str, counts: dict[str, int]) -> None:
    """Rewrite the creator's stored full_range result so that each named coin made a profit over
    exactly ``counts[coin]`` trades: the threshold is then tested at 9 and 10, not wherever the
    synthetic market happens to land."""
    services = api.app.state.services
    with services.store.read() as conn:
        row = conn.execute(backtest_jobs.select().where(backtest_jobs.c.svc_id == svc_id)).one()
    objects = jobs.runner_of(services).objects
    payload = json.loads(objects.get(row.result_key))
    for symbol, trades in counts.items():
        payload["results"][symbol]["summary"] |= {"total_trades": trades, "total_return_pct": 4.5}
    objects.put(row.result_key, dumps(payload))


def _publish(api: Api, token: str, coins: list[str], mode: str = "full") -> dict[str, Any]:
    body = {
        "strategy_key": "rsiseven",
        "description": "RSI(7) dips on majors",
        "monthly_price_credits": 5,
        "signal_mode": mode,
        "requested_coins": coins,
    }
    return dict(_ok(api.user("marketplace_publish", body, token=token)))


def test_publish_lists_a_coin_from_ten_trades_and_rejects_nine(sig_api: Api) -> None:
    a_id, a = creator(sig_api, ["BTC", "ETH", "SOL"], name="rsiseven", strategy=RSI)
    _set_trades(sig_api, a_id, {"BTCUSDT": 10, "ETHUSDT": 9, "SOLUSDT": 0})
    published = _publish(sig_api, a, ["BTC", "ETH", "SOL"])
    assert published["listed_coins"] == ["BTC"]
    assert published["rejected_coins"] == {"ETH": "insufficient_trades", "SOL": "insufficient_trades"}
    assert published["backtest_summary"]["BTC"]["trades"] == 10
    assert set(published["backtest_summary"]) == {"BTC"}


def test_a_subscription_id_survives_unsubscribe_and_subscribe_again(sig_api: Api) -> None:
    api = sig_api
    _, a = creator(api, ["BTC"], name="rsiseven", strategy=RSI)
    listing_id = _publish(api, a, ["BTC", "SOL"], mode="signal_only")["listing_id"]
    b = api.register()
    with api.app.state.services.store.write() as conn:
        accounts.grant_plan(conn, b["svc_id"], "pro", 365, now=api.clock.now())
        credits.deposit_credits(conn, b["svc_id"], 60, now=int(time.time()))
    token = b["session_token"]
    body = {"listing_id": listing_id, "selected_coins": ["BTC"]}
    first = _ok(api.user("marketplace_subscribe", body, token=token))["subscription_id"]
    gone = _ok(api.user("marketplace_unsubscribe", {"subscription_id": first}, token=token))
    assert (gone["status"], gone["subscription_id"]) == ("cancelled", first)
    again = _ok(api.user("marketplace_subscribe", {**body, "selected_coins": ["SOL"]}, token=token))
    assert again["subscription_id"] == first and again["active_coins"] == ["SOL"]
    mine = _ok(api.user("marketplace_my_subscriptions", {}, token=token))["subscriptions"]
    assert [(s["subscription_id"], s["status"]) for s in mine] == [(first, "active")]
    # another subscriber of the same listing gets an id of their own
    c = api.register()
    with api.app.state.services.store.write() as conn:
        accounts.grant_plan(conn, c["svc_id"], "pro", 365, now=api.clock.now())
        credits.deposit_credits(conn, c["svc_id"], 60, now=int(time.time()))
    other = _ok(api.user("marketplace_subscribe", body, token=c["session_token"]))["subscription_id"]
    assert other != first
