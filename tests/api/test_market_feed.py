"""The market feed through HTTP on the embedded default: with the clock driven three hours past the
end of the stored candles, get_klines, market_ticker, trend_signals and active_signals all show
candles and signals from after the original end; /healthz reports the feed's clock and lag."""

from __future__ import annotations

import shutil
import signal
import subprocess
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
import sqlalchemy as sa
from polars.testing import assert_frame_equal

from svc_api.core.clock import ManualClock
from svc_api.market import service as market
from svc_api.signals import service as signals
from svc_api.signals.tables import signals as signal_rows
from svc_api.trends.refresh import refresh_once
from svc_engine.data import DataStore, load_klines, resample
from svc_engine.data.synthetic import END_MS
from tests.api.journey_helpers import server_env, svc_command
from tests.api.test_signals import creator

if TYPE_CHECKING:
    from tests.api.conftest import Api

END = END_MS // 1000
STRATEGY = {
    "timeframe": "1m",
    "entry_condition": "close crosses above SMA(10)",
    "tp_condition": "0.3%",
    "sl_condition": "0.3%",
}


@pytest.fixture
def feed_api(make_api: Any, settings: Any, signals_market: Path, tmp_path: Path, monkeypatch: Any) -> Api:
    """An app whose embedded feed is on, over a private copy of the small market, clock at its end."""
    monkeypatch.setenv("SIGNAL_POLL_SECONDS", "0")
    monkeypatch.setenv("MARKET_FEED_SECONDS", "0")  # the test runs the feed itself
    data = tmp_path / "market"
    shutil.copytree(signals_market, data)
    live = settings.replace(data_dir=data, market_feed="embedded")
    return make_api(live, clock=ManualClock(END))


def _get(api: Api, request_type: str, **params: Any) -> Any:
    reply = api.get("/tradingdata", params={"request_type": request_type, **params})
    assert reply.status_code == 200, reply.text
    return reply.json()


def test_three_hours_past_the_end_every_read_shows_the_new_market(feed_api: Api) -> None:
    services = feed_api.app.state.services
    _, token = creator(feed_api, ["BTC", "ETH"], strategy=STRATEGY)
    signals.run_once(services)  # the watches start at the next close
    for _ in range(3 * 12):  # three hours in five-minute steps, the workers at every step
        feed_api.clock.advance(300)
        market.run_feed(services)
        signals.run_once(services)
    assert feed_api.clock.now() == END + 3 * 3600

    klines = _get(feed_api, "get_klines", symbol="BTC", interval="1m", limit=5)["klines"]
    assert [k[0] for k in klines] == [END_MS + (180 - 5 + i) * 60_000 for i in range(5)]
    hourly = _get(feed_api, "get_klines", symbol="BTC", interval="1h", limit=3)["klines"]
    assert [k[0] for k in hourly] == [END_MS + h * 3_600_000 for h in range(3)]
    assert _get(feed_api, "get_klines", symbol="BTC", interval="4h", limit=1)["klines"][0][0] < END_MS

    ticker = {row["symbol"]: row for row in _get(feed_api, "market_ticker")["items"]}
    assert ticker["BTCUSDT"]["last_price"] == klines[-1][4]

    store = DataStore(services.settings.data_dir)
    refresh_once(services.store, market.catalog_of(services), timeframes=("1m",), wall_now=END + 3 * 3600)
    trends = _get(feed_api, "trend_signals", limit=50)["items"]
    assert any(int(t["timestamp"]) >= END for t in trends), trends[:3]

    live = feed_api.user("active_signals", token=token).json()["data"]["signals"]
    assert live and all(s["strategy_name"] == "smacross" for s in live)
    assert max(int(s["signal_time"]) for s in live) >= END  # seconds in this reply

    minutes = load_klines("BTCUSDT", "1m", start_ts=END, store=store)
    hours = load_klines("BTCUSDT", "1h", start_ts=END, store=store)
    # the feed's 1h is the aggregation of its 1m: prices to the digit, volume as rounded to the lot
    assert_frame_equal(hours, resample(minutes, "1h"), check_exact=False, rel_tol=1e-9)
    assert hours.drop("volume").equals(resample(minutes, "1h").drop("volume"))

    health = feed_api.get("/healthz").json()
    assert health["status"] == "ok" and health["market"]["feed"] == "embedded"
    assert health["market"]["newest_close_ms"] == (END + 3 * 3600) * 1000
    assert health["market"]["lag_ms"]["crypto/BTCUSDT 1h"] == 0


