"""Times as users write them (seconds, datetimes, ISO strings) and a portfolio's ``end_ts``."""

from __future__ import annotations

from datetime import UTC, date, datetime

import numpy as np
import polars as pl
import pytest

import svc_engine as sv
from svc_engine.data import DataStore
from svc_engine.data.times import ms_columns, to_seconds
from svc_engine.research.demo import START_MS, random_walk

STRATEGY = "RSI(14) crosses above 35"


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> DataStore:
    data = DataStore(tmp_path_factory.mktemp("times-store"))
    for n, symbol in enumerate(("AAAUSDT", "BBBUSDT")):
        data.write_klines("crypto", symbol, "1h", random_walk(1_200, seed=n + 3))
    return data


def test_to_seconds_reads_every_spelling() -> None:
    day = START_MS / 1000
    assert to_seconds("2024-01-01") == to_seconds(datetime(2024, 1, 1)) == to_seconds(date(2024, 1, 1)) == day
    assert to_seconds("2024-01-01T02:00:00+02:00") == day
    assert to_seconds(datetime(2024, 1, 1, tzinfo=UTC)) == to_seconds(np.datetime64("2024-01-01")) == day
    assert to_seconds("1704067200") == day
    with pytest.raises(ValueError, match="looks like Unix milliseconds"):
        to_seconds(START_MS)
    with pytest.raises(ValueError, match="neither Unix seconds nor an ISO"):
        to_seconds("next tuesday")


def test_backtest_takes_iso_strings_and_datetimes(store: DataStore) -> None:
    t0 = START_MS / 1000
    day = 86_400
    seconds = sv.backtest(STRATEGY, "AAAUSDT", "1h", t0 + 5 * day, t0 + 30 * day, store=store, spread_pct=0)
    iso = sv.backtest(
        STRATEGY, "AAAUSDT", "1h", "2024-01-06", datetime(2024, 1, 31), store=store, spread_pct=0
    )
    assert iso.summary == seconds.summary and iso.trades.equals(seconds.trades)


def test_portfolio_takes_end_ts_and_uses_no_candle_after_it(store: DataStore) -> None:
    full = sv.portfolio(STRATEGY, ["AAAUSDT", "BBBUSDT"], "1h", store=store, spread_pct=0)
    cut = sv.portfolio(
        STRATEGY,
        ["AAAUSDT", "BBBUSDT"],
        "1h",
        start_ts="2024-01-03",
        end_ts="2024-01-20",
        store=store,
        spread_pct=0,
    )
    eq = ms_columns(cut.equity)["open_time"]
    assert eq[0] == START_MS + 2 * 86_400_000 and eq[-1] == START_MS + 19 * 86_400_000
    assert ms_columns(cut.trades)["exit_time"].max() <= eq[-1]
    assert full.equity.height == 1_200 and cut.equity.height == 17 * 24 + 1
    with pytest.raises(ValueError, match="inverted range"):
        sv.portfolio(STRATEGY, ["AAAUSDT"], "1h", start_ts="2024-02-01", end_ts="2024-01-01", store=store)


def test_portfolio_range_equals_a_frame_run_of_the_same_candles(store: DataStore) -> None:
    """With one coin, divide 1: the portfolio over a range equals the single-coin backtest of it."""
    p = sv.portfolio(
        STRATEGY, ["AAAUSDT"], "1h", start_ts="2024-01-03", end_ts="2024-01-20", store=store, spread_pct=0
    )
    b = sv.backtest(STRATEGY, "AAAUSDT", "1h", "2024-01-03", "2024-01-20", store=store, spread_pct=0)
    assert p.summary["final_balance"] == pytest.approx(b.summary["final_balance"], rel=1e-12)
    assert p.trades.drop("coin").select(pl.exclude("balance")).equals(b.trades.select(pl.exclude("balance")))


def test_result_times_say_their_unit_in_the_dtype_and_the_api_shape_keeps_milliseconds(
    store: DataStore,
) -> None:
    # Times go in as seconds (or dates) and come out as datetimes: milliseconds, UTC, in the dtype.
    r = sv.backtest(STRATEGY, "AAAUSDT", "1h", "2024-01-06", "2024-01-31", store=store, spread_pct=0)
    p = sv.portfolio(
        STRATEGY, ["AAAUSDT", "BBBUSDT"], "1h", start_ts="2024-01-06", end_ts="2024-01-31", store=store
    )
    ms = pl.Datetime("ms", "UTC")
    for frame, names in (
        (r.trades, ("signal_time", "fill_time", "exit_time")),
        (r.all_positions, ("signal_time",)),
        (r.equity, ("open_time",)),
        (p.trades, ("fill_time", "exit_time")),
        (p.equity, ("open_time",)),
    ):
        assert all(frame.schema[name] == ms for name in names)
    assert r.equity["open_time"][0] == datetime(2024, 1, 6, tzinfo=UTC)
    first = r.trades.row(0, named=True)
    # The API's JSON shape keeps Unix milliseconds.
    assert r.to_dict()["trades"][0]["fill_time"] == int(first["fill_time"].timestamp() * 1000)
    assert p.to_dict()["trades"][0]["exit_time"] == ms_columns(p.trades)["exit_time"][0]
