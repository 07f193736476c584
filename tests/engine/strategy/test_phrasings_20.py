"""Phrasings of issue 20 with the signals they must give on small hand-made series: sequences within a
window, which candles 'the last N' cover, moves, gaps, margins, grouping and its precedence."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from svc_engine.strategy import StrategyCompileError, compile_strategy
from svc_engine.strategy import ast as A
from svc_engine.strategy.compiler import Context


def frame(close: list[float], **cols: list[float]) -> pl.DataFrame:
    n = len(close)
    data = {"open_time": [i * 3_600_000 for i in range(n)], "close": close}
    for name in ("open", "high", "low"):
        data[name] = cols.get(name, close)
    data["volume"] = cols.get("volume", [1.0] * n)
    return pl.DataFrame(data).select("open_time", "open", "high", "low", "close", "volume")


def fires(text: str, k: pl.DataFrame) -> list[int]:
    entry = compile_strategy(text).entry
    return np.flatnonzero(Context(k).truth(entry)).tolist()


def test_then_means_within_a_window_of_10_candles_by_default() -> None:
    # close: dips below 10 at 2, back above at 5, below again at 7, above at 20 (13 candles later)
    close = [11, 11, 9, 9, 9, 11, 11, 9] + [9] * 12 + [11, 11]
    k = frame([float(c) for c in close])
    assert fires("close crosses below 10 and then crosses back above 10", k) == [5]
    assert fires("close crosses above 10 within 3 candles after close crosses below 10", k) == [5]
    assert fires("close crosses above 10 within 2 candles after close crosses below 10", k) == []
    assert fires("close crosses below 10 then within 20 candles close crosses above 10", k) == [5, 20]
    # "right after": the previous candle only.
    assert fires("close is above 10 right after close is below 10", k) == [5, 20]


def test_last_n_candles_compared_with_the_current_candle_are_the_n_before_it() -> None:
    high = [5.0, 6.0, 7.0, 6.5, 8.0, 7.0]
    k = frame([h - 0.5 for h in high], high=high, low=[h - 1 for h in high])
    # close 7.5 at 4 is above the highs of candles 1..3 (max 7)
    assert fires("close is above the highest high of the last 3 candles", k) == [4]
    assert fires("close is above the highest high of the previous 3 candles", k) == [4]
    assert fires("close breaks above the 3-candle high", k) == [4]
    assert fires("close makes a new 3-candle high", k) == [4]  # closes 4.5 5.5 6.5 6 7.5: 7.5 > 6.5
    with pytest.raises(StrategyCompileError, match="can never be true: the range includes the current"):
        compile_strategy("close is above the highest high of the last 3 candles including the current candle")


def test_last_n_in_a_stop_level_includes_the_signal_candle() -> None:
    s = compile_strategy("close above 1", None, "stop loss at the lowest low of the last 10 candles")
    assert s.sl == A.LevelTarget(A.Ind("min", (10,), "", A.Field("low")))
    s = compile_strategy("close above 1", None, "stop loss at the lowest low of the previous 10 candles")
    assert s.sl == A.LevelTarget(A.Lag(A.Ind("min", (10,), "", A.Field("low")), 1))


def test_moves_gaps_and_margins() -> None:
    k = frame([100.0, 103.0, 101.0, 96.0, 97.0], open=[100.0, 101.5, 103.0, 100.0, 95.0])
    assert fires("price rises 2% in one candle", k) == [1]  # +3%
    assert fires("price drops 5% in the last 3 candles", k) == [4]  # 97 / 103 - 1 = -5.8%
    assert fires("price drops by 4% in one candle", k) == [3]  # 96 / 101 - 1 = -4.95%
    # open vs previous close: 101.5 / 100 (+1.5%), 103 / 103, 100 / 101 (-0.99%), 95 / 96 (-1.04%)
    assert fires("price gaps up by 1%", k) == [1]
    assert fires("price gaps down by 1%", k) == [4]
    assert fires("price gaps down", k) == [3, 4]
    assert fires("price gaps up", k) == [1]
    sma = "SMA(2)"  # 101.5, 102, 98.5, 96.5
    assert fires(f"close is above {sma} by at least 1%", k) == [1]  # 103 >= 101.5 * 1.01
    assert fires(f"close is below {sma} by at least 2%", k) == [3]  # 96 <= 98.5 * 0.98 = 96.53
    assert fires(f"close is at least 0.5 points above {sma}", k) == [1, 4]
    assert compile_strategy(f"close is above {sma} by more than 1%").entry == A.Compare(
        ">", A.Field("close"), A.PctOff(1.0, A.Ind("sma", (2,)))
    )


R, E, V = "RSI(14) is below 30", "close is above EMA(200)", "volume is above 1000"
M = "MACD line(12, 26, 9) is above 0"


def entry(text: str) -> A.Node:
    return compile_strategy(text).entry


@pytest.mark.parametrize(
    ("text", "same_as"),
    [
        # 'and' binds tighter than 'or'
        (f"{R} or {E} and {V}", f"{R} or ({E} and {V})"),
        (f"{R} and {E} or {V}", f"({R} and {E}) or {V}"),
        # 'not' binds tighter than 'and'
        (f"not {R} and {E}", f"(not {R}) and {E}"),
        # 'after' (and 'then') binds tighter than 'and' / 'or'
        (f"{R} and {E} after {V}", f"{R} and ({E} after {V})"),
        (f"{V} then {E} or {R}", f"({E} after {V}) or {R}"),
        # parentheses group at any depth, and 'not' applies to a group
        (f"not ({R} or ({E} and not {V}))", f"not (({R}) or (({E}) and (not {V})))"),
        (f"(({R} or {E}) and ({V} or {M}))", f"({R} or {E}) and ({V} or {M})"),
        # 'both ... and', 'either ... or', 'while' and ',' are 'and'/'or' too
        (f"both {R} and {E}", f"{R} and {E}"),
        (f"either {R} or {E}", f"{R} or {E}"),
        (f"{R} while {E}, {V}", f"{R} and {E} and {V}"),
    ],
)
def test_precedence(text: str, same_as: str) -> None:
    assert entry(text) == entry(same_as)


def test_precedence_trees() -> None:
    r, e, v = entry(R), entry(E), entry(V)
    assert entry(f"{R} or {E} and {V}") == A.Or((r, A.And((e, v))))
    assert entry(f"not {R} and {E}") == A.And((A.Not(r), e))
    assert entry(f"{R} and {E} after {V}") == A.And((r, A.After(e, v, 10)))
    assert entry(f"not ({R} or {E})") == A.Not(A.Or((r, e)))


def hourly(days: int) -> pl.DataFrame:
    n = 24 * days
    close = [100.0 + i for i in range(n)]
    return pl.DataFrame(
        {
            "open_time": [i * 3_600_000 for i in range(n)],
            "open": close,
            "high": [c + 1 for c in close],
            "low": [c - 1 for c in close],
            "close": close,
            "volume": [1.0] * n,
        }
    )


def test_a_higher_timeframe_value_is_known_only_after_its_candle_closed() -> None:
    k = hourly(3)
    daily_close = Context(k).values(A.Tf(A.Field("close"), "1d"))
    assert np.isnan(daily_close[:23]).all()
    # the hour 23:00-24:00 closes day 0: from its close on, the daily close is that candle's close
    assert daily_close[23:47].tolist() == [123.0] * 24 and daily_close[47:71].tolist() == [147.0] * 24
    assert daily_close[71] == 171.0
    daily_high = Context(k).values(A.Tf(A.Field("high"), "1d")).tolist()
    assert daily_high[23] == 124.0 and daily_high[47] == 148.0


def test_a_higher_timeframe_never_looks_ahead() -> None:
    k = hourly(12)
    node = A.Compare(">", A.Tf(A.Field("close"), "1d"), A.Tf(A.Ind("sma", (3,)), "1d"))
    whole = Context(k).truth(node)
    assert whole.any()
    for cut in (30, 100, 200, 250):
        future = k.with_columns(
            pl.when(pl.int_range(pl.len()) > cut).then(pl.col(c) * 0.5).otherwise(pl.col(c)).alias(c)
            for c in ("open", "high", "low", "close")
        )
        changed = Context(future)
        assert np.array_equal(changed.truth(node)[: cut + 1], whole[: cut + 1])
        sma = A.Tf(A.Ind("sma", (3,)), "1d")
        values = changed.values(sma)[: cut + 1]
        assert np.array_equal(values, Context(k).values(sma)[: cut + 1], equal_nan=True)


@pytest.mark.parametrize(
    ("text", "wording"),
    [
        ("the daily close is above the 50-day SMA", "daily close is above daily SMA(50)"),
        ("on the 4h chart RSI is above 50", "4h RSI(14) is above 50"),
        ("RSI is above 50 on the 4h chart", "4h RSI(14) is above 50"),
        ("close is above the daily SMA(50)", "close is above daily SMA(50)"),
        ("on the 4-hour chart MACD histogram turns positive", "4h MACD histogram(12, 26, 9) crosses above 0"),
        ("weekly close crosses above weekly SMA(20)", "weekly close crosses above weekly SMA(20)"),
    ],
)
def test_higher_timeframe_words(text: str, wording: str) -> None:
    strategy = compile_strategy(text)
    assert strategy.wording["entry"] == wording
    assert compile_strategy(wording) == strategy


def test_a_higher_timeframe_on_shorter_candles_only() -> None:
    k = hourly(3)
    with pytest.raises(ValueError, match="a 15m value needs candles of 15m or shorter"):
        Context(k).values(A.Tf(A.Field("close"), "15m"))
    with pytest.raises(StrategyCompileError, match="trend lines and day ends are not taken on another"):
        compile_strategy("on the daily chart a trend line breaks upward")


def test_an_event_on_a_higher_timeframe_fires_when_its_candle_closes() -> None:
    k = hourly(3)  # rising: every daily candle is green, and 2 in a row from day 1 on
    # a comparison takes its values from the latest closed daily candle: true from its close on
    green = compile_strategy("on the daily chart the candle is green").entry
    assert green == A.Compare(">", A.Tf(A.Field("close"), "1d"), A.Tf(A.Field("open"), "1d"))
    assert np.flatnonzero(Context(k).truth(green)).tolist() == list(range(23, 72))
    # an event (a run of candles, a pattern, a new high) fires on the candle that closes the daily one
    two = compile_strategy("on the daily chart 2 green candles in a row")
    assert np.flatnonzero(Context(k).truth(two.entry)).tolist() == [47, 71]
    assert two.wording["entry"] == "on the daily chart 2 green candles in a row"
    assert compile_strategy(two.wording["entry"]) == two
    # no look-ahead: changing what follows a candle never changes it
    future = k.with_columns(
        pl.when(pl.int_range(pl.len()) > 50)
        .then(pl.col("open") + 500.0)
        .otherwise(pl.col("open"))
        .alias("open")
    )
    assert np.array_equal(Context(future).truth(two.entry)[:51], Context(k).truth(two.entry)[:51])
