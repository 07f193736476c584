"""Compiled strategies: signals and their prices, warm-up, JSON, the Python builder."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import polars as pl
import pytest

import svc_engine.strategy as sv
from svc_engine.strategy import Strategy, StrategyCompileError, compile_strategy


def klines(close: list[float], *, spread: float = 1.0) -> pl.DataFrame:
    n = len(close)
    return pl.DataFrame(
        {
            "open_time": [1_700_000_000_000 + i * 60_000 for i in range(n)],
            "open": close,
            "high": [c + spread for c in close],
            "low": [c - spread for c in close],
            "close": close,
            "volume": [10.0] * n,
        }
    )


CLOSES = [10.0, 11.0, 12.0, 11.0, 10.0, 12.0, 13.0, 12.0, 14.0, 15.0]


def test_signals_with_default_exits() -> None:
    s = compile_strategy("close crosses above SMA(3)")
    out = s.evaluate(klines(CLOSES))
    # SMA(3): -, -, 11, 11.33, 11, 11, 11.67, 12.33, 13, 13.67 -> close crosses above at 5 and 8
    assert out.schema == pl.Schema(
        {
            "open_time": pl.Datetime("ms", "UTC"),  # from the klines' Int64 Unix ms
            "side": pl.Utf8,
            "limit_price": pl.Float64,
            "tp_price": pl.Float64,
            "sl_price": pl.Float64,
        }
    )
    assert out["open_time"].dt.epoch("ms").to_list() == [1_700_000_000_000 + i * 60_000 for i in (5, 8)]
    assert out["side"].to_list() == ["long", "long"]
    assert out["limit_price"].to_list() == [12.0, 14.0]
    assert out["tp_price"].to_list() == pytest.approx([12.24, 14.28], rel=1e-15)
    assert out["sl_price"].to_list() == pytest.approx([11.88, 13.86], rel=1e-15)


def test_no_signal_before_candle_count() -> None:
    s = compile_strategy("close is above 0")
    assert s.candle_count == 1
    assert s.evaluate(klines(CLOSES)).height == 10
    s = compile_strategy("close is above SMA(4)")
    assert s.candle_count == 4
    # Not of an undefined comparison would be true; the warm-up mask keeps it silent.
    s = compile_strategy("close is not above SMA(4)")
    mask = s.signal_mask(klines(CLOSES))
    assert not mask[:3].any()
    # SMA(4) from index 3: 11, 11, 11.25, 11.5, 11.75, 12.75, 13.5
    assert mask.tolist()[3:] == [True, True, False, False, False, False, False]


def test_short_side_exits_and_entry_price() -> None:
    s = compile_strategy(
        "close crosses below SMA(3), sell 1% above close",
        "4%",
        "2%",
        market_type="futures",
        position_side="short",
    )
    out = s.evaluate(klines(CLOSES))
    assert out["open_time"].dt.epoch("ms").to_list() == [1_700_000_000_000 + i * 60_000 for i in (3, 7)]
    limit = np.array([11.0, 12.0]) * 1.01
    assert out["side"].to_list() == ["short", "short"]
    np.testing.assert_allclose(out["limit_price"].to_numpy(), limit, rtol=1e-15)
    np.testing.assert_allclose(out["tp_price"].to_numpy(), limit * 0.96, rtol=1e-15)
    np.testing.assert_allclose(out["sl_price"].to_numpy(), limit * 1.02, rtol=1e-15)


def test_atr_level_and_risk_reward_exits() -> None:
    k = klines(CLOSES)
    s = compile_strategy(
        "close crosses above SMA(3)", "risk reward 2", "stop loss at the lowest low of the last 3 candles"
    )
    out = s.evaluate(k)
    # signals at 5 and 8; lowest low of candles 3..5 = 9, of 6..8 = 11; stop distance 3; TP = L + 2 * 3
    assert out["sl_price"].to_list() == [9.0, 11.0]
    assert out["tp_price"].to_list() == [18.0, 20.0]
    s = compile_strategy("close crosses above SMA(3)", "take profit 2 x ATR(2)", "1.5 x ATR(2) below entry")
    out = s.evaluate(k)
    # TR = max(2, |close change| + 1): 2 2 2 2 3 2 2 3 from index 1
    # ATR(2): index 2 mean(2, 2) = 2, then Wilder: 2, 2, 2.5, 2.25, 2.125, 2.5625
    assert out["tp_price"].to_list() == [12.0 + 2 * 2.5, 14.0 + 2 * 2.5625]
    assert out["sl_price"].to_list() == [12.0 - 1.5 * 2.5, 14.0 - 1.5 * 2.5625]
    assert s.candle_count == 4
    assert s.indicators == ["ATR(2)", "SMA(3)"]


def test_level_take_profit() -> None:
    s = compile_strategy(
        "close crosses above SMA(3)", "take profit at the highest high of the last 5 candles"
    )
    out = s.evaluate(klines(CLOSES))
    assert out["tp_price"].to_list() == [13.0, 15.0]


def test_empty_result_keeps_schema() -> None:
    out = compile_strategy("RSI(14) is above 50").evaluate(klines(CLOSES))
    assert out.height == 0
    assert out.columns == ["open_time", "side", "limit_price", "tp_price", "sl_price"]


def test_missing_columns_are_refused() -> None:
    with pytest.raises(ValueError, match="klines lack column"):
        compile_strategy("close above 1").evaluate(pl.DataFrame({"open_time": [0], "close": [1.0]}))


def test_json_is_deterministic_and_round_trips() -> None:
    text = (
        "the 50 EMA crosses over the 200 EMA while volume is above its 20-candle average, "
        "limit at 0.5% below close"
    )
    a = compile_strategy(text, "risk reward 2", "stop loss 2 x ATR(14)")
    b = compile_strategy(text, "risk reward 2", "stop loss 2 x ATR(14)")
    assert a.to_json().encode() == b.to_json().encode()
    assert Strategy.from_json(a.to_json()) == a
    assert Strategy.from_json(a.to_json()).to_json() == a.to_json()
    data = json.loads(a.to_json())
    assert data["version"] == 1
    assert data["entry"]["node"] == "And"
    assert data["tp"] == {"node": "RiskReward", "ratio": 2.0}


def test_every_phrasing_round_trips_through_json() -> None:
    lines = (Path(__file__).parent / "fixtures" / "phrasings.txt").read_text().splitlines()
    count = 0
    for line in lines:
        if line.startswith("entry | long | "):
            text = line.split(" | ", 2)[2].rsplit(" => ", 1)[0]
            s = compile_strategy(text)
            assert Strategy.from_json(s.to_json()) == s
            count += 1
    assert count > 100


def test_from_json_refuses_other_versions_and_nodes() -> None:
    good = json.loads(compile_strategy("close above 1").to_json())
    with pytest.raises(ValueError, match="unsupported strategy version 2"):
        Strategy.from_json(json.dumps({**good, "version": 2}))
    with pytest.raises(ValueError, match="not a strategy node"):
        Strategy.from_json(json.dumps({**good, "entry": {"node": "Eval", "code": "1"}}))


def test_builder_builds_the_parser_tree() -> None:
    built = sv.rsi(14).crosses_above(30) & (sv.close > sv.ema(200))
    assert built.node == compile_strategy("RSI(14) crosses above 30 and close is above EMA(200)").entry
    cases = {
        "volume is above 2 times its 20-candle average": sv.volume > 2 * sv.sma(20, sv.volume),
        "close crosses above upper Bollinger band(20, 2) after 3 red candles in a row": (
            sv.close.crosses_above(sv.bollinger(20, 2, "upper")).after(sv.candles(3, "red"))
        ),
        "MACD histogram turns positive or not close is within 2% of SMA(100)": (
            sv.macd(output="histogram").crosses_above(0) | ~sv.close.within(2, sv.sma(100))
        ),
        "price makes a new 55-candle high": sv.close.new_high(55),
        "close is 2% above previous high": sv.close > sv.high.ago(1).pct_above(2),
        "a trend line breaks upward": sv.trend("break_up"),
        "RSI(14) is between 40 and 60": sv.rsi().between(40, 60),
        "stochastic %D is below 20 and Williams %R(14) is above -80": (sv.stoch(output="%d") < 20)
        & (sv.williams_r() > -80),
    }
    for text, cond in cases.items():
        assert cond.node == compile_strategy(text).entry, text


def test_from_parts_accepts_builder_exits() -> None:
    s = Strategy.from_parts(
        sv.close > sv.sma(50), tp=sv.risk_reward(3), sl=sv.level(sv.lowest(10)), entry_price=sv.ema(20)
    )
    assert s.wording == {
        "entry": "close is above SMA(50), limit at EMA(20)",
        "tp": "take profit at risk reward 3",
        "sl": "stop loss at lowest low of the last 10 candles including the current candle",
    }
    assert s == compile_strategy(
        "close is above SMA(50), limit at EMA(20)",
        "risk reward 3",
        "stop loss at the lowest low of the last 10 candles",
    )
    with pytest.raises(StrategyCompileError, match="a long stop loss must lie below the entry"):
        Strategy.from_parts(sv.close > sv.sma(50), sl=sv.level(sv.highest(10)))
    with pytest.raises(StrategyCompileError, match="expected a condition"):
        compile_strategy(sv.close)


def test_candle_count_examples() -> None:
    assert compile_strategy("RSI(14) crosses above 30").candle_count == 16
    assert compile_strategy("MACD signal crosses above 0").candle_count == 35
    assert compile_strategy("close is above previous close").candle_count == 2
    assert compile_strategy("3 green candles in a row").candle_count == 3
    assert compile_strategy("price makes a new 55-candle high").candle_count == 56
    assert compile_strategy("close above SMA(5)", "take profit 2 x ATR(30)").candle_count == 31


def test_division_by_zero_is_quiet() -> None:
    k = klines([1.0, 1.0, 1.0, 1.0], spread=0.0)
    # 1 / 0 = inf is above 0; 0 / 0 = NaN compares false; neither warns (warnings are errors here)
    assert compile_strategy("close divided by (high minus low) is above 0").evaluate(k).height == 4
    assert compile_strategy("(high minus low) divided by (high minus low) is above 0").evaluate(k).height == 0


def test_json_bytes_do_not_depend_on_the_process() -> None:
    import subprocess
    import sys

    code = (
        "from svc_engine.strategy import compile_strategy as c;"
        "print(c('(RSI(14) below 30 or stochastic %K below 20) and close > SMA(200), buy 0.5% below close',"
        "'take profit at the upper Keltner channel', '1.5 x ATR(14) below entry').to_json())"
    )
    outputs = {
        subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            check=True,
            env={"PYTHONHASHSEED": seed, "PATH": ""},
        ).stdout
        for seed in ("1", "2")
    }
    assert len(outputs) == 1
    assert (
        outputs.pop().strip()
        == compile_strategy(
            "(RSI(14) below 30 or stochastic %K below 20) and close > SMA(200), buy 0.5% below close",
            "take profit at the upper Keltner channel",
            "1.5 x ATR(14) below entry",
        ).to_json()
    )


def test_builder_trees_get_the_parser_checks() -> None:
    with pytest.raises(StrategyCompileError, match="the period of RSI must be between 1 and 10000, not 0"):
        compile_strategy(sv.rsi(0) > 5)
    with pytest.raises(
        StrategyCompileError, match="the fast period of MACD must be shorter than the slow one"
    ):
        compile_strategy(sv.macd(26, 12, 9) > 0)
    with pytest.raises(
        StrategyCompileError, match=r"this can never be true: the value stays within \[0, 100\]"
    ):
        compile_strategy(sv.rsi(14) > 120)
    with pytest.raises(StrategyCompileError, match="a number of candles must be at least 1"):
        compile_strategy(sv.close.rises(0))
    with pytest.raises(
        StrategyCompileError, match="sl_condition: the period of ATR must be between 1 and 10000"
    ):
        compile_strategy(sv.close > 1, None, sv.atr_target(2, 0))
    with pytest.raises(StrategyCompileError, match="the period of SMA must be between 1 and 10000"):
        compile_strategy(sv.close > 1, None, None, entry_price=sv.sma(0))


def test_from_json_checks_a_hand_edited_program() -> None:
    data = json.loads(compile_strategy("RSI(14) crosses above 30").to_json())
    data["entry"]["left"]["params"] = [0]
    with pytest.raises(StrategyCompileError, match="the period of RSI must be between 1 and 10000, not 0"):
        Strategy.from_json(json.dumps(data))


@pytest.mark.parametrize(
    "text",
    [
        "close is above highest (highest close of the previous 20 candles) of the previous 50 candles",
        "close is above highest (highest close of the last 20 candles including the current candle)"
        " of the previous 50 candles",
        "close is below lowest (lowest low of the previous 5 candles) of the previous 9 candles",
    ],
)
def test_a_range_of_a_range_is_worded_so_that_it_compiles_back_the_same(text: str) -> None:
    # The inner range keeps its own span: only the outer one is "the previous N candles".
    strategy = compile_strategy(text)
    assert strategy.wording["entry"] == text
    assert compile_strategy(strategy.wording["entry"]).entry == strategy.entry
