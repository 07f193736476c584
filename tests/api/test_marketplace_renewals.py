"""Monthly renewals that would buy no signals lapse without a charge (ours): the subscriber's licence
has run out, or the creator's plan no longer lets the strategy produce signals. On SQLite and
PostgreSQL."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from svc_api.accounts import service as accounts
from svc_api.marketplace import service as marketplace
from tests.api.test_marketplace_concurrency import DAY, _ledger_total, _listed, _ok, _subscriber

if TYPE_CHECKING:
    from tests.api.conftest import Api


def _subscribed(api: Api) -> tuple[str, str, str, str]:
    creator_id, _, listing = _listed(api)
    svc_id, token = _subscriber(api, 20)
    body = {"listing_id": listing, "selected_coins": ["BTC"]}
    _ok(api.user("marketplace_subscribe", body, token=token))
    return creator_id, listing, svc_id, token


def _renew_month(api: Api) -> int:
    services = api.app.state.services
    api.clock.advance(30 * DAY)
    fee = services.settings.marketplace_fee_pct
    return marketplace.renew_due(services.store, now=api.clock.now(), fee_pct=fee)


def _state(api: Api, token: str) -> tuple[Any, Any, list[str]]:
    balance = _ok(api.user("account_info", token=token))["svc_credits"]
    sub = _ok(api.user("marketplace_my_subscriptions", token=token))["subscriptions"][0]
    titles = [n["title"] for n in _ok(api.user("notifications_list", token=token))["notifications"]]
    return balance, sub["status"], titles


def test_a_renewal_is_charged_while_both_sides_hold_their_plans(sig_api: Api) -> None:
    _, _, _, token = _subscribed(sig_api)
    assert _renew_month(sig_api) == 1
    balance, status, _ = _state(sig_api, token)
    assert (balance, status) == (16, "active")


def test_a_subscriber_whose_licence_ran_out_lapses_uncharged(sig_api: Api) -> None:
    _, _, svc_id, token = _subscribed(sig_api)
    with sig_api.app.state.services.store.write() as conn:
        accounts.take_back_plan(conn, svc_id, 365, source="test", now=sig_api.clock.now())
    before = _ledger_total(sig_api)
    assert _renew_month(sig_api) == 0
    balance, status, titles = _state(sig_api, token)
    assert (balance, status, titles.count("Subscription lapsed")) == (18, "lapsed", 1)
    assert _ledger_total(sig_api) == before
    assert _renew_month(sig_api) == 0  # lapsed: never charged again


def test_subscribers_lapse_uncharged_when_the_creators_plan_stops_the_strategy(sig_api: Api) -> None:
    creator_id, _, _, token = _subscribed(sig_api)
    with sig_api.app.state.services.store.write() as conn:
        accounts.take_back_plan(conn, creator_id, 3650, source="test", now=sig_api.clock.now())
    assert _renew_month(sig_api) == 0
    balance, status, titles = _state(sig_api, token)
    assert (balance, status, titles.count("Subscription lapsed")) == (18, "lapsed", 1)
