"""Issue 28: a listing sells the signals of a public strategy; once the strategy is no longer public
(``strategy_rollback`` makes it private, or ``strategy_visibility`` private) its listing is
unpublished: ``removed`` in ``marketplace_my_listings``, out of browse, its subscriptions cancelled
and no new subscriber taken, on SQLite and PostgreSQL through HTTP."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import pytest

from svc_api.accounts import service as accounts
from svc_api.credits import service as credits
from tests.api.test_signals import creator

if TYPE_CHECKING:
    from tests.api.conftest import Api

RSI = {"entry_condition": "RSI(7) crosses above 30"}


def _ok(reply: Any) -> Any:
    assert reply.status_code == 200, reply.text
    body = reply.json()
    return body.get("data", body)


def _subscriber(api: Api) -> tuple[str, str]:
    data = api.register()
    with api.app.state.services.store.write() as conn:
        accounts.grant_plan(conn, data["svc_id"], "pro", 365, now=api.clock.now())
        credits.deposit_credits(conn, data["svc_id"], 40, now=int(time.time()))
    return data["svc_id"], data["session_token"]


@pytest.mark.parametrize(
    "going_private",
    [
        ("strategy_rollback", {"strategy_name": "goesprivate", "target_version": 1}),
        ("strategy_visibility", {"strategy_name": "goesprivate", "visibility": "private"}),
    ],
)
def test_a_strategy_no_longer_public_unpublishes_its_listing(
    sig_api: Api, going_private: tuple[str, dict[str, Any]]
) -> None:
    api = sig_api
    _a_id, a = creator(api, ["BTC"], name="goesprivate", strategy=RSI)
    public = {
        "strategy_name": "goesprivate",
        "visibility": "public",
        "credits_per_signal": 2,
        "timeframe": "1h",
        "coins": ["BTC"],
    }
    _ok(api.user("strategy_visibility", public, token=a))
    listing = _ok(
        api.user(
            "marketplace_publish",
            {
                "strategy_key": "goesprivate",
                "monthly_price_credits": 5,
                "signal_mode": "signal_only",
                "requested_coins": ["BTC"],
            },
            token=a,
        )
    )
    listing_id = listing["listing_id"]
    b_id, b = _subscriber(api)
    _ok(api.user("marketplace_subscribe", {"listing_id": listing_id, "selected_coins": ["BTC"]}, token=b))

    request_type, body = going_private
    _ok(api.user(request_type, body, token=a))

    [mine] = _ok(api.user("marketplace_my_listings", {}, token=a))["listings"]
    assert (mine["listing_id"], mine["status"], mine["subscriber_count"]) == (listing_id, "removed", 0)
    [theirs] = _ok(api.user("marketplace_my_subscriptions", {}, token=b))["subscriptions"]
    assert theirs["status"] == "cancelled"
    notes = _ok(api.user("notifications_list", {"limit": 50}, token=b))["notifications"]
    assert [n["body"] for n in notes if n["event_type"] == "subscription_cancelled"] == [
        "The creator's listing changed: the strategy is no longer public."
    ]
    browse = api.get("/tradingdata", params={"request_type": "marketplace_browse"})
    assert browse.status_code == 200 and browse.json()["listings"] == []
    c_id, c = _subscriber(api)
    late = api.user("marketplace_subscribe", {"listing_id": listing_id, "selected_coins": ["BTC"]}, token=c)
    assert late.status_code == 404, late.text  # a removed listing is not found to others
    with api.app.state.services.store.read() as conn:
        assert (credits.balance(conn, b_id), credits.balance(conn, c_id)) == (35, 40)  # no refund, no charge
