"""The Binance spot adapter against a loopback fake of the protocol that checks every signature:
signing (Binance's own documented example too), the server-time offset, every method's mapping, and
each injected failure mapped to the interface's failures, Retry-After honoured without a retry storm."""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal

import pytest

from svc_api.exchange.binance import BinanceExchange, sign
from svc_api.exchange.interface import (
    Credentials,
    ExchangeRejected,
    ExchangeUnavailable,
    InvalidCredentials,
    OcoRequest,
)
from tests.api.fakes.binance import KEY, SECRET, BinanceFake, running_binance

CREDS = Credentials(KEY, SECRET)


@pytest.fixture
def fake() -> Iterator[BinanceFake]:
    with running_binance() as running:
        yield running


def _exchange(fake: BinanceFake, timeout: float = 2.0) -> BinanceExchange:
    return BinanceExchange(fake.url, fake.url, timeout=timeout)


def _oco(cid: str = "svc0123456789abcdef0123456789abcdef") -> OcoRequest:
    return OcoRequest(
        "BTCUSDT",
        "SELL",
        Decimal("0.01000"),
        Decimal("63000.00"),
        Decimal("57000.00"),
        Decimal("56943.00"),
        cid,
    )


def test_signatures_follow_binances_documented_example() -> None:
    query = (
        "symbol=LTCBTC&side=BUY&type=LIMIT&timeInForce=GTC&quantity=1&price=0.1&recvWindow=5000"
        "&timestamp=1499827319559"
    )
    secret = "NhqPtmdSJYdKjVHjA7PZj4Mge3R5YNiP1e3UZjInClVN65XAbvqqM6A7H5fATj0j"
    assert sign(secret, query) == "c8db56825ae71d6d79447849e617115f4a920fa2acdcab2b053c4b2838bd6b71"


def test_every_method_maps_the_protocol(fake: BinanceFake) -> None:
    exchange = _exchange(fake)
    info = exchange.key_info(CREDS)
    assert (info.account_id, info.can_trade_spot, info.ip_whitelist) == ("354937868", True, ("127.0.0.1",))
    assert exchange.balances(CREDS) == {
        "spot": {"BTC": Decimal("0.5"), "USDT": Decimal("1000")},
        "funding": {"USDT": Decimal("25.5")},
        "futures": {"USDT": Decimal("100.0")},
    }
    rules = exchange.symbol_rules("BTCUSDT")
    assert (
        rules.price_precision,
        rules.quantity_precision,
        rules.tick_size,
        rules.step_size,
        rules.min_notional,
    ) == (2, 5, Decimal("0.01"), Decimal("0.00001"), Decimal("5"))
    assert exchange.last_price("BTCUSDT") == Decimal("60000.00")
    with pytest.raises(LookupError):
        exchange.symbol_rules("NOPEUSDT")
    placed = exchange.place_oco(CREDS, _oco())
    assert (placed.status, [leg.type for leg in placed.legs]) == (
        "EXECUTING",
        ["STOP_LOSS_LIMIT", "LIMIT_MAKER"],
    )
    assert exchange.find_order_list(CREDS, placed.client_order_id) == placed
    assert exchange.find_order_list(CREDS, "svc-unknown") is None
    with pytest.raises(ExchangeRejected) as twice:
        exchange.place_oco(CREDS, _oco())
    assert twice.value.duplicate is True
    fake.deposits.append(
        {"txId": "0xabc", "coin": "USDT", "amount": "50", "status": 1, "insertTime": 1_790_000_000_000}
    )
    [deposit] = exchange.incoming_transfers(CREDS, 0)
    assert (deposit.tx_id, deposit.asset, deposit.amount, deposit.time) == (
        "0xabc",
        "USDT",
        Decimal("50"),
        1_790_000_000,
    )


def test_a_wrong_secret_is_refused_as_invalid_credentials(fake: BinanceFake) -> None:
    with pytest.raises(InvalidCredentials):
        _exchange(fake).key_info(Credentials(KEY, "x" * 64))
    with pytest.raises(InvalidCredentials):
        _exchange(fake).key_info(Credentials("y" * 64, SECRET))


def test_a_skewed_clock_learns_the_offset_and_retries_once(fake: BinanceFake) -> None:
    exchange = _exchange(fake)
    exchange.key_info(CREDS)  # offset learned at 0 skew
    fake.skew_ms = 10_000
    fake.requests.clear()
    assert exchange.key_info(CREDS).account_id == "354937868"
    assert fake.requests[:3] == ["/api/v3/account", "/api/v3/time", "/api/v3/account"]


@pytest.mark.parametrize(
    ("kind", "retry_after"),
    [("server_error", None), ("malformed", None), ("rate_limit", 7.0), ("banned", 120.0)],
)
def test_injected_failures_are_unavailable_with_retry_after(
    fake: BinanceFake, kind: str, retry_after: float | None
) -> None:
    exchange = _exchange(fake)
    exchange.key_info(CREDS)  # the clock offset is known
    fake.fail_next(kind)
    fake.requests.clear()
    with pytest.raises(ExchangeUnavailable) as failed:
        exchange.balances(CREDS)
    assert failed.value.retry_after == retry_after
    assert fake.requests == ["/api/v3/account"]  # no retry storm


def test_a_timeout_after_acceptance_is_found_by_its_client_id(fake: BinanceFake) -> None:
    exchange = _exchange(fake, timeout=0.5)
    exchange.key_info(CREDS)  # the clock offset is known
    fake.fail_next("timeout_after_accept")
    with pytest.raises(ExchangeUnavailable):
        exchange.place_oco(CREDS, _oco("svc-lost-answer"))
    found = exchange.find_order_list(CREDS, "svc-lost-answer")
    assert found is not None and found.status == "EXECUTING"
    with pytest.raises(ExchangeRejected) as again:
        exchange.place_oco(CREDS, _oco("svc-lost-answer"))
    assert again.value.duplicate is True
