"""Long and short setups in one futures strategy: both sides trade, one position at a time."""

from __future__ import annotations

import polars as pl
import pytest

import svc_engine as sv
from svc_engine.executors import LocalExecutor
from svc_engine.research.demo import random_walk


@pytest.fixture(scope="module")
def klines() -> pl.DataFrame:
    return random_walk(3_000, seed=12)


@pytest.fixture(scope="module")
def both():
    return sv.long_short("RSI(14) crosses above 30", "RSI(14) crosses below 70", tp="2%", sl="1.5%")


def test_both_sides_trade_one_position_at_a_time(klines, both) -> None:
    r = sv.backtest(both, klines, "1h", spread_pct=0.05, min_candles_between_signals=1)
    sides = set(r.trades["side"].to_list())
    assert sides == {"long", "short"}
    t = r.trades.sort("fill_time")
    assert (t["fill_time"][1:] >= t["exit_time"][:-1]).all()  # never two positions at once
    assert r.signal_counts["skipped_busy"] > 0
    short = t.filter(pl.col("side") == "short")
    assert (short["tp_price"] < short["limit_price"]).all() and (
        short["sl_price"] > short["limit_price"]
    ).all()


def test_equals_the_simulation_of_both_sides_signals(klines, both) -> None:
    signals = pl.concat([both.long.evaluate(klines), both.short.evaluate(klines)]).sort(
        "open_time", maintain_order=True
    )
    direct = sv.simulate(klines, signals, spread_pct=0.05, market_type="futures")
    r = sv.backtest(both, klines, "1h", spread_pct=0.05, market_type="futures")
    assert r.summary == direct.summary and r.trades.equals(direct.trades)


def test_chunked_equals_one_piece_and_leverage_applies(klines, both) -> None:
    with LocalExecutor(max_workers=2) as ex:
        chunked = sv.backtest(
            both, klines, "1h", executor=ex, chunks=4, spread_pct=0, market_type="futures", leverage=3
        )
    whole = sv.backtest(both, klines, "1h", chunks=1, spread_pct=0, market_type="futures", leverage=3)
    assert chunked.trades.equals(whole.trades) and chunked.summary == whole.summary


def test_a_shared_candle_takes_the_long_side_first() -> None:
    k = pl.DataFrame(
        {
            "open_time": [0, 3_600_000],
            "open": [1.0, 1.0],
            "high": [2.0, 2.0],
            "low": [0.5, 0.5],
            "close": [1.5, 1.5],
            "volume": [1.0, 1.0],
        }
    )
    s = sv.long_short("close > open", "close > 1", tp="10%", sl="10%").evaluate(k)
    assert s["side"].to_list() == ["long", "short", "long", "short"]
    r = sv.simulate(k, s, spread_pct=0, market_type="futures", min_candles_between_signals=0)
    assert r.all_positions["fate"].to_list()[:2] == ["traded", "skipped_min_gap"]
