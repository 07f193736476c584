"""When a plan runs out (ours): nothing is deleted, but the owner's strategies beyond the plan's
limit stop producing signals: on ``free``, none; a new purchase brings them back."""

from __future__ import annotations

from typing import Any

from svc_api.accounts.tables import accounts
from svc_api.billing import service as billing
from svc_api.signals import service as signals
from tests.api.test_signals import HOUR, creator


def test_an_expired_plan_stops_the_signals_and_a_purchase_restarts_them(sig_api: Any) -> None:
    svc_id, token = creator(sig_api, ["BTC", "ETH"])
    services = sig_api.app.state.services
    assert signals.run_once(services)["watches"] == 2
    with services.store.write() as conn:
        conn.execute(
            accounts.update()
            .where(accounts.c.svc_id == svc_id)
            .values(license_expires_at=sig_api.clock.now())
        )
    sig_api.clock.advance(HOUR)
    assert signals.run_once(services)["watches"] == 0
    detail = sig_api.user("strategy_detail", {"strategy_name": "smacross"}, token=token).json()["data"]
    assert detail["status"] == "active"  # kept, not deleted
    billing.purchase(services.store, svc_id, "starter", "monthly", "renew-1", now=sig_api.clock.now())
    sig_api.clock.advance(HOUR)
    assert signals.run_once(services)["watches"] == 2  # starter allows one strategy: both of its coins
