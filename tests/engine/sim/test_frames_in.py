"""Any frame in (issue #29): pandas and polars, backtesting.py's capitalised columns, times as
datetimes, Unix ms or Unix s (ambiguous ones refused), one schema error, the timeframe inferred or
checked against the data's spacing, and the market inferred from the instrument or the calendar."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest

import svc_engine as sv
from svc_engine.data.frames import as_klines
from svc_engine.data.schema import KlineValidationError

pd = pytest.importorskip("pandas")

DATASETS = Path(__file__).resolve().parents[4] / "shared" / "datasets"
STRATEGY = ("close crosses above SMA(20)", "3%", "2%")
HOUR = 3_600_000


def walk(n: int = 600, step: int = HOUR, start: int = 1_700_000_000_000, seed: int = 3) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    close = 100 * np.exp(np.cumsum(rng.normal(0, 0.01, n)))
    open_ = np.r_[100.0, close[:-1]]
    return pl.DataFrame(
        {
            "open_time": start + np.arange(n, dtype=np.int64) * step,
            "open": open_,
            "high": np.maximum(open_, close) * 1.004,
            "low": np.minimum(open_, close) * 0.996,
            "close": close,
            "volume": rng.uniform(1, 5, n),
        }
    )


def backtesting_py(k: pl.DataFrame) -> pd.DataFrame:
    """backtesting.py's form: capitalised columns, a DatetimeIndex."""
    frame = pd.DataFrame(
        {c.capitalize(): k[c].to_numpy() for c in ("open", "high", "low", "close", "volume")}
    )
    frame.index = pd.DatetimeIndex(k["open_time"].to_numpy().astype("datetime64[ms]"))
    return frame


def same(a: sv.BacktestResult, b: sv.BacktestResult) -> None:
    assert a.trades.height > 0
    assert a.summary == b.summary and a.trades.equals(b.trades) and a.equity.equals(b.equity)


def test_pandas_and_capitalised_frames_give_the_polars_run() -> None:
    k = walk()
    s = sv.compile_strategy(*STRATEGY)
    want = sv.simulate(k, s.evaluate(k), spread_pct=0.05)
    p = backtesting_py(k)
    same(sv.simulate(p, s.evaluate(p), spread_pct=0.05), want)
    same(sv.backtest(s, p, spread_pct=0.05), want)  # timeframe from the data
    with_column = p.reset_index(names="Date")  # a time column instead of the index
    same(sv.simulate(with_column, s.evaluate(with_column), spread_pct=0.05), want)
    caps = k.rename({c: c.capitalize() for c in k.columns if c != "open_time"}).rename({"open_time": "Time"})
    same(sv.simulate(caps, s.evaluate(caps), spread_pct=0.05), want)
    aware = p.tz_localize("UTC").tz_convert("America/New_York")  # the same instants in another zone
    same(sv.simulate(aware, s.evaluate(aware), spread_pct=0.05), want)
    assert s.evaluate(p).equals(s.evaluate(k))


