"""Issue 28: listings on timeframes the store does not hold (4h, 1d over stored 1h candles) are
watched from the resampled series, exactly as backtests load them, and deliver their signals to
subscribers through HTTP; a timeframe no stored series can be resampled to is refused at publish
and at subscribe (400), before anyone pays."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import polars as pl
import pytest

import svc_engine.sim.drivers as drivers
from svc_api.accounts import service as accounts
from svc_api.core.clock import ManualClock
from svc_api.credits import service as credits
from svc_api.market import service as market
from svc_api.settings import Settings
from svc_api.signals import queries as signal_queries
from svc_api.signals import service as signals
from svc_engine.data import DataStore
from svc_engine.strategy import compile_strategy
from tests.api.conftest import SIGNALS_T0
from tests.api.test_signals import HOUR, STRATEGY, creator

if TYPE_CHECKING:
    from tests.api.conftest import Api

DAY = 24 * HOUR


def _ok(reply: Any) -> Any:
    assert reply.status_code == 200, reply.text
    body = reply.json()
    return body.get("data", body)


def _subscriber(api: Api, credit: int = 20) -> tuple[str, str]:
    data = api.register()
    with api.app.state.services.store.write() as conn:
        accounts.grant_plan(conn, data["svc_id"], "pro", 365, now=api.clock.now())
        credits.deposit_credits(conn, data["svc_id"], credit, now=int(time.time()))
    return data["svc_id"], data["session_token"]


def _generated(api: Api, name: str, timeframe: str) -> str:
    """A pro creator's token with a generated strategy (no backtest: none can run on ``timeframe``)."""
    _svc_id, token = _subscriber(api)
    fields = STRATEGY | {"strategy_name": name, "timeframe": timeframe}
    _ok(api.user("strategy_generate", fields, token=token))
    deadline = time.monotonic() + 10
    while _ok(api.user("strategy_detail", {"strategy_name": name}, token=token))["status"] == "generating":
        assert time.monotonic() < deadline
        time.sleep(0.02)
    return token


def _publish(api: Api, token: str, name: str, coins: list[str]) -> Any:
    return api.user(
        "marketplace_publish",
        {
            "strategy_key": name,
            "monthly_price_credits": 5,
            "signal_mode": "signal_only",
            "requested_coins": coins,
        },
        token=token,
    )


def _expected_signal_times(api: Api, entry: str, timeframe: str, first: int, last: int) -> list[int]:
    """The signal times of the backtest of ``[first, last]`` (open times, seconds) on ``timeframe``,
    the positions a watch starting at ``first`` places (an order placed on the range's last candle
    after a trade the range's end closed is not real yet, as in tests/api/test_signals.py)."""
    services = api.app.state.services
    engine = compile_strategy(entry, STRATEGY["tp_condition"], STRATEGY["sl_condition"])
    found = drivers.backtest(
        engine,
        "BTCUSDT",
        timeframe,
        first,
        last,
        store=DataStore(services.settings.data_dir),
        market_type="spot",
        spread_pct=market.coin_spread(services, "crypto", "BTCUSDT"),
    ).to_dict()
    trades = {t["signal_time"]: t for t in found["trades"]}
    placed = [p["signal_time"] for p in found["all_positions"] if p["fate"] in ("traded", "expired")]
    if len(placed) > 1 and trades.get(placed[-2], {}).get("exit_reason") == "end":
        placed = placed[:-1]
    return placed


