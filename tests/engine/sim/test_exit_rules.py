"""Exit rules (docs/exits.md): exit conditions and holding times close at the next candle's open
unless that open gaps through a level; stops still come first inside a candle; market entries fill
at the next open; a strategy without TP or SL; and the backtesting.py 0.6.6 SMA(10)/SMA(30) proof."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from svc_engine.data.times import ms_columns
from svc_engine.sim import nb, simulate
from svc_engine.strategy import StrategyCompileError, compile_strategy

H = 3_600_000


def candles(rows: list[tuple[float, float, float, float]]) -> pl.DataFrame:
    o, h, lo, c = ([float(v) for v in x] for x in zip(*rows, strict=True))
    return pl.DataFrame(
        {
            "open_time": [i * H for i in range(len(rows))],
            "open": o,
            "high": h,
            "low": lo,
            "close": c,
            "volume": [1.0] * len(rows),
        }
    )


def signals(
    entries: list[tuple[int, float | None, float, float]],
    exits: list[int],
    order: str = "limit",
    hold: int | None = None,
) -> pl.DataFrame:
    rows = [
        {
            "open_time": i * H,
            "side": "long",
            "limit_price": L,
            "tp_price": tp,
            "sl_price": sl,
            "order": order,
            "max_candles": hold,
        }
        for i, L, tp, sl in entries
    ]
    rows += [
        {
            "open_time": i * H,
            "side": "exit",
            "limit_price": None,
            "tp_price": None,
            "sl_price": None,
            "order": None,
            "max_candles": None,
        }
        for i in exits
    ]
    return pl.DataFrame(
        rows,
        schema={
            "open_time": pl.Int64,
            "side": pl.Utf8,
            "limit_price": pl.Float64,
            "tp_price": pl.Float64,
            "sl_price": pl.Float64,
            "order": pl.Utf8,
            "max_candles": pl.Int64,
        },
    )


FREE = {"commission_pct": 0, "spread_pct": 0, "min_candles_between_signals": 1, "timeframe": "1h"}
K = candles(
    [
        (10, 10.5, 9.5, 10),
        (10, 10.5, 9.8, 10.2),
        (10.2, 10.8, 10.0, 10.6),
        (10.7, 11.0, 10.5, 10.9),
        (10.8, 11.2, 10.6, 11.0),
        (11.0, 11.1, 10.7, 10.8),
    ]
)


def trades(k: pl.DataFrame, sig: pl.DataFrame) -> list[tuple[int, int, float, float, str]]:
    t = ms_columns(simulate(k, sig, **FREE).trades)
    return [
        (r["fill_time"] // H, r["exit_time"] // H, r["entry_price"], r["exit_price"], r["exit_reason"])
        for r in t.iter_rows(named=True)
    ]


def test_market_entry_fills_at_the_next_open_and_an_exit_condition_at_the_open_after_it() -> None:
    sig = signals([(0, None, np.inf, -np.inf)], exits=[2], order="market")
    # signal at 0 -> open of 1 (10.0); exit condition at the close of 2 -> open of 3 (10.7)
    assert trades(K, sig) == [(1, 3, 10.0, 10.7, "signal")]
    # an exit row before the fill, or on the signal candle, does nothing
    early = signals([(0, None, np.inf, -np.inf)], exits=[0], order="market")
    assert trades(K, early) == [(1, 5, 10.0, 10.8, "end")]


def test_a_holding_time_closes_at_the_open_after_its_last_candle() -> None:
    sig = signals([(0, None, np.inf, -np.inf)], exits=[], order="market", hold=2)
    assert trades(K, sig) == [(1, 3, 10.0, 10.7, "time")]  # held on candles 1 and 2


def test_stops_and_take_profits_still_come_first_and_gaps_name_the_exit() -> None:
    # take profit 10.75 is reached inside candle 2: tp there, although the exit condition fires at its close
    sig = signals([(0, None, 10.75, 9.0)], exits=[2], order="market")
    assert trades(K, sig) == [(1, 2, 10.0, 10.75, "tp")]
    # exit condition at 2, take profit 10.8 above candle 2's high: the open of 3 (10.9) gaps through it,
    # so the exit at that open is named tp_gap (same price)
    gap = candles(
        [
            (10, 10.2, 9.8, 10),
            (10, 10.3, 9.9, 10.1),
            (10.1, 10.4, 10.0, 10.3),
            (10.9, 11.0, 10.8, 10.95),
            (10.9, 11, 10.8, 10.9),
        ]
    )
    near, far = (signals([(0, None, tp, 9.0)], exits=[2], order="market") for tp in (10.8, 11.5))
    assert trades(gap, near) == [(1, 3, 10.0, 10.9, "tp_gap")]
    assert trades(gap, far) == [(1, 3, 10.0, 10.9, "signal")]
    # the stop inside the fill candle wins over everything (long: low 9.8 <= 9.9)
    sig = signals([(0, None, np.inf, 9.9)], exits=[1], order="market")
    assert trades(K, sig) == [(1, 1, 10.0, 9.9, "sl")]


def test_limit_entries_keep_their_rules_and_signals_without_rules_are_untouched() -> None:
    sig = signals([(1, 10.1, np.inf, -np.inf)], exits=[3], order="limit")
    assert trades(K, sig) == [(2, 4, 10.1, 10.8, "signal")]  # low 10.0 at 2 reaches 10.1: fill at 10.1
    plain = signals([(1, 10.1, 11.0, 9.0)], exits=[]).drop("order", "max_candles")
    assert trades(K, plain) == [(2, 3, 10.1, 11.0, "tp")]
    # without the rule columns an infinite level stays invalid (engine-semantics section 2)
    bad = signals([(1, 10.1, np.inf, 9.0)], exits=[]).drop("order", "max_candles")
    assert simulate(K, bad, **FREE).all_positions["fate"].to_list() == ["skipped_invalid"]


def test_the_portfolio_and_intrabar_detail_simulate_exit_rules() -> None:
    from svc_engine.sim import simulate_portfolio

    sig = signals([(0, None, np.inf, -np.inf)], exits=[2], order="market")
    port = ms_columns(simulate_portfolio({"X": K}, {"X": sig}, coins=["X"], **FREE).trades)
    got = [
        (r["fill_time"] // H, r["exit_time"] // H, r["entry_price"], r["exit_price"], r["exit_reason"])
        for r in port.iter_rows(named=True)
    ]
    assert got == trades(K, sig) == [(1, 3, 10.0, 10.7, "signal")]
    half = pl.concat([K, K.with_columns(pl.col("open_time") + H // 2)]).sort("open_time")
    detail = simulate(K, sig, intrabar="detail", detail_klines=half, **FREE).trades
    assert detail.equals(simulate(K, sig, **FREE).trades)  # more in tests/engine/sim/test_detail.py


def test_exit_rules_in_words() -> None:
    s = compile_strategy(
        "SMA(10) crosses above SMA(30), buy at market",
        "no take profit",
        "no stop loss",
        exit_condition="sell when SMA(10) crosses below SMA(30)",
    )
    assert s.describe() == (
        "long when SMA(10) crosses above SMA(30), buy at market; no take profit; no stop loss; "
        "exit when SMA(10) crosses below SMA(30)"
    )
    w = s.wording
    again = compile_strategy(w["entry"], w["tp"], w["sl"], exit_condition=w["exit"])
    assert again == s and type(s).from_json(s.to_json()) == s
    rule = "close the position when RSI rises above 70 or after 24 candles"
    t = compile_strategy("RSI(14) is below 30", "3%", "2%", exit_condition=rule)
    assert (t.hold, t.wording["exit"]) == (24, "exit when RSI(14) crosses above 70 or after 24 candles")
    timed = compile_strategy("close above 1", exit_condition="after 12 candles")
    assert timed.wording["exit"] == "exit after 12 candles"
    assert "exit" not in compile_strategy("close above 1").to_data()  # stored programs keep their bytes
    for text, why in [
        ("trailing stop 2%", "a trailing stop is a stop loss: give it as the stop"),
        ("move the stop to break-even", "say when the stop moves to entry"),
        ("exit when", "expected a condition after 'exit when'"),
    ]:
        with pytest.raises(StrategyCompileError, match=why):
            compile_strategy("close above 1", exit_condition=text)
    with pytest.raises(StrategyCompileError, match="risk reward needs a stop loss"):
        compile_strategy("close above 1", "risk reward 2", "no stop loss")


def test_reasons() -> None:
    assert nb.REASONS[nb.R_SIGNAL] == "signal" and nb.REASONS[nb.R_TIME] == "time"


def test_sma_crossover_equals_backtesting_py(shared_datasets: Path) -> None:
    backtesting = pytest.importorskip("backtesting")
    import pandas as pd
    from backtesting import Strategy as BtStrategy
    from backtesting.lib import FractionalBacktest, crossover
    from backtesting.test import SMA

    assert backtesting.__version__ == "0.6.6"
    k = pl.read_parquet(shared_datasets / "crypto" / "BTCUSDT-1h.parquet")
    df = k.to_pandas().set_index(pd.to_datetime(k["open_time"].to_numpy(), unit="ms"))
    df = df.rename(columns=str.capitalize)[["Open", "High", "Low", "Close", "Volume"]]

    class SmaCross(BtStrategy):
        def init(self) -> None:
            self.fast = self.I(SMA, self.data.Close, 10)
            self.slow = self.I(SMA, self.data.Close, 30)

        def next(self) -> None:
            if crossover(self.fast, self.slow):
                self.buy()
            elif crossover(self.slow, self.fast):
                self.position.close()

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = FractionalBacktest(df, SmaCross, cash=1_000_000, commission=0, finalize_trades=True).run()
    strategy = compile_strategy(
        "SMA(10) crosses above SMA(30), buy at market",
        "no take profit",
        "no stop loss",
        exit_condition="exit when SMA(10) crosses below SMA(30)",
    )
    ours = simulate(k, strategy.evaluate(k), symbol="BTCUSDT", initial_balance=1_000_000, **FREE)
    bt = theirs._trades
    t = ms_columns(ours.trades)
    assert t.height == len(bt) == 1465
    times = lambda col: bt[col].astype("datetime64[ms]").astype("int64").to_numpy()  # noqa: E731
    assert np.array_equal(t["fill_time"].to_numpy(), times("EntryTime"))
    assert np.array_equal(t["exit_time"].to_numpy(), times("ExitTime"))
    np.testing.assert_allclose(t["entry_price"].to_numpy(), bt["EntryPrice"].to_numpy(), rtol=1e-12)
    # Every trade but the last exits identically; backtesting.py closes the trade still open at the end
    # (finalize_trades=True) at the last candle's open, we at its close (reason 'end', engine-semantics 4).
    np.testing.assert_allclose(t["exit_price"].to_numpy()[:-1], bt["ExitPrice"].to_numpy()[:-1], rtol=1e-12)
    last = k.row(-1, named=True)
    assert (t["exit_price"][-1], t["exit_reason"][-1]) == (last["close"], "end")
    assert bt["ExitPrice"].iloc[-1] == last["open"]
    # Total return: the same once the last exit is at the same price (fractional units of 1e-8).
    final = ours.summary["final_balance"] * last["open"] / last["close"]
    np.testing.assert_allclose(final / 1_000_000 * 100 - 100, theirs["Return [%]"], rtol=1e-6)


def test_chunked_backtest_of_exit_rules_equals_one_piece(shared_datasets: Path) -> None:
    from svc_engine.executors import SerialExecutor
    from svc_engine.sim import backtest

    k = pl.read_parquet(shared_datasets / "crypto" / "ETHUSDT-1h.parquet")
    rule = "exit when RSI(14) crosses above 65 or after 48 candles"
    entry = "RSI(14) crosses above 30, buy at market"
    strategy = compile_strategy(entry, "5%", "no stop loss", exit_condition=rule)
    kw = {"commission_pct": 0.1, "spread_pct": 0}
    whole = simulate(k, strategy.evaluate(k), timeframe="1h", **kw)
    chunked = backtest(strategy, k, "1h", chunks=5, executor=SerialExecutor(), **kw)
    assert chunked.trades.equals(whole.trades) and whole.trades.height > 10
    assert set(whole.trades["exit_reason"]) >= {"signal", "time", "tp"}


def test_trailing_stops_and_break_even_moves_by_hand() -> None:
    o = np.array([10, 10, 10.5, 11.2, 11.0, 10.5])
    h = np.array([10.2, 10.3, 11.0, 11.5, 11.1, 10.6])
    lo = np.array([9.9, 9.9, 10.4, 11.0, 10.7, 10.3])
    c = np.array([10, 10.2, 10.9, 11.1, 10.8, 10.4])
    none = np.zeros(0, np.bool_)

    def run(moves: list[float]) -> tuple[int, float, str]:
        args = (o, h, lo, c, 1, nb.LONG, 10.0, True, np.inf, 9.0, 1.0, 5, none, 0, np.array(moves))
        j, x, reason = nb.find_exit_rules_nb(*args)
        return int(j), round(float(x), 10), nb.REASONS[reason]

    nan = np.nan
    # 5% trailing: the highs 10.3, 11.0, 11.5 lift the stop to 10.925 for candle 4, whose low 10.7 hits it
    assert run([0.05, nan, nan, nan]) == (4, 10.925, "trailing_stop")
    # break-even after 5%: armed by candle 2's high 11.0; the stop at 10.0 is never reached: end at 10.4
    assert run([nan, nan, nan, 0.05]) == (5, 10.4, "end")
    # 0.3 behind the high once 12% up (11.5 at candle 3): candle 4 opens at 11.0 below the 11.2 stop: a gap
    assert run([nan, 0.3, 0.12, nan]) == (4, 11.0, "trailing_stop")
    # the candle's own high never moves its own stop: 2% trailing from 11.5 is 11.27, candle 3's low 11.0
    # does not see it (the 10.78 stop of candle 2's high 11.0 applies); candle 4 does
    assert run([0.02, nan, nan, nan]) == (4, 11.0, "trailing_stop")


def test_trailing_and_break_even_in_words_run_through_the_engine(shared_datasets: Path) -> None:
    k = pl.read_parquet(shared_datasets / "crypto" / "ETHUSDT-1h.parquet")
    trail, move = "trailing stop 3% after 1% profit", "move the stop to break-even after 0.5% profit"
    s = compile_strategy("RSI crosses above 30, buy at market", "no take profit", trail, exit_condition=move)
    assert s.describe() == (
        "long when RSI(14) crosses above 30, buy at market; no take profit; trailing stop 3% after 1% "
        "profit; move the stop to entry after 0.5% profit"
    )
    reasons = set(simulate(k, s.evaluate(k), **FREE).trades["exit_reason"])
    assert {"trailing_stop", "breakeven"} <= reasons
    atr = compile_strategy("close above 1", None, "trailing stop 2 x ATR(14)")
    assert atr.wording["sl"] == "trailing stop 2 x ATR(14)" and atr.candle_count == 15


def test_the_research_sweep_refuses_what_it_cannot_run() -> None:
    from svc_engine.research.sweeper import strategy_signals

    empty = tuple(np.zeros(0, np.int64) for _ in range(4))
    for strategy in (
        compile_strategy("close above 1, buy at market"),
        compile_strategy("close above 1", None, "trailing stop 2%"),
    ):
        with pytest.raises(ValueError, match="exit rules need the signal frame"):  # sweep() routes them
            strategy_signals(empty, 0, 1, strategy)


def test_short_side_mirrors_every_rule() -> None:
    # the long series mirrored around 20: prices 20 - p, highs and lows swapped
    o = 20 - np.array([10, 10, 10.5, 11.2, 11.0, 10.5])
    h = 20 - np.array([9.9, 9.9, 10.4, 11.0, 10.7, 10.3])
    lo = 20 - np.array([10.2, 10.3, 11.0, 11.5, 11.1, 10.6])
    c = 20 - np.array([10, 10.2, 10.9, 11.1, 10.8, 10.4])
    none = np.zeros(0, np.bool_)
    nan = np.nan

    def run(moves: list[float], flag: np.ndarray = none, hold: int = 0) -> tuple[int, float, str]:
        args = (o, h, lo, c, 1, nb.SHORT, 10.0, True, -np.inf, 11.0, 1.0, 5, flag, hold, np.array(moves))
        j, x, reason = nb.find_exit_rules_nb(*args)
        return int(j), round(float(x), 10), nb.REASONS[reason]

    # 5% trailing above the lowest low (8.5 at candle 3): 8.925; candle 4 opens at 9.0 above it: a gap
    assert run([0.05, nan, nan, nan]) == (4, 9.0, "trailing_stop")
    assert run([0.07, nan, nan, nan]) == (4, 9.095, "trailing_stop")  # 9.095 inside candle 4 (high 9.3)
    assert run([nan, 0.3, 0.12, nan]) == (4, 9.0, "trailing_stop")  # opens at 9.0 above the 8.8 stop
    flag = np.array([False, False, True, False, False, False])
    assert run([nan] * 4, flag) == (3, 8.8, "signal")
    assert run([nan] * 4, hold=1) == (2, 9.5, "time")


def test_exit_at_the_end_of_the_day(shared_datasets: Path) -> None:
    k = pl.read_parquet(shared_datasets / "crypto" / "ETHUSDT-1h.parquet")
    s = compile_strategy(
        "RSI crosses above 30, buy at market",
        "no take profit",
        "no stop loss",
        exit_condition="close the position at the end of the day",
    )
    assert s.wording["exit"] == "exit when the day ends"
    t = ms_columns(simulate(k, s.evaluate(k), **FREE).trades)
    # the 23:00 candle closes the UTC day: the trade leaves at the next open, 00:00
    assert t.height > 5 and set(t["exit_reason"]) <= {"signal", "end"}
    done = t.filter(pl.col("exit_reason") == "signal")
    assert (done["exit_time"] % 86_400_000 == 0).all()
    opens = dict(zip(k["open_time"].to_list(), k["open"].to_list(), strict=True))
    assert done["exit_price"].to_list() == [opens[x] for x in done["exit_time"].to_list()]
