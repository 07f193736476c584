"""The market feed on a real exchange's protocol (MARKET_FEED=binance) against a loopback fake of
Binance's kline endpoints: closed candles only, a catch-up after an outage, a gap the exchange has
stays a gap, a dropped connection is retried, repeats change nothing, and the lag shows in /healthz."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import pytest

from svc_api.core.clock import ManualClock
from svc_api.market import service as market
from svc_engine.data import DataStore, load_klines, validate_klines
from tests.api.fakes.binance_klines import KlineFake, as_frame, make_candles, running_klines

if TYPE_CHECKING:
    from tests.api.conftest import Api

H = 3_600_000
T0 = 1_704_067_200_000  # 2024-01-01 00:00 UTC
HELD = 200  # hours the fake holds from T0
STORED = 100  # hours the store holds at start


@pytest.fixture
def fake() -> Iterator[KlineFake]:
    with running_klines() as served:
        served.add("BTCUSDT", "1h", make_candles(T0, HELD, H))
        yield served


@pytest.fixture
def feed_api(make_api: Any, settings: Any, fake: KlineFake, tmp_path: Any, monkeypatch: Any) -> Api:
    monkeypatch.setenv("MARKET_FEED_SECONDS", "0")  # the test runs the feed itself
    store = DataStore(tmp_path / "market")
    store.write_klines("crypto", "BTCUSDT", "1h", as_frame(fake.held("BTCUSDT", "1h")[:STORED]))
    live = settings.replace(
        data_dir=tmp_path / "market",
        market_feed="binance",
        binance_api_url=fake.url,
        market_feed_symbols=("BTCUSDT",),
        market_feed_backfill_days=0.0,
    )
    return make_api(live, clock=ManualClock((T0 + STORED * H) // 1000))


def _stored(api: Api) -> Any:
    return load_klines(
        "BTCUSDT", "1h", market="crypto", store=DataStore(api.app.state.services.settings.data_dir)
    )


def test_the_feed_brings_closed_candles_only_and_catches_up_after_an_outage(
    feed_api: Api, fake: KlineFake
) -> None:
    services = feed_api.app.state.services
    feed_api.clock.advance(30 * 60)  # half an hour into hour 100: nothing has closed
    fake.serve_open_candle = True
    assert market.run_feed(services)["appended"] == 0
    feed_api.clock.advance(30 * 60 + 5)
    assert market.run_feed(services)["appended"] == 1  # hour 100 closed; hour 101 is still open
    assert _stored(feed_api).height == STORED + 1
    feed_api.clock.advance(3 * 3600)  # a three-hour outage
    assert feed_api.get("/healthz").json()["status"] == "degraded"
    assert market.run_feed(services)["appended"] == 3
    assert _stored(feed_api).equals(as_frame(fake.held("BTCUSDT", "1h")[: STORED + 4]))
    assert feed_api.get("/healthz").json()["market"]["lag_ms"]["crypto/BTCUSDT 1h"] < H


def test_a_gap_the_exchange_has_stays_a_gap(feed_api: Api, fake: KlineFake) -> None:
    fake.cut("BTCUSDT", "1h", T0 + (STORED + 2) * H, T0 + (STORED + 4) * H)  # two hours never traded
    feed_api.clock.advance(10 * 3600)
    fake.drop_next(path="/api/v3/klines")  # and the first answer is cut off: retried
    assert market.run_feed(feed_api.app.state.services)["appended"] == 8
    report = validate_klines(_stored(feed_api), timeframe="1h")
    assert (report.gaps, report.missing_candles) == (1, 2)
    assert market.run_feed(feed_api.app.state.services)["appended"] == 0  # repeats change nothing