@pytest.mark.parametrize(
    ("timeframe", "entry", "days"),
    [("4h", "close crosses above SMA(20)", 12), ("1d", "close > open", 20)],
)
def test_a_listing_on_a_resampled_timeframe_delivers_its_signals(
    sig_api: Api, timeframe: str, entry: str, days: int
) -> None:
    api = sig_api
    tf = {"4h": 4 * HOUR, "1d": DAY}[timeframe]
    name = f"res{timeframe}"
    _a_id, a = creator(api, ["BTC"], name=name, strategy={"timeframe": timeframe, "entry_condition": entry})
    listing = _ok(_publish(api, a, name, ["BTC"]))
    assert (listing["listed_coins"], listing["rejected_coins"]) == (["BTC"], {})
    b_id, b = _subscriber(api)
    _ok(
        api.user(
            "marketplace_subscribe", {"listing_id": listing["listing_id"], "selected_coins": ["BTC"]}, token=b
        )
    )
    assert signals.run_once(api.app.state.services)["watches"] == 1  # watched although not stored
    services = api.app.state.services
    while api.clock.now() < SIGNALS_T0 + days * DAY:
        api.clock.advance(HOUR)
        signals.run_once(services)
    first = (SIGNALS_T0 // tf + 1) * tf  # the watch starts at the next close of its timeframe
    expected = _expected_signal_times(api, entry, timeframe, first, SIGNALS_T0 + days * DAY - tf)
    got = _ok(api.user("active_signals", {}, token=b))["signals"]
    got += _ok(api.user("signal_history", {"page_size": 50}, token=b))["signals"]
    with services.store.read() as conn:
        rows = conn.execute(signal_queries.signals.select()).all()
    at = {r.position_key: int(r.signal_ms) for r in rows}
    times = sorted({at[s["position_key"]] for s in got})
    assert len(expected) >= 2
    assert times == expected  # every position the backtest of the resampled series places, delivered
    assert all(t % (tf * 1000) == 0 for t in times)  # on the timeframe's own candles
    notes = _ok(api.user("notifications_list", {"limit": 100}, token=b))["notifications"]
    assert len([n for n in notes if n["event_type"] == "signal_opened"]) == len(expected)
    assert b_id != _a_id


def test_a_timeframe_no_stored_series_can_serve_is_refused_at_publish_and_at_subscribe(
    settings: Settings, make_api: Any, signals_market: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # BTC and ETH with 1h candles only: a 15m series cannot be resampled from them
    for symbol in ("BTCUSDT", "ETHUSDT"):
        hours = pl.read_parquet(signals_market / "crypto" / symbol / "1h.parquet")
        DataStore(tmp_path / "store").write_klines("crypto", symbol, "1h", hours)
    monkeypatch.setenv("SIGNAL_POLL_SECONDS", "0")
    api = make_api(settings.replace(data_dir=tmp_path / "store"), clock=ManualClock(SIGNALS_T0))
    a = _generated(api, "fifteen", "15m")
    refused = _publish(api, a, "fifteen", ["BTC", "ETH"])
    assert refused.status_code == 400, refused.text
    assert refused.json()["message"] == "no requested coin can be listed"
    unavailable = "timeframe_unavailable"
    assert refused.json()["rejected_coins"] == {"BTC": unavailable, "ETH": unavailable}
    assert signals.run_once(api.app.state.services)["watches"] == 0

    # a listing that was published while the store could serve it (1m candles since removed)
    _c_id, c = creator(api, ["BTC"], name="hourly")
    listing = _ok(_publish(api, c, "hourly", ["BTC", "ETH"]))
    for symbol in ("BTCUSDT", "ETHUSDT"):  # the store now holds only 4h: 1h cannot be served
        (tmp_path / "store" / "crypto" / symbol / "1h.parquet").rename(
            tmp_path / "store" / "crypto" / symbol / "4h.parquet"
        )
    b_id, b = _subscriber(api)
    market.catalog_of(api.app.state.services).refresh()
    no = api.user(
        "marketplace_subscribe", {"listing_id": listing["listing_id"], "selected_coins": ["BTC"]}, token=b
    )
    assert no.status_code == 400, no.text
    assert (no.json()["reason"], no.json()["coins"], no.json()["timeframe"]) == (
        "timeframe_unavailable",
        ["BTC"],
        "1h",
    )
    with api.app.state.services.store.read() as conn:
        assert credits.balance(conn, b_id) == 20  # nothing charged
