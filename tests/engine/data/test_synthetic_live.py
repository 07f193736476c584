"""The embedded market continued: the same candles however the time is stepped (a 3-hour outage
caught up in one pass equals a feed that never stopped), 1h the aggregation of 1m, weekdays only for
daily markets, valid candles that continue the stored closes."""

from __future__ import annotations

import shutil
from pathlib import Path

import polars as pl
import pytest

from svc_engine.data import DataStore, load_klines, resample, validate_klines
from svc_engine.data.synthetic import END_MS, generate_market
from svc_engine.data.synthetic_live import SyntheticContinuation

M, H, D = 60_000, 3_600_000, 86_400_000


@pytest.fixture(scope="module")
def market(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("embedded")
    generate_market(DataStore(root), small=True)
    return root


def _copy(market: Path, tmp_path: Path, name: str) -> DataStore:
    shutil.copytree(market, tmp_path / name)
    return DataStore(tmp_path / name)


def _feed(store: DataStore, until_ms: int) -> None:
    live = SyntheticContinuation(store)
    for tf, step in (("1m", M), ("1h", H)):
        newest = store.newest_open("crypto", "BTCUSDT", tf)
        assert newest is not None
        got = live.closed_klines("crypto", "BTCUSDT", tf, newest + step, until_ms)
        if got.height:
            store.append_klines("crypto", "BTCUSDT", tf, got)


def test_a_three_hour_outage_caught_up_at_once_equals_a_feed_that_never_stopped(
    market: Path, tmp_path: Path
) -> None:
    steady, caught_up = _copy(market, tmp_path, "steady"), _copy(market, tmp_path, "outage")
    for minute in range(0, 3 * 60 + 1, 7):  # a pass every 7 minutes, at uneven points of the hour
        _feed(steady, END_MS + minute * M)
    _feed(steady, END_MS + 3 * H)
    _feed(caught_up, END_MS + 3 * H)  # nothing for three hours, then one pass
    for tf in ("1m", "1h"):
        a = load_klines("BTCUSDT", tf, start_ts=END_MS // 1000, store=steady)
        b = load_klines("BTCUSDT", tf, start_ts=END_MS // 1000, store=caught_up)
        assert a.equals(b) and a.height == {"1m": 180, "1h": 3}[tf]
        validate_klines(load_klines("BTCUSDT", tf, store=steady), timeframe=tf)  # the whole series
    minutes = load_klines("BTCUSDT", "1m", start_ts=END_MS // 1000, store=steady)
    hours = load_klines("BTCUSDT", "1h", start_ts=END_MS // 1000, store=steady)
    assert hours.drop("volume").equals(resample(minutes, "1h").drop("volume"))
    before = load_klines("BTCUSDT", "1m", end_ts=END_MS // 1000 - 60, store=steady)["close"][-1]
    assert minutes["open"][0] == before  # the path starts at the stored close


def test_daily_markets_continue_on_weekdays_only(market: Path, tmp_path: Path) -> None:
    store = _copy(market, tmp_path, "daily")
    live = SyntheticContinuation(store)
    newest = store.newest_open("us_stocks", "AAPL", "1d")
    assert newest is not None
    week = live.closed_klines("us_stocks", "AAPL", "1d", newest + D, newest + 8 * D)
    days = (week["open_time"].dt.epoch("ms") // D + 3) % 7  # 0 = Monday
    assert week.height == 5 and days.to_list() == sorted(days.to_list()) and max(days) <= 4
    validate_klines(week, timeframe="1d")
    assert not live.serves("us_stocks", "AAPL", "1h")
    with pytest.raises(ValueError, match="does not continue us_stocks/AAPL 1h"):
        live.closed_klines("us_stocks", "AAPL", "1h", newest, newest + D)


def test_nothing_is_invented_before_a_candle_has_closed(market: Path) -> None:
    live = SyntheticContinuation(DataStore(market))
    assert live.closed_klines("crypto", "BTCUSDT", "1h", END_MS, END_MS + H - 1).height == 0
    one = live.closed_klines("crypto", "BTCUSDT", "1h", END_MS, END_MS + H)
    assert one["open_time"].dt.epoch("ms").to_list() == [END_MS]
    assert isinstance(one, pl.DataFrame)