def test_healthz_names_the_series_that_lag(feed_api: Api) -> None:
    services = feed_api.app.state.services
    market.run_feed(services)
    assert feed_api.get("/healthz").json()["status"] == "ok"
    feed_api.clock.advance(3 * 3600)  # three hours pass and the feed does not run
    health = feed_api.get("/healthz").json()
    assert health["status"] == "degraded"
    lagging = {row["series"] for row in health["market"]["lagging"]}
    assert {"crypto/BTCUSDT 1m", "crypto/BTCUSDT 1h"} <= lagging
    assert market.run_feed(services)["appended"] > 0
    assert feed_api.get("/healthz").json()["status"] == "ok"


def test_the_feed_in_svc_worker_reaches_a_server_in_another_process(
    make_api: Any, settings: Any, signals_market: Path, tmp_path: Path
) -> None:
    data = tmp_path / "market"
    shutil.copytree(signals_market, data)
    env = server_env(f"sqlite:///{tmp_path / 'svc.db'}", data, tmp_path / "var")
    # a replay that starts a minute before the end of the stored candles at an hour a second
    env |= {
        "MARKET_FEED": "embedded",
        "MARKET_REPLAY_SPEED": "3600",
        "MARKET_REPLAY_FROM": str(END - 60),
        "TREND_REFRESH_SECONDS": "0",
        "SIGNAL_POLL_SECONDS": "0",
        "MARKET_FEED_SECONDS": "0.2",
    }
    api = make_api(settings.replace(data_dir=data))
    log = tmp_path / "worker.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(svc_command("worker"), env=env, stdout=out, stderr=subprocess.STDOUT)
    try:
        deadline, newest = time.monotonic() + 90, 0
        while newest < END_MS + 3_600_000 and time.monotonic() < deadline:
            assert proc.poll() is None, log.read_text()
            time.sleep(0.5)
            klines = _get(api, "get_klines", symbol="BTC", interval="1h", limit=1)["klines"]
            newest = klines[0][0]
        assert newest >= END_MS + 3_600_000, log.read_text()  # an hour past the end, read by this process
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(30)
    assert load_klines("BTCUSDT", "1m", start_ts=END, store=DataStore(data)).height >= 120


def test_a_replay_at_600x_still_brings_candles_trends_and_signals_three_hours_later(
    make_api: Any, settings: Any, signals_market: Path, tmp_path: Path, monkeypatch: Any
) -> None:
    # make run: a replay of the last three days at 600x; three hours of wall time are 75 days of market,
    # well past the end of the stored candles and past the wall clock itself
    monkeypatch.setenv("SIGNAL_POLL_SECONDS", "0")
    monkeypatch.setenv("MARKET_FEED_SECONDS", "0")
    data = tmp_path / "market"
    shutil.copytree(signals_market, data)
    wall = END + 30 * 86_400
    live = settings.replace(
        data_dir=data,
        market_feed="embedded",
        market_replay_speed=600.0,
        market_replay_from=END - 3 * 86_400,
    )
    api = make_api(live, clock=ManualClock(wall))
    services = api.app.state.services
    _, token = creator(api, ["BTC"])  # the 1h SMA cross of test_signals
    for _ in range(18):  # ten wall minutes (100 market hours) at a time
        api.clock.advance(600)
        market.run_feed(services)
        signals.run_once(services)
    market_now = END - 3 * 86_400 + 3 * 3600 * 600
    hourly = _get(api, "get_klines", symbol="BTC", interval="1h", limit=1)["klines"]
    assert hourly[0][0] == (market_now - 3600) * 1000  # the newest closed hour, 72 days past the end
    refresh_once(
        services.store,
        market.catalog_of(services),
        timeframes=("1h",),
        wall_now=market.horizon(services, wall),
    )
    trends = _get(api, "trend_signals", limit=50)["items"]
    assert any(int(t["timestamp"]) > wall for t in trends)  # past the wall clock too
    history = api.user("signal_history", {"limit": 100}, token=token).json()["data"]["signals"]
    assert len(history) >= 10  # closed signals keep coming
    with services.store.read() as conn:
        newest = conn.execute(sa.select(sa.func.max(signal_rows.c.signal_ms))).scalar_one()
    assert newest > (wall + 30 * 86_400) * 1000  # a month past the wall clock, two past the history
    assert api.get("/healthz").json()["market"]["lagging_count"] == 0
