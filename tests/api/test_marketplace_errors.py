"""Every error the spec lists for the marketplace and signal operations, on SQLite and PostgreSQL:
status, code and a message that says what is wrong; nothing charged or written by a refused call."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import pytest

from svc_api.accounts import service as accounts
from svc_api.core.store import StoreUnavailable
from svc_api.credits import service as credits
from svc_api.strategies.limits import MAX_COINS
from tests.api.test_signals import STRATEGY, creator

if TYPE_CHECKING:
    from tests.api.conftest import Api


def _user(api: Api, *, plan: str | None = "pro", balance: int = 20) -> tuple[str, str]:
    data = api.register()
    with api.app.state.services.store.write() as conn:
        if plan is not None:
            accounts.grant_plan(conn, data["svc_id"], plan, 365, now=api.clock.now())
        if balance:
            credits.deposit_credits(conn, data["svc_id"], balance, now=int(time.time()))
    return data["svc_id"], data["session_token"]


def _strategy(api: Api, token: str, name: str = "smacross") -> None:
    assert api.user("strategy_generate", STRATEGY | {"strategy_name": name}, token=token).status_code == 200
    deadline = time.monotonic() + 10
    while (
        api.user("strategy_detail", {"strategy_name": name}, token=token).json()["data"]["status"]
        == "generating"
    ):
        assert time.monotonic() < deadline
        time.sleep(0.02)


def _publish(api: Api, token: str, **fields: Any) -> Any:
    body = {
        "strategy_key": "smacross",
        "monthly_price_credits": 5,
        "signal_mode": "signal_only",
        "requested_coins": ["BTC", "ETH"],
    } | fields
    return api.user("marketplace_publish", {k: v for k, v in body.items() if v is not None}, token=token)


def _status(reply: Any, status: int, words: str) -> None:
    assert reply.status_code == status, reply.text
    assert words in reply.json()["message"], reply.json()


def test_publish_errors(sig_api: Api) -> None:
    api = sig_api
    _, token = _user(api)
    _status(_publish(api, token, strategy_key="Bad Key"), 400, "strategy_key must be 4-20 lowercase")
    _status(_publish(api, token), 404, "strategy 'smacross' not found")
    _strategy(api, token)
    _status(_publish(api, token, signal_mode="copy"), 400, "signal_mode must be 'full' or 'signal_only'")
    _status(
        _publish(api, token, monthly_price_credits=0),
        400,
        "monthly_price_credits must be a number from 1 to 1000",
    )
    _status(_publish(api, token, monthly_price_credits=1001), 400, "from 1 to 1000")
    _status(_publish(api, token, requested_coins=[]), 400, "requested_coins must name at least one coin")
    _status(_publish(api, token, description="<script>x</script>"), 400, "must not contain HTML")
    _status(_publish(api, token, signal_mode="full"), 400, "no completed full_range backtest on 1h")
    _status(_publish(api, token, requested_coins=["XRP"]), 400, "no requested coin can be listed")
    assert _publish(api, token).status_code == 200
    _status(_publish(api, token), 400, "is already listed")


def test_full_mode_without_a_profitable_coin_is_400_with_the_reasons(sig_api: Api) -> None:
    _, token = creator(sig_api, ["ETH"])  # close crosses above SMA(20) loses on ETH
    reply = _publish(sig_api, token, signal_mode="full", requested_coins=["ETH", "XRP"])
    _status(reply, 400, "no requested coin can be listed")
    assert reply.json()["rejected_coins"] == {"ETH": "negative_pnl", "XRP": "no_data"}


def test_update_and_unpublish_errors(sig_api: Api) -> None:
    api = sig_api
    _, token = _user(api)
    _, other = _user(api)
    _strategy(api, token)
    listing = _publish(api, token).json()["data"]["listing_id"]
    update = lambda body, who=token: api.user("marketplace_update_listing", body, token=who)  # noqa: E731
    _status(update({"listing_id": "lst_nope"}), 404, "not found")
    _status(update({"listing_id": listing, "description": "x"}, other), 403, "not yours")
    _status(update({"listing_id": listing}), 400, "nothing to update")
    _status(update({"listing_id": listing, "monthly_price_credits": 5}), 400, "nothing to update")
    _status(update({"listing_id": listing, "monthly_price_credits": "5"}), 400, "from 1 to 1000")
    _status(update({"listing_id": listing, "description": "<b>bold</b>"}), 400, "must not contain HTML")
    _status(api.user("marketplace_unpublish", {"listing_id": listing}, token=other), 403, "not yours")
    assert api.user("marketplace_unpublish", {"listing_id": listing}, token=token).status_code == 200
    _status(update({"listing_id": listing, "description": "again"}), 400, "not active")
    _status(api.user("marketplace_unpublish", {"listing_id": listing}, token=token), 400, "not active")


def test_subscribe_errors_and_nothing_is_charged(sig_api: Api, monkeypatch: pytest.MonkeyPatch) -> None:
    api = sig_api
    owner_id, owner = _user(api)
    _strategy(api, owner)
    listing = _publish(api, owner).json()["data"]["listing_id"]
    sub = lambda body, who: api.user("marketplace_subscribe", body, token=who)  # noqa: E731
    body = {"listing_id": listing, "selected_coins": ["BTC"]}
    _, expired = _user(api, plan=None)
    _status(sub(body, expired), 403, "a valid license is required")
    _, starter = _user(api, plan="starter")
    _status(
        sub(body | {"selected_coins": ["BTC", "ETH", "SOL"]}, starter), 400, "selected_coins must be distinct"
    )
    _status(sub(body, owner), 400, "your own listing")
    _status(sub({"listing_id": "lst_nope", "selected_coins": ["BTC"]}, starter), 404, "not found")
    _, poor = _user(api, balance=0)
    _status(sub(body, poor), 402, "insufficient credits")
    _, b = _user(api)
    assert sub(body, b).status_code == 200
    _status(sub(body, b), 409, "already subscribe")

    full_id, full = _user(api, plan="starter")  # starter: 1 active strategy or subscription
    _strategy(api, full, name="mine")
    _status(sub(body, full), 403, "allows 1 active strategies and subscriptions")
    with api.app.state.services.store.write() as conn:
        accounts.grant_plan(conn, full_id, "pro", 365, now=api.clock.now())
    monkeypatch.setitem(MAX_COINS, "pro", 1)
    _status(sub(body | {"selected_coins": ["BTC", "ETH"]}, full), 400, "allows 1 coins per strategy")

    # the store fails at commit: 503, and nothing is charged or bound
    before = api.user("account_info", token=full).json()["data"]["svc_credits"]
    from svc_api.marketplace import queries

    def down(*args: Any, **kwargs: Any) -> None:
        raise StoreUnavailable("the database went away", 5)

    monkeypatch.setattr(queries, "bind", down)
    down_reply = sub(body, full)
    assert down_reply.status_code == 503 and down_reply.headers["Retry-After"] == "5", down_reply.text
    assert api.user("account_info", token=full).json()["data"]["svc_credits"] == before
    subs = api.user("marketplace_my_subscriptions", {}, token=full).json()["data"]["subscriptions"]
    assert subs == []
    _status(api.user("marketplace_unsubscribe", {"subscription_id": "sub_nope"}, token=b), 404, "not found")
    assert owner_id


def test_review_errors(sig_api: Api) -> None:
    api = sig_api
    _, owner = _user(api)
    _strategy(api, owner)
    listing = _publish(api, owner).json()["data"]["listing_id"]
    _, b = _user(api)
    _, stranger = _user(api)
    review = lambda body, who=b: api.user("marketplace_review", {"listing_id": listing} | body, token=who)  # noqa: E731
    _status(review({"rating": 4}, stranger), 403, "only subscribers")
    assert (
        api.user(
            "marketplace_subscribe", {"listing_id": listing, "selected_coins": ["ETH"]}, token=b
        ).status_code
        == 200
    )
    _status(review({"rating": 6}), 400, "rating must be a whole number from 1 to 5")
    _status(review({"rating": 4, "comment": "too short"}), 400, "10-500 characters")
    _status(review({"rating": 4, "comment": "see https://example.com now"}), 400, "must not contain links")
    _status(review({"rating": 4, "comment": "<i>formatted text</i> here"}), 400, "must not contain markup")
    _status(review({"rating": 4}, owner), 400, "your own listing")
    _status(
        api.user("marketplace_review", {"listing_id": "lst_nope", "rating": 4}, token=b), 404, "not found"
    )
    assert review({"rating": 4}).status_code == 200
    _status(review({"rating": 5}), 409, "already reviewed")


def test_browse_refuses_a_coin_filter_that_is_no_coin(sig_api: Api) -> None:
    reply = sig_api.get("/tradingdata", params={"request_type": "marketplace_browse", "coin": "B%"})
    assert reply.status_code == 400 and "coin must be letters and digits" in reply.text
    reply = sig_api.get("/tradingdata", params={"request_type": "marketplace_browse", "sort": "cheapest"})
    assert reply.status_code == 400 and "sort must be one of newest, price_asc" in reply.text


def test_signal_reads_refuse_bad_fields(sig_api: Api) -> None:
    _, token = _user(sig_api)
    bad = [
        ("active_signals", {"strategy_name": 7}, "strategy_name must be a strategy name"),
        ("active_signals", {"limit": 51}, "limit"),
        ("active_signals", {"cursor": "garbage"}, "cursor"),
        (
            "signal_history",
            {"filters": {"colour": "red"}},
            "filters must be an object of coin, strategy_name, owner",
        ),
        ("signal_history", {"filters": {"owner": "them"}}, "filters.owner must be one of me, subscribed"),
        ("signal_history", {"page_size": 0}, "page_size"),
    ]
    for request_type, body, words in bad:
        reply = sig_api.user(request_type, body, token=token)
        assert reply.status_code == 400, (request_type, reply.text)
        assert words in reply.text, (request_type, reply.text)
    assert sig_api.user("active_signals", {}).status_code == 401


def test_editing_or_rolling_back_a_listed_strategy_cancels_its_subscriptions(sig_api: Api) -> None:
    api = sig_api
    _, owner = _user(api)
    _strategy(api, owner)
    listing = _publish(api, owner).json()["data"]["listing_id"]
    _, b = _user(api)
    body = {"listing_id": listing, "selected_coins": ["BTC"]}
    assert api.user("marketplace_subscribe", body, token=b).status_code == 200
    edited = api.user("strategy_edit", {"strategy_name": "smacross", "tp_condition": "4%"}, token=owner)
    assert edited.json()["data"]["copiers_cancelled"] == 1
    again = api.user("marketplace_subscribe", body, token=b)  # a new month, a new subscription
    assert again.status_code == 200
    rolled = api.user("strategy_rollback", {"strategy_name": "smacross", "target_version": 1}, token=owner)
    assert rolled.json()["data"]["marketplace_subscriptions_cancelled"] == 1
    subs = api.user("marketplace_my_subscriptions", {}, token=b).json()["data"]["subscriptions"]
    assert [s["status"] for s in subs] == ["cancelled"] and subs[0]["credits_spent"] == 10
