"""Candles and signals with ``open_time`` as integer Unix ms or any datetime give the same runs, and
the frames handed back say their unit: ``Datetime("ms", "UTC")`` (issue 19)."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal

import svc_engine as sv
from svc_engine.data import KlineValidationError
from svc_engine.data.times import TIME
from svc_engine.executors import SerialExecutor
from svc_engine.research.demo import START_MS, random_walk
from svc_engine.strategy.compiler import Context

STRATEGY = ("close crosses above SMA(20) and RSI(14) is above 50", "2%", "1.5%")
RULES = ("RSI(14) crosses above 40", "no take profit", "trailing stop 2%")
DAY_S = 86_400

DTYPES = [
    pl.Datetime("ms", "UTC"),
    pl.Datetime("ms"),
    pl.Datetime("us"),
    pl.Datetime("ns"),
    pl.Datetime("us", "UTC"),
    pl.Datetime("ns", "UTC"),
]


@pytest.fixture(scope="module")
def walk() -> pl.DataFrame:
    return random_walk(1_500, seed=7)


def with_ms(frame: pl.DataFrame) -> pl.DataFrame:
    """The frame as a user builds it: ``open_time`` as Int64 Unix milliseconds."""
    return frame.with_columns(pl.col("open_time").dt.epoch("ms"))


def with_dtype(frame: pl.DataFrame, dtype: pl.DataType) -> pl.DataFrame:
    """The same instants as a column of ``dtype``; a naive one holds UTC wall time."""
    t = pl.col("open_time")
    return frame.with_columns((t.dt.replace_time_zone(None) if dtype.time_zone is None else t).cast(dtype))


def same_run(a: sv.BacktestResult, b: sv.BacktestResult) -> None:
    assert a.summary == b.summary
    for name in ("trades", "all_positions", "equity"):
        assert_frame_equal(getattr(a, name), getattr(b, name))
    assert_frame_equal(a.klines, b.klines)


def test_signal_frames_are_time_whatever_the_klines_carry(walk: pl.DataFrame) -> None:
    strategy = sv.compile_strategy(*STRATEGY)
    want = strategy.evaluate(walk)
    assert want.schema["open_time"] == TIME and want.height > 5
    assert want["open_time"].is_in(walk["open_time"].implode()).all()
    assert_frame_equal(strategy.evaluate(with_ms(walk)), want)
    for dtype in DTYPES:
        assert_frame_equal(strategy.evaluate(with_dtype(walk, dtype)), want)
    exits = sv.compile_strategy(*RULES, exit_condition="exit when RSI(14) crosses below 60").evaluate(
        with_ms(walk)
    )
    assert exits.schema["open_time"] == TIME and (exits["side"] == "exit").sum() > 0
    assert exits["open_time"].is_sorted()


def test_context_reads_open_time_as_an_int64_view(walk: pl.DataFrame) -> None:
    t = Context(walk).array("open_time")
    assert t.dtype == np.int64 and t.flags.c_contiguous
    assert np.shares_memory(t, walk["open_time"].to_physical().to_numpy())
    assert t[:2].tolist() == [START_MS, START_MS + 3_600_000]
    assert Context(with_dtype(walk, pl.Datetime("ns"))).array("open_time").tolist() == t.tolist()


@pytest.mark.parametrize("dtype", [pl.Int64, *DTYPES], ids=str)
def test_backtests_of_int_ms_and_datetime_candles_agree(walk: pl.DataFrame, dtype: pl.DataType) -> None:
    strategy = sv.compile_strategy(*STRATEGY)
    start, end = START_MS // 1000 + 10 * DAY_S, START_MS // 1000 + 55 * DAY_S

    def run(frame: pl.DataFrame, **settings: object) -> sv.BacktestResult:
        return sv.backtest(strategy, frame, "1h", start, end, executor=SerialExecutor(), chunks=3, **settings)

    frame = with_ms(walk) if dtype == pl.Int64 else with_dtype(walk, dtype)
    want = run(walk)  # tier spread: from the candles' days, whatever their time type
    assert want.summary["total_trades"] > 0
    assert want.klines.schema["open_time"] == TIME and want.equity.schema["open_time"] == TIME
    same_run(run(frame), want)
    same_run(run(frame, spread_pct=0.05), run(walk, spread_pct=0.05))


def test_simulate_takes_signals_of_any_time_type(walk: pl.DataFrame) -> None:
    signals = sv.compile_strategy(*STRATEGY).evaluate(walk)
    want = sv.simulate(walk, signals, timeframe="1h")
    assert want.summary["total_trades"] > 0
    same_run(sv.simulate(with_ms(walk), with_ms(signals), timeframe="1h"), want)
    for dtype in (pl.Datetime("us"), pl.Datetime("ns", "UTC")):
        same_run(sv.simulate(with_dtype(walk, dtype), with_dtype(signals, dtype), timeframe="1h"), want)
    same_run(sv.simulate(with_ms(walk), signals, timeframe="1h"), want)


def test_floats_and_strings_are_still_refused(walk: pl.DataFrame) -> None:
    signals = sv.compile_strategy(*STRATEGY).evaluate(walk)
    as_float = pl.col("open_time").dt.epoch("ms").cast(pl.Float64)
    refused = "klines: schema: open_time must be integer ms or a datetime, got Float64"
    with pytest.raises(KlineValidationError, match=refused):
        sv.simulate(walk.with_columns(as_float), signals, timeframe="1h")
    with pytest.raises(ValueError, match="signals open_time must be integer Unix milliseconds or a datetime"):
        sv.simulate(walk, signals.with_columns(as_float), timeframe="1h")
    with pytest.raises(ValueError, match="signals open_time must be integer Unix milliseconds or a datetime"):
        sv.simulate(walk, signals.with_columns(pl.col("open_time").cast(pl.Utf8)), timeframe="1h")


def test_portfolio_and_sweep_of_datetime_frames_equal_those_of_int_ms(walk: pl.DataFrame) -> None:
    other = random_walk(1_500, seed=8, vol=0.015)
    strategy = sv.compile_strategy(*STRATEGY)
    frames = {"AAA": walk, "BBB": other}
    signals = {k: strategy.evaluate(v) for k, v in frames.items()}
    want = sv.simulate_portfolio(frames, signals, timeframe="1h", spread_pct=0.05)
    got = sv.simulate_portfolio(
        {k: with_dtype(v, pl.Datetime("us")) for k, v in frames.items()},
        {k: with_ms(v) for k, v in signals.items()},
        timeframe="1h",
        spread_pct=0.05,
    )
    assert got.summary == want.summary and got.trades.equals(want.trades) and got.equity.equals(want.equity)
    grid = ("RSI({n}) crosses above 35", {"n": [10, 14]})
    rows = sv.sweep(*grid, frames, "1h", executor=SerialExecutor(), spread_pct=0.05).rows
    naive = {k: with_dtype(v, pl.Datetime("ns")) for k, v in frames.items()}
    assert rows.height == 4
    assert_frame_equal(sv.sweep(*grid, naive, "1h", executor=SerialExecutor(), spread_pct=0.05).rows, rows)
    assert_frame_equal(
        sv.sweep(
            *grid,
            {k: with_ms(v) for k, v in frames.items()},
            "1h",
            executor=SerialExecutor(),
            spread_pct=0.05,
        ).rows,
        rows,
    )
