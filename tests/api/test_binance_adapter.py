"""The Binance spot adapter against a loopback fake of the protocol that checks every signature:
signing (Binance's own documented example too), the server-time offset, every method's mapping, and
each injected failure mapped to the interface's failures, Retry-After honoured without a retry storm;
a filled OCO read leg by leg, a spot-only key's futures wallet, deposit history in 89-day windows."""

from __future__ import annotations

import itertools
import time
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import pytest

from svc_api.exchange import binance
from svc_api.exchange.binance import BinanceExchange, sign
from svc_api.exchange.interface import (
    Credentials,
    ExchangeRejected,
    ExchangeUnavailable,
    InvalidCredentials,
    OcoRequest,
)
from svc_api.exchange.placement import _status
from tests.api.fakes.binance import KEY, SECRET, BinanceFake, running_binance

CREDS = Credentials(KEY, SECRET)
DAY = 86400


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


def test_a_filled_oco_reads_filled_from_its_legs(fake: BinanceFake) -> None:
    exchange = _exchange(fake)
    exchange.place_oco(CREDS, _oco("svc-filled"))
    fake.requests.clear()
    working = exchange.find_order_list(CREDS, "svc-filled")
    assert working is not None and working.status == "EXECUTING"
    assert [(leg.type, leg.status) for leg in working.legs] == [
        ("STOP_LOSS_LIMIT", "NEW"),
        ("LIMIT_MAKER", "NEW"),
    ]
    assert fake.requests == ["/api/v3/orderList"]  # the legs' types are known from the placement

    fake.fill("svc-filled", "LIMIT_MAKER")
    fake.requests.clear()
    done = exchange.find_order_list(CREDS, "svc-filled")
    assert done is not None and done.status == "ALL_DONE"
    assert [(leg.type, leg.status) for leg in done.legs] == [
        ("STOP_LOSS_LIMIT", "EXPIRED"),
        ("LIMIT_MAKER", "FILLED"),
    ]
    assert fake.requests == ["/api/v3/orderList", "/api/v3/order", "/api/v3/order"]
    assert _status(done) == "FILLED"


def test_an_order_list_read_by_another_process_learns_its_legs_types(fake: BinanceFake) -> None:
    _exchange(fake).place_oco(CREDS, _oco("svc-elsewhere"))
    fresh = _exchange(fake)  # another process, or after a restart: the placement's answer is not here
    found = fresh.find_order_list(CREDS, "svc-elsewhere")
    assert found is not None
    assert [(leg.type, leg.status) for leg in found.legs] == [
        ("STOP_LOSS_LIMIT", "NEW"),
        ("LIMIT_MAKER", "NEW"),
    ]
    fake.requests.clear()
    assert fresh.find_order_list(CREDS, "svc-elsewhere") == found
    assert fake.requests == ["/api/v3/orderList"]


def test_a_spot_only_key_has_an_empty_futures_wallet(fake: BinanceFake) -> None:
    fake.futures_enabled = False  # the futures API answers -2015 to this key
    assert _exchange(fake).balances(CREDS) == {
        "spot": {"BTC": Decimal("0.5"), "USDT": Decimal("1000")},
        "funding": {"USDT": Decimal("25.5")},
        "futures": {},
    }


def _deposit(tx_id: str, at: int, status: int = 1) -> dict[str, Any]:
    return {
        "id": tx_id,
        "txId": tx_id,
        "coin": "USDT",
        "amount": "10",
        "status": status,
        "insertTime": at * 1000,
    }


def test_deposit_history_is_read_in_windows_of_at_most_89_days(fake: BinanceFake) -> None:
    now = int(time.time())
    fake.deposits += [
        _deposit("0xold", now - 200 * DAY),
        _deposit("0xnew", now - DAY),
        _deposit("0xfailed", now - 2 * DAY, status=6),
        _deposit("0xbefore", now - 301 * DAY),
    ]
    fake.calls.clear()
    got = _exchange(fake).incoming_transfers(CREDS, now - 300 * DAY)
    assert [(t.tx_id, t.time) for t in got] == [("0xold", now - 200 * DAY), ("0xnew", now - DAY)]
    asked = [(int(p["startTime"]), int(p["endTime"])) for path, p in fake.calls if path.endswith("/hisrec")]
    assert len(asked) == 4  # 300 days: 89 + 89 + 89 + 33
    assert asked[0][0] == (now - 300 * DAY) * 1000 and asked[-1][1] >= (now - 60) * 1000
    assert all(0 < end - start <= 89 * DAY * 1000 for start, end in asked)
    assert all(a[1] == b[0] for a, b in itertools.pairwise(asked))  # no gap between windows


def test_deposit_history_reads_every_page_of_a_window(
    fake: BinanceFake, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(binance, "DEPOSIT_PAGE", 2)
    now = int(time.time())
    fake.deposits += [_deposit(f"0x{i}", now - 3600 * (i + 1)) for i in range(5)]
    got = _exchange(fake).incoming_transfers(CREDS, now - 10 * DAY)
    assert [t.tx_id for t in got] == ["0x4", "0x3", "0x2", "0x1", "0x0"]
    offsets = [p["offset"] for path, p in fake.calls if path.endswith("/hisrec")]
    assert offsets == ["0", "2", "4"]