def test_unix_seconds_are_detected_and_equal_milliseconds() -> None:
    k = walk()
    s = sv.compile_strategy(*STRATEGY)
    want = sv.simulate(k, s.evaluate(k), spread_pct=0.05)
    secs = k.with_columns(pl.col("open_time") // 1000)
    assert as_klines(secs)["open_time"].equals(as_klines(k)["open_time"])
    same(sv.simulate(secs, s.evaluate(secs), spread_pct=0.05), want)
    daily_1990s = walk(50, step=86_400, start=631_152_000)  # 1990-01-01 in seconds, one day apart
    assert as_klines(daily_1990s)["open_time"][0].isoformat() == "1990-01-01T00:00:00+00:00"


def test_ambiguous_and_impossible_integer_times_are_refused_with_the_reason() -> None:
    irregular = walk(3).with_columns(pl.Series("open_time", [1_700_000_000, 1_700_000_007, 1_700_000_100]))
    reason = (
        r"open_time is ambiguous: 1700000000 is 2023-11-14T22:13 in Unix seconds and 1970-01-20T16:13 in "
        r"milliseconds, and the spacing \(7\)"
    )
    with pytest.raises(KlineValidationError, match=reason):
        as_klines(irregular)
    micro = walk(3).with_columns(pl.col("open_time") * 1000)
    with pytest.raises(KlineValidationError, match="too large for Unix milliseconds or seconds"):
        sv.simulate(micro, pl.DataFrame(), spread_pct=0)


def test_a_wrong_schema_is_one_error_listing_expected_and_found() -> None:
    frame = pd.DataFrame({"Open": [1.0], "High": [1.0], "Close": [1.0]})
    expected = (
        r"klines: schema: klines lack columns \['open_time', 'low', 'volume'\]: expected columns "
        r"open_time \(or a time, timestamp, date or datetime column, or a pandas DatetimeIndex\), "
        r"open, high, low, close, volume \(any case\); found \['Open', 'High', 'Close'\]"
    )
    for call in (
        lambda: sv.simulate(frame, pl.DataFrame()),
        lambda: sv.compile_strategy("close > 1").evaluate(frame),
    ):
        with pytest.raises(KlineValidationError, match=expected):
            call()


def test_the_timeframe_is_inferred_and_a_wrong_one_refused_with_the_spacing() -> None:
    daily = walk(400, step=24 * HOUR)
    s = sv.compile_strategy(*STRATEGY)
    r = sv.simulate(daily, s.evaluate(daily), spread_pct=0.05)
    assert r.timeframe == "1d"
    assert r.summary == sv.simulate(daily, s.evaluate(daily), spread_pct=0.05, timeframe="1d").summary
    refused = (
        r"klines: timeframe '1h' disagrees with the data: its candles are 1d apart "
        r"\(spacing measured 86,400,000 ms"
    )
    with pytest.raises(ValueError, match=refused):
        sv.simulate(daily, s.evaluate(daily), spread_pct=0.05, timeframe="1h")
    with pytest.raises(ValueError, match=refused):
        sv.backtest(s, daily, "1h", spread_pct=0.05)


def test_the_market_comes_from_the_instrument_or_the_calendar_and_is_stated() -> None:
    s = sv.compile_strategy(*STRATEGY)
    every_day = walk(400, step=24 * HOUR)
    crypto = sv.simulate(every_day, s.evaluate(every_day), spread_pct=0.05)
    assert crypto.summary["market"] == "crypto" and "Saturday" in crypto.summary["market_note"]
    days = every_day["open_time"].cast(sv.data.schema.SCHEMA["open_time"]).dt.weekday()
    weekdays = every_day.filter((days < 6).to_numpy())  # no Saturday, no Sunday: a stock calendar
    stock = sv.simulate(weekdays, s.evaluate(weekdays), spread_pct=0.05)
    assert stock.summary["market"] == "us_stocks" and "252 sessions" in stock.summary["market_note"]
    asked = sv.simulate(weekdays, s.evaluate(weekdays), spread_pct=0.05, market="us_stocks")
    assert "market" not in asked.summary  # given: nothing to state
    assert stock.summary["sharpe_ratio"] == asked.summary["sharpe_ratio"]
    over_365 = sv.simulate(weekdays, s.evaluate(weekdays), spread_pct=0.05, market="crypto")
    ratio = over_365.summary["sharpe_ratio"] / stock.summary["sharpe_ratio"]
    assert ratio == pytest.approx(
        (365.25 / 252) ** 0.5, rel=1e-12
    )  # annualised over 365.25 days only if asked
    by_name = sv.simulate(weekdays, s.evaluate(weekdays), spread_pct=0.05, symbol="AAPL")
    assert (
        "market" not in by_name.summary and by_name.summary["sharpe_ratio"] == asked.summary["sharpe_ratio"]
    )


@pytest.mark.skipif(
    not (DATASETS / "us_stocks" / "AAPL-1d.parquet").exists(), reason="shared datasets absent"
)
def test_a_real_stock_frame_in_backtesting_py_form() -> None:
    k = pl.read_parquet(DATASETS / "us_stocks" / "AAPL-1d.parquet").tail(2000)
    s = sv.compile_strategy(*STRATEGY)
    want = sv.simulate(k, s.evaluate(k), timeframe="1d", market="us_stocks", spread_pct=0.05)
    got = sv.simulate(backtesting_py(k), s.evaluate(backtesting_py(k)), spread_pct=0.05)
    assert got.summary.pop("market") == "us_stocks" and "weekday sessions" in got.summary.pop("market_note")
    assert got.summary == want.summary and got.trades.equals(want.trades)


def test_a_few_stray_candles_do_not_change_the_timeframe() -> None:
    k = walk(400, step=4 * HOUR)
    t = k["open_time"].to_numpy().copy()
    t[100:] -= 2 * HOUR  # one step of 2 h in a 4 h series (NEOBTC-4h and ONTBTC-4h have such)
    stray = k.with_columns(pl.Series("open_time", t))
    s = sv.compile_strategy(*STRATEGY)
    assert sv.simulate(stray, s.evaluate(stray), spread_pct=0.05).timeframe == "4h"
    assert sv.simulate(stray, s.evaluate(stray), spread_pct=0.05, timeframe="4h").trades.height > 0


def test_backtesting_py_goog_goes_in_as_it_is() -> None:
    goog = pytest.importorskip("backtesting.test").GOOG  # pandas, DatetimeIndex, Open High Low Close Volume
    s = sv.compile_strategy("SMA(10) crosses above SMA(20)", "5%", "3%")
    r = sv.simulate(goog, s.evaluate(goog))
    assert (r.timeframe, r.summary["market"], r.summary["total_trades"]) == ("1d", "us_stocks", 43)
    assert sv.backtest(s, goog).summary == r.summary
    with pytest.raises(ValueError, match="its candles are 1d apart"):
        sv.simulate(goog, s.evaluate(goog), timeframe="1h")
