"""The portfolio simulates exit rules (docs/exits.md) with the single-coin rules: a portfolio of one
coin trades exactly as ``backtest`` on that coin for each exit kind, and three coins sharing two
slots give hand-checked trades, balances and equity."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from sim_helpers import DATASETS, H, bars, real

from svc_engine import backtest, simulate_portfolio
from svc_engine.data.times import ms_columns
from svc_engine.executors import SerialExecutor
from svc_engine.strategy import compile_strategy

RULE_SCHEMA = {
    "open_time": pl.Int64,
    "side": pl.Utf8,
    "limit_price": pl.Float64,
    "tp_price": pl.Float64,
    "sl_price": pl.Float64,
    "order": pl.Utf8,
    "max_candles": pl.Int64,
    "trail_pct": pl.Float64,
}


def rule_sigs(rows: list[tuple], exits: list[int] = ()) -> pl.DataFrame:  # type: ignore[assignment]
    """Signals with rule columns from (candle, limit, tp, sl, order, hold, trail %) rows, and one
    ``exit`` row per candle of ``exits``."""
    keys = ("open_time", "limit_price", "tp_price", "sl_price", "order", "max_candles", "trail_pct")
    data = [dict(zip(keys, (r[0] * H, *r[1:]), strict=True)) | {"side": "long"} for r in rows]
    data += [{"open_time": i * H, "side": "exit"} for i in exits]
    return pl.DataFrame(data, schema=RULE_SCHEMA)


EXIT_KINDS: dict[str, tuple] = {
    "exit condition, market entry": (
        "SMA(10) crosses above SMA(30), buy at market",
        "no take profit",
        "no stop loss",
        "exit when SMA(10) crosses below SMA(30)",
    ),
    "exit condition beside TP and SL, limit entry": (
        "RSI(14) crosses above 30",
        "4%",
        "3%",
        "close the position when RSI rises above 65",
    ),
    "holding time": ("RSI(14) crosses above 30, buy at market", "5%", "no stop loss", "after 24 candles"),
    "end of the day": (
        "RSI(14) crosses above 30, buy at market",
        "no take profit",
        "2%",
        "exit at the end of the day",
    ),
    "trailing stop %": ("RSI(14) crosses above 30, buy at market", "6%", "trailing stop 2%", None),
    "trailing stop x ATR": ("RSI(14) crosses above 30", "no take profit", "trailing stop 2 x ATR(14)", None),
    "trailing stop with activation": (
        "RSI(14) crosses above 30, buy at market",
        "no take profit",
        "trailing stop 3% after 1% profit",
        "after 48 candles",
    ),
    "break-even move": (
        "RSI(14) crosses above 30, buy at market",
        "5%",
        "3%",
        "move the stop to break-even after 1% profit",
    ),
    "short, exit condition and trailing stop": (
        "RSI(14) crosses below 70, sell at market",
        "no take profit",
        "trailing stop 2%",
        "exit when RSI(14) crosses below 40",
        {"market_type": "futures", "position_side": "short"},
    ),
}


#: the exit reason each kind must show on the data (its rule is exercised, not only compiled)
SHOWS = dict(
    zip(
        EXIT_KINDS,
        [
            "signal",
            "signal",
            "time",
            "signal",
            "trailing_stop",
            "trailing_stop",
            "trailing_stop",
            "breakeven",
            "signal",
        ],
        strict=True,
    )
)


@pytest.mark.skipif(not (DATASETS / "crypto").is_dir(), reason="real datasets not found")
@pytest.mark.parametrize("kind", list(EXIT_KINDS))
def test_a_portfolio_of_one_coin_trades_as_backtest_on_it(kind: str) -> None:
    entry, tp, sl, rule, *more = EXIT_KINDS[kind]
    strategy = compile_strategy(entry, tp, sl, exit_condition=rule, **(more[0] if more else {}))
    assert strategy.has_rules
    k = real("crypto/ETHUSDT-1h").slice(0, 6_000)
    kw = {"spread_pct": 0.05, "commission_pct": 0.1, "min_candles_between_signals": 1}
    one = backtest(strategy, k, "1h", chunks=3, executor=SerialExecutor(), **kw)
    port = simulate_portfolio({"ETH": k}, {"ETH": strategy.evaluate(k)}, divide=1, timeframe="1h", **kw)
    assert one.trades.height > 20 and SHOWS[kind] in set(one.trades["exit_reason"])
    assert port.trades.drop("coin").equals(one.trades)
    renamed = port.all_positions["fate"].replace("skipped_coin_busy", "skipped_busy")
    assert renamed.to_list() == one.all_positions["fate"].to_list()
    assert port.equity.equals(one.equity)
    assert port.summary["final_balance"] == one.summary["final_balance"]
    assert port.coin_results["ETH"]["final_balance"] == pytest.approx(one.summary["final_balance"], rel=1e-12)


def test_leverage_and_liquidation_under_exit_rules_match_the_single_coin_run() -> None:
    k = real("synthetic/gappy-1h")
    s = compile_strategy(
        "RSI(14) crosses above 35, buy at market",
        "no take profit",
        "trailing stop 12%",
        exit_condition="exit when RSI(14) crosses above 60 or after 30 candles",
    )
    kw = {
        "spread_pct": 0.05,
        "commission_pct": 0.05,
        "market_type": "futures",
        "leverage": 10,
        "sizing": "risk",
        "risk_pct": 2,
        "min_candles_between_signals": 1,
        "timeframe": "1h",
    }
    one = backtest(s, k, **kw)
    port = simulate_portfolio({"X": k}, {"X": s.evaluate(k)}, divide=1, **kw)
    money = ["pnl", "balance"]
    assert port.trades.drop("coin", *money).equals(one.trades.drop(money))
    # the portfolio keeps cash and open stakes apart, so a risk-sized stake may differ in the last bit
    for col in money:
        np.testing.assert_allclose(port.trades[col].to_numpy(), one.trades[col].to_numpy(), rtol=1e-12)
    assert {"liquidation", "signal", "time", "trailing_stop"} <= set(one.trades["exit_reason"])


# Three coins, two slots. A: market entry at 0 fills at the open of 1 (10), its exit condition fires
# at the close of 2, so it leaves at the open of 3 (11): +10%. C: limit 10 at 0 fills at the open of 1
# (10), 5% trailing stop: the highs 10.3 then 11 lift it to 9.785 for candle 2 and 10.45 for candle 3,
# whose low 10.4 hits it: +4.5%. B: market entry at 2 fills at the open of 3 (20) after both exits
# (exits come before fills at one time), held one candle: leaves at the open of 4 (20.4), +2%.
A = bars(
    [
        (10, 10, 10, 10),
        (10, 10.4, 9.9, 10.2),
        (10.2, 10.6, 10.1, 10.5),
        (11, 11.2, 10.9, 11),
        (11, 11.1, 10.9, 11),
    ]
)
B = bars(
    [
        (20, 20, 20, 20),
        (20, 20.2, 19.9, 20),
        (20, 20.2, 19.8, 20),
        (20, 20.5, 19.9, 20.4),
        (20.4, 21, 20.3, 20.8),
    ]
)
C = bars(
    [
        (10, 10, 10, 10),
        (10, 10.3, 9.9, 10.2),
        (10.5, 11, 10.4, 10.9),
        (10.9, 11.2, 10.4, 10.6),
        (10.6, 10.7, 10.5, 10.6),
    ]
)
SIGNALS = {
    "A": rule_sigs([(0, None, np.inf, -np.inf, "market", None, None)], exits=[2]),
    "B": rule_sigs([(2, None, np.inf, -np.inf, "market", 1, None)]),
    "C": rule_sigs([(0, 10.0, np.inf, 9.5, "limit", None, 5.0)]),
}
FREE = {"commission_pct": 0.0, "spread_pct": 0.0, "min_candles_between_signals": 1, "timeframe": "1h"}


def rows(trades: pl.DataFrame) -> list[tuple]:
    cols = ("coin", "fill_time", "exit_time", "entry_price", "exit_price", "exit_reason")
    return [
        (c, f // H, x // H, round(e, 10), round(p, 10), why)
        for c, f, x, e, p, why in ms_columns(trades).select(cols).iter_rows()
    ]


def test_three_coins_in_two_slots_by_hand() -> None:
    r = simulate_portfolio({"A": A, "B": B, "C": C}, SIGNALS, coins=["A", "B", "C"], divide=2, **FREE)
    assert rows(r.trades) == [
        ("A", 1, 3, 10.0, 11.0, "signal"),
        ("C", 1, 3, 10.0, 10.45, "trailing_stop"),
        ("B", 3, 4, 20.0, 20.4, "time"),
    ]
    # stakes: A 100/2 = 50, C min(100/2, 50 cash) = 50; at 3 both leave (55 + 52.25 = 107.25), B 107.25/2
    assert r.trades["pnl"].to_list() == pytest.approx([5.0, 2.25, 1.0725], rel=1e-12)
    assert r.trades["balance"].to_list() == pytest.approx([105.0, 107.25, 108.3225], rel=1e-12)
    # equity: at 1 both marked at +2%; at 2 A at 10.5 (52.5) and C at 10.9 (54.5); at 3 B marked at 20.4
    np.testing.assert_allclose(r.equity["equity"].to_numpy(), [100, 102, 107, 108.3225, 108.3225], rtol=1e-12)
    assert r.summary["final_balance"] == pytest.approx(108.3225, rel=1e-12)
    assert r.summary["max_concurrent_positions"] == 2
    # no take-profit anywhere and no stop on A and B: their distances are not counted in the averages
    assert (r.summary["avg_target_pct"], r.summary["avg_stop_loss_pct"]) == (None, pytest.approx(5.0))


def test_one_slot_cancels_the_second_fill_and_frees_at_the_exit_open() -> None:
    r = simulate_portfolio({"A": A, "B": B, "C": C}, SIGNALS, coins=["A", "B", "C"], divide=1, **FREE)
    assert r.all_positions["fate"].to_list() == ["traded", "traded", "skipped_no_slot"]
    assert rows(r.trades) == [("A", 1, 3, 10.0, 11.0, "signal"), ("B", 3, 4, 20.0, 20.4, "time")]
    # A's exit at the open of 3 frees the slot for B's fill at that open: 100 -> 110 -> 112.2
    assert r.summary["final_balance"] == pytest.approx(112.2, rel=1e-12)
    rec = {row["divide"]: row["final_balance"] for row in r.recommended_divide["candidates"]}
    # divide 3: A and C a third each (+10/3, +4.5/3), then B a third of the 104.83 after both exits
    third = (100 + 10 / 3 + 4.5 / 3) * (1 + 0.02 / 3)
    assert rec == pytest.approx({1: 112.2, 2: 108.3225, 3: third}, rel=1e-12)
