"""Plans bought through every channel, through HTTP, on SQLite and PostgreSQL: a signed card-store
webhook (svc_id from the note, e-mail as fallback), app-store notifications, in-app purchases
verified server-side, USDT transfers into the service's exchange account; stacking of the time held,
refunds taking back the days, payments waiting for an operator, and a webhook delivered ten times at
once extending the plan once."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from decimal import Decimal
from typing import Any

import pytest
from click.testing import CliRunner

from svc_api.billing.channels import signature
from svc_api.cli import main as svc
from svc_api.core.clock import ManualClock
from svc_api.exchange import service as exchange
from svc_api.settings import Settings
from tests.api.community_helpers import admin
from tests.api.conftest import SIGNALS_T0

SECRET, TOKEN = "card-secret-0123456789", "store-token-0123456789"
DAY = 86400


@pytest.fixture
def papi(settings: Settings, make_api: Any, cli_env: None) -> Any:
    configured = settings.replace(
        card_webhook_secret=SECRET,
        store_webhook_token=TOKEN,
        exchange_poll_seconds=0,
        session_ttl_seconds=3650 * DAY,
    )
    return make_api(configured, clock=ManualClock(SIGNALS_T0))


def _card(api: Any, event: dict[str, Any], secret: str = SECRET) -> Any:
    body = json.dumps(event).encode()
    return api.post(
        "/webhooks/card",
        content=body,
        headers={"X-Signature": signature(body, secret), "Content-Type": "application/json"},
    )


def _paid(
    order_id: str, product: str = "svc_pro_monthly", amount: str = "50.00", **more: Any
) -> dict[str, Any]:
    return {
        "event": "order.paid",
        "order_id": order_id,
        "product": product,
        "amount_usd": amount,
        "currency": "USD",
        **more,
    }


def _expiry(api: Any, token: str) -> tuple[str, int]:
    info = api.user("account_info", token=token).json()["data"]
    return info["plan"], info["license_expires_at"]


def test_card_orders_stack_refund_and_find_their_buyer(papi: Any) -> None:
    user = papi.register()
    t = user["session_token"]
    assert _card(papi, _paid("ord-1", note=f"for {user['svc_id'].lower()}")).json()["outcome"] == "applied"
    assert _expiry(papi, t) == ("pro", SIGNALS_T0 + 30 * DAY)
    by_mail = _card(papi, _paid("ord-2", "svc_pro_annual", "300", note="gift", email=user["email"].upper()))
    assert (by_mail.status_code, by_mail.json()["purchase"]["license_expires_at"]) == (
        200,
        SIGNALS_T0 + 395 * DAY,
    )
    again = _card(papi, _paid("ord-2", "svc_pro_annual", "300", note="gift", email=user["email"]))
    assert again.json()["purchase"]["replayed"] is True
    assert _expiry(papi, t) == ("pro", SIGNALS_T0 + 395 * DAY)
    refunded = _card(papi, {"event": "order.refunded", "order_id": "ord-2"})
    assert (refunded.json()["outcome"], _expiry(papi, t)) == ("refunded", ("pro", SIGNALS_T0 + 30 * DAY))


def test_card_webhook_refuses_bad_signatures_and_malformed_events(
    papi: Any, settings: Settings, make_api: Any
) -> None:
    assert _card(papi, _paid("ord-9"), secret="wrong").status_code == 401
    unsigned = papi.post("/webhooks/card", content=b"{}")
    assert (unsigned.status_code, unsigned.json()["error"]) == (401, "invalid_signature")
    assert _card(papi, {"event": "order.shipped", "order_id": "x"}).status_code == 400
    assert _card(papi, _paid("ord-9", amount="lots")).status_code == 400
    assert _card(papi, {"event": "order.refunded", "order_id": "never"}).status_code == 404
    plain = make_api(settings)
    assert plain.post("/webhooks/card", content=b"{}").status_code == 404  # not configured


def test_unmatched_and_short_payments_wait_for_an_operator(papi: Any) -> None:
    user = papi.register()
    orphan = _card(papi, _paid("ord-3", note="no id here", email="nobody@example.com"))
    short = _card(papi, _paid("ord-4", amount="49.99", note=user["svc_id"]))
    assert (orphan.status_code, orphan.json()["outcome"], short.status_code) == (202, "queued", 202)
    waiting = admin("payments", "pending")
    assert [(p["external_id"], p["reason"]) for p in waiting] == [
        ("ord-3", "no account found for the payment"),
        ("ord-4", "49.99 USD is below the price of svc_pro_monthly"),
    ]
    applied = admin(
        "payments",
        "assign",
        waiting[0]["payment_id"],
        user["svc_id"],
        "--plan",
        "starter",
        "--period",
        "monthly",
    )
    assert (applied["plan"], applied["source"], applied["purchase_id"]) == ("starter", "card", "ord-3")
    # without --plan and --period the payment's own product decides: svc_pro_monthly
    own = admin("payments", "assign", waiting[1]["payment_id"], user["svc_id"])
    assert (own["plan"], own["period"], own["purchase_id"]) == ("pro", "monthly", "ord-4")
    odd = _card(papi, _paid("ord-6", product="gift-card", note="no id here"))
    assert odd.status_code == 202
    [gift] = admin("payments", "pending")
    unnamed = CliRunner().invoke(svc, ["admin", "payments", "assign", gift["payment_id"], user["svc_id"]])
    assert unnamed.exit_code == 1
    assert f"payment {gift['payment_id']} names no plan (product 'gift-card')" in unnamed.output
    assert admin("payments", "dismiss", gift["payment_id"])["status"] == "dismissed"
    assert admin("payments", "pending") == []


def test_a_webhook_delivered_ten_times_at_once_extends_the_plan_once(papi: Any) -> None:
    user = papi.register()
    event = _paid("ord-5", note=user["svc_id"])
    with ThreadPoolExecutor(10) as pool:
        codes = list(pool.map(lambda _: _card(papi, event).status_code, range(10)))
    assert codes == [200] * 10
    assert _expiry(papi, user["session_token"]) == ("pro", SIGNALS_T0 + 30 * DAY)


def test_app_store_notifications_and_in_app_verification(papi: Any) -> None:
    user = papi.register()
    t, sid = user["session_token"], user["svc_id"]
    bought = papi.user(
        "iap_verify",
        {
            "platform": "ios",
            "product_id": "svc_plus_monthly",
            "transaction_id": "tx-1",
            "receipt": "sandbox:tx-1:svc_plus_monthly",
        },
        token=t,
    )
    assert (bought.json()["data"]["plan"], _expiry(papi, t)) == ("plus", ("plus", SIGNALS_T0 + 30 * DAY))
    forged = papi.user(
        "iap_verify",
        {
            "platform": "ios",
            "product_id": "svc_plus_monthly",
            "transaction_id": "tx-2",
            "receipt": "sandbox:tx-9:svc_plus_monthly",
        },
        token=t,
    )
    assert (forged.status_code, forged.json()["message"]) == (400, "the store does not confirm this purchase")
    assert (
        papi.user("iap_verify", {"platform": "web", "product_id": "svc_plus_monthly"}, token=t).status_code
        == 400
    )

    def notify(body: dict[str, Any], token: str = TOKEN, platform: str = "apple") -> Any:
        return papi.post(
            f"/webhooks/store/{platform}", content=json.dumps(body), headers={"X-Store-Token": token}
        )

    renewal = {
        "type": "RENEWAL",
        "transaction_id": "tx-3",
        "product_id": "svc_plus_monthly",
        "app_account_token": sid,
    }
    assert notify(renewal).json()["outcome"] == "applied"
    assert _expiry(papi, t) == ("plus", SIGNALS_T0 + 60 * DAY)
    assert notify({"type": "REFUND", "transaction_id": "tx-3"}).json()["outcome"] == "refunded"
    assert _expiry(papi, t) == ("plus", SIGNALS_T0 + 30 * DAY)
    assert notify(renewal, token="wrong").status_code == 401
    assert notify(renewal, platform="nokia").status_code == 404
    google = {
        "type": "PURCHASE",
        "transaction_id": "gp-1",
        "product_id": "svc_plus_annual",
        "app_account_token": sid,
    }
    assert (
        notify(google, platform="google").json()["purchase"]["license_expires_at"] == SIGNALS_T0 + 395 * DAY
    )


def test_usdt_transfers_pay_by_note_or_by_linked_payer(papi: Any) -> None:
    services = papi.app.state.services
    house = exchange.create_account(services.store, balances={}, ip_whitelist=("127.0.0.1",), now=SIGNALS_T0)
    services.settings = services.settings.replace(
        payment_exchange_key=house["api_key"], payment_exchange_secret=house["api_secret"]
    )
    by_note, by_payer = papi.register(), papi.register()
    payer = exchange.create_account(
        services.store, balances={"USDT": Decimal(100)}, ip_whitelist=("127.0.0.1",), now=SIGNALS_T0
    )
    linked = papi.user(
        "exchange_link",
        {"api_key": payer["api_key"], "api_secret": payer["api_secret"]},
        token=by_payer["session_token"],
    )
    assert linked.status_code == 200, linked.text
    now = papi.clock.now()
    exchange.deposit(
        services.store,
        house["account_id"],
        "tx-a",
        "USDT",
        Decimal(10),
        payer=None,
        note=f"svc {by_note['svc_id']}",
        now=now,
    )
    exchange.deposit(
        services.store,
        house["account_id"],
        "tx-b",
        "USDT",
        Decimal(600),
        payer=payer["account_id"],
        note="",
        now=now,
    )
    exchange.deposit(
        services.store, house["account_id"], "tx-c", "USDT", Decimal(7), payer=None, note="?", now=now
    )
    exchange.run_reconciler(services)
    exchange.run_reconciler(services)  # read again: nothing counts twice
    assert _expiry(papi, by_note["session_token"]) == ("starter", SIGNALS_T0 + 30 * DAY)
    assert _expiry(papi, by_payer["session_token"]) == ("investor", SIGNALS_T0 + 365 * DAY)
    assert [(p["external_id"], p["source"]) for p in admin("payments", "pending")] == [("tx-c", "usdt")]


def test_in_app_purchases_verified_with_each_store(settings: Settings, make_api: Any) -> None:
    from tests.api.fakes.stores import TOKEN as STORE_TOKEN
    from tests.api.fakes.stores import running_stores

    with running_stores() as stores:
        api = make_api(
            settings.replace(
                iap_verifier="stores",
                apple_api_url=stores.url,
                apple_api_token=STORE_TOKEN,
                google_api_url=stores.url,
                google_api_token=STORE_TOKEN,
                google_package="com.svc.app",
                session_ttl_seconds=3650 * DAY,
            ),
            clock=ManualClock(SIGNALS_T0),
        )
        t = api.register()["session_token"]
        stores.apple["a-1"] = {"transactionId": "a-1", "productId": "svc_plus_monthly"}
        stores.apple["a-2"] = {"transactionId": "a-2", "productId": "svc_plus_monthly", "revocationDate": 1}
        stores.google["tok-1"] = {
            "subscriptionState": "SUBSCRIPTION_STATE_ACTIVE",
            "lineItems": [{"productId": "svc_pro_annual"}],
        }

        def buy(platform: str, product: str, tx: str, receipt: str) -> Any:
            body = {"platform": platform, "product_id": product, "transaction_id": tx, "receipt": receipt}
            return api.user("iap_verify", body, token=t)

        assert buy("ios", "svc_plus_monthly", "a-1", "app-receipt").status_code == 200
        assert buy("ios", "svc_pro_monthly", "a-1", "app-receipt").status_code == 400  # another product
        assert buy("ios", "svc_plus_monthly", "a-2", "app-receipt").status_code == 400  # revoked
        assert buy("ios", "svc_plus_monthly", "a-9", "app-receipt").status_code == 400  # unknown to Apple
        assert buy("android", "svc_pro_annual", "gpa-1", "tok-1").status_code == 200
        assert buy("android", "svc_pro_annual", "gpa-2", "tok-unknown").status_code == 400
        # the plus month left (20 a month) converts to 12 days of pro (50 a month) before the year
        assert _expiry(api, t) == ("pro", SIGNALS_T0 + (12 + 365) * DAY)
        stores.down = True
        down = buy("ios", "svc_plus_monthly", "a-3", "app-receipt")
        assert (down.status_code, down.json()["reason"]) == (503, "store_unavailable")
        assert _expiry(api, t) == ("pro", SIGNALS_T0 + (12 + 365) * DAY)  # nothing granted


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"platform": []},
        {"platform": {}},
        {"platform": "ios", "product_id": ["svc_plus_monthly"]},
        {"platform": "ios", "product_id": "svc_plus_monthly", "transaction_id": {"a": 1}, "receipt": "r"},
        {"platform": "ios", "product_id": "svc_plus_monthly", "transaction_id": "t", "receipt": 5},
    ],
)
def test_iap_verify_refuses_wrong_types_with_400(papi: Any, body: dict[str, Any]) -> None:
    reply = papi.user("iap_verify", body, token=papi.register()["session_token"])
    assert reply.status_code == 400, reply.text
    assert reply.json()["error"] == "invalid_request"


def test_iap_verify_of_another_accounts_transaction_is_a_409_that_reveals_nothing(papi: Any) -> None:
    owner, other = papi.register(), papi.register()
    body = {
        "platform": "ios",
        "product_id": "svc_plus_monthly",
        "transaction_id": "tx-owned",
        "receipt": "sandbox:tx-owned:svc_plus_monthly",
    }
    assert papi.user("iap_verify", body, token=owner["session_token"]).status_code == 200
    taken = papi.user("iap_verify", body, token=other["session_token"])
    assert taken.status_code == 409, taken.text
    assert taken.json()["code"] == "transaction_taken"
    assert owner["svc_id"] not in taken.text and "plus" not in taken.text.replace("svc_plus", "")
    assert set(taken.json()) == {"error", "code", "message"}
    assert _expiry(papi, other["session_token"])[0] == "free"  # nothing granted to the caller
    # The owner's own replay still answers the purchase.
    again = papi.user("iap_verify", body, token=owner["session_token"])
    assert again.status_code == 200 and again.json()["data"]["replayed"] is True


def test_a_usdt_note_naming_several_accounts_goes_to_the_operator_queue(papi: Any) -> None:
    services = papi.app.state.services
    house = exchange.create_account(services.store, balances={}, ip_whitelist=("127.0.0.1",), now=SIGNALS_T0)
    services.settings = services.settings.replace(
        payment_exchange_key=house["api_key"], payment_exchange_secret=house["api_secret"]
    )
    first, second = papi.register(), papi.register()
    note = f"for {first['svc_id']} or {second['svc_id'].lower()}"
    exchange.deposit(
        services.store,
        house["account_id"],
        "tx-two",
        "USDT",
        Decimal(10),
        payer=None,
        note=note,
        now=papi.clock.now(),
    )
    # The same account named twice is one account: it is paid.
    exchange.deposit(
        services.store,
        house["account_id"],
        "tx-one",
        "USDT",
        Decimal(10),
        payer=None,
        note=f"{second['svc_id']} {second['svc_id'].lower()}",
        now=papi.clock.now(),
    )
    exchange.run_reconciler(services)
    assert _expiry(papi, first["session_token"])[0] == "free"
    assert _expiry(papi, second["session_token"]) == ("starter", SIGNALS_T0 + 30 * DAY)
    pending = admin("payments", "pending")
    assert [(p["external_id"], p["svc_id"]) for p in pending] == [("tx-two", None)]
    assert "several accounts" in pending[0]["reason"] and first["svc_id"] in pending[0]["reason"]
