"""Issue 16 as a new user meets it, through HTTP: register, link the paper exchange, read the
balance, preview and place an order from a live signal, retry the key, read the order history; buy
a plan through each channel and see the licence stack; a refund; log in by exchange identity and by
identity provider; watch a backtest's progress and a new signal on a WebSocket."""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

from websockets.sync.client import connect

from svc_api.billing.channels import signature
from svc_api.exchange import service as exchange
from svc_api.signals import service as signals
from tests.api.conftest import SIGNALS_T0
from tests.api.exchange_helpers import linked_trader, live_signal, order_of
from tests.api.fakes.oidc_issuer import AUDIENCE, running_issuer
from tests.api.test_realtime import _subscribe, _until, serving
from tests.api.test_signals import HOUR

DAY = 86400


def test_trader_journey(sig_api: Any, cli_env: None) -> None:
    api = sig_api
    services = api.app.state.services
    with running_issuer() as issuer:
        services.settings = services.settings.replace(
            card_webhook_secret="card-secret",
            store_webhook_token="store-token",
            oidc_issuer=issuer.url,
            oidc_audience=AUDIENCE,
            oidc_jwks_cooldown_seconds=0,
        )
        svc_id, token, keys = linked_trader(api)
        bearer = {"Authorization": f"Bearer {token}"}
        assert api.user("exchange_balance", token=token).json()["data"]["spot"] == {
            "BTC": 1.0,
            "USDT": 10000.0,
        }

        with serving(api.app) as url, connect(url, additional_headers=bearer) as ws:
            _subscribe(ws, "signals", "jobs")
            signal = live_signal(api, token)
            while True:  # the socket heard of it (possibly after other events)
                message = json.loads(ws.recv(10))
                if message.get("event") == "opened":
                    break
            assert message["position_key"] == signal["position_key"]
            launch = {"strategy_name": "smacross", "coins": ["BTC"], "timeframe": "1h"}
            job = api.post("/backtest", params={"action": "full_range"}, headers=bearer, json=launch).json()
            done = [m for m in _until(ws, "completed") if m["channel"] == "jobs"]
            assert done[-1]["job_id"] == job["job_id"] and done[-1]["progress_pct"] == 100.0

        body = order_of(signal, "journey-order-000001")
        preview = api.user(
            "exchange_order_preview", {k: v for k, v in body.items() if k != "idempotency_key"}, token=token
        )
        assert preview.json()["data"]["balance_verified"] is True
        placed = api.user("exchange_order", body, token=token).json()["data"]
        assert placed["status"] == "submitted"
        assert api.user("exchange_order", body, token=token).json()["data"]["idempotent_replay"] is True
        [record] = api.user("order_history", token=token).json()["data"]["orders"]
        assert (record["order_id"], record["exchange_order_status"]) == (placed["order_list_id"], "NEW")

        start = api.user("account_info", token=token).json()["data"]["license_expires_at"]
        now = api.clock.now()
        card = json.dumps(
            {
                "event": "order.paid",
                "order_id": "j-1",
                "product": "svc_pro_monthly",
                "amount_usd": "50",
                "note": svc_id,
            }
        ).encode()
        assert (
            api.post(
                "/webhooks/card", content=card, headers={"X-Signature": signature(card, "card-secret")}
            ).status_code
            == 200
        )
        iap = {
            "platform": "android",
            "product_id": "svc_pro_annual",
            "transaction_id": "gp-j",
            "receipt": "sandbox:gp-j:svc_pro_annual",
        }
        assert api.user("iap_verify", iap, token=token).status_code == 200
        renewal = {
            "type": "RENEWAL",
            "transaction_id": "ios-j",
            "product_id": "svc_pro_monthly",
            "app_account_token": svc_id,
        }
        assert (
            api.post(
                "/webhooks/store/apple", content=json.dumps(renewal), headers={"X-Store-Token": "store-token"}
            ).status_code
            == 200
        )
        house = exchange.create_account(services.store, balances={}, ip_whitelist=("127.0.0.1",), now=now)
        services.settings = services.settings.replace(
            payment_exchange_key=house["api_key"],
            payment_exchange_secret=house["api_secret"],
        )
        exchange.deposit(
            services.store, house["account_id"], "tx-j", "USDT", Decimal(50), payer=None, note=svc_id, now=now
        )
        exchange.run_reconciler(services)
        held = api.user("account_info", token=token).json()["data"]["license_expires_at"]
        assert held == max(start, now) + (30 + 365 + 30 + 30) * DAY
        refund = json.dumps({"type": "REFUND", "transaction_id": "ios-j"})
        api.post("/webhooks/store/apple", content=refund, headers={"X-Store-Token": "store-token"})
        assert api.user("account_info", token=token).json()["data"]["license_expires_at"] == held - 30 * DAY

        session = api.user("exchange_login", {"api_key": keys["api_key"], "api_secret": keys["api_secret"]})
        assert session.json()["data"]["svc_id"] == svc_id
        assert (
            api.user("identity_link", {"id_token": issuer.token("journey")}, token=token).status_code == 200
        )
        by_identity = api.user("identity_login", {"id_token": issuer.token("journey")}).json()["data"]
        assert by_identity["svc_id"] == svc_id
        connections = api.user("account_info", token=token).json()["data"]["connections"]
        assert (connections["exchange"], connections["identity_provider"]) == (True, True)
    assert api.clock.now() >= SIGNALS_T0 and HOUR and signals
