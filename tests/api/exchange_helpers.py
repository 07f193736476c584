"""Helpers of the exchange tests: a paper account made by the operator command, a trader who linked
it and holds a live signal, and an order request from that signal."""

from __future__ import annotations

from decimal import ROUND_DOWN, Decimal
from typing import Any

from svc_api.signals import service as signals
from tests.api.community_helpers import admin
from tests.api.test_signals import HOUR, creator


def paper_account(*balances: str, extra: tuple[str, ...] = ()) -> dict[str, str]:
    """``svc admin exchange paper-account --balance ...``: account id, key and secret."""
    args = [a for b in balances for a in ("--balance", b)]
    return admin("exchange", "paper-account", *args, *extra)


def linked_trader(api: Any) -> tuple[str, str, dict[str, str]]:
    """A pro user with a strategy live on BTC and ETH and a linked paper account (10,000 USDT,
    1 BTC): (svc_id, token, the account's key and secret)."""
    svc_id, token = creator(api, ["BTC", "ETH"])
    keys = paper_account("USDT=10000", "BTC=1")
    reply = api.user(
        "exchange_link", {"api_key": keys["api_key"], "api_secret": keys["api_secret"]}, token=token
    )
    assert reply.status_code == 200, reply.text
    return svc_id, token, keys


def live_signal(api: Any, token: str, coin: str = "BTC") -> dict[str, Any]:
    """Step the market an hour at a time until the strategy has a live signal on ``coin``."""
    services = api.app.state.services
    for _ in range(24 * 30):
        page = api.user("active_signals", token=token).json()["data"]["signals"]
        found = [s for s in page if s["coin"] == coin]
        if found:
            return found[0]
        api.clock.advance(HOUR)
        signals.run_once(services)
    raise AssertionError(f"no live {coin} signal in 30 days")


def order_of(
    signal: dict[str, Any], key: str | None = None, notional: int = 200, **changes: Any
) -> dict[str, Any]:
    """An ``exchange_order`` body protecting a long position of ``signal`` worth ``notional`` USDT."""
    entry = Decimal(signal["entry_price"])
    quantity = (Decimal(notional) / entry).quantize(Decimal("0.00001"), ROUND_DOWN)
    body = {
        "symbol": f"{signal['coin']}USDT",
        "side": "BUY",
        "quantity": f"{quantity:.5f}",
        "entry_price": signal["entry_price"],
        "take_profit_price": signal["limit_price"],
        "stop_loss_price": signal["stop_price"],
        "market_type": "spot",
        "order_source": "signal",
        "signal_position_key": signal["position_key"],
    }
    if key is not None:
        body["idempotency_key"] = key
    return {**body, **changes}
